# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in for Ansible's HostVars, for the filters that read every node raw first (plugin_utils/_raw_vars.py)."""


class FakeHostVars(dict):
    """``raw_get(host)`` gives a host's untemplated variables (recorded in ``raw``); ``[host][key]`` renders one (recorded
    in ``rendered``) through ``renders``: a raw value to its rendered value, or to an exception to raise."""

    def __init__(self, hosts, renders):
        super().__init__(hosts)
        self.renders, self.rendered, self.raw = renders, [], []

    def raw_get(self, host):
        self.raw.append(host)
        return dict.__getitem__(self, host)

    def __getitem__(self, host):
        outer = self

        class Rendering(dict):
            def __getitem__(self, key):
                outer.rendered.append((host, key))
                value = outer.renders[dict.__getitem__(self, key)]
                if isinstance(value, Exception):
                    raise value
                return value

        return Rendering(dict.__getitem__(outer, host))
