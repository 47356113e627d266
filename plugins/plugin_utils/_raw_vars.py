# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every node's variables as the controller's checks and renderers read them: raw first, templated only where needed.

The filters and actions that read every node (the fabric plan, the SR-IOV render) would otherwise go through
``hostvars[host]``, which builds the host's variables again and a template engine for them for every value read.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import plain
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_args as ra


class _RawFirst(object):
    """One node's variables, read once from Ansible's raw host variables.

    ``hostvars[host]`` builds the host's variables again and a template engine for them, and templates every value
    read; at 1,000 nodes that is most of the plan's time, yet the roce_* values are nearly always plain inventory data.
    A value without a template anywhere in it is used as it is (as plain data); only a value that holds one goes
    through ``hostvars[host]`` to be rendered in the host's context, and comes back as plain data: a lazy container
    carries the host's whole variable context, which ArgumentSpecValidator's deepcopy (a rail's vfs) would then copy
    once per node and rail."""

    def __init__(self, hostvars, host, raw, cache):
        self._hostvars, self._host, self._raw, self._cache = hostvars, host, raw, cache

    def __getitem__(self, key):
        value = self._raw[key]
        if self._cache.has_template(value):
            return plain(self._hostvars[self._host][key])
        return plain(value)


class _HostVarsView(object):
    def __init__(self, hostvars):
        self._hostvars = hostvars
        self._cache = {}
        # A node's lists and mappings (roce_rails, node selectors) are mostly group_vars' own objects, shared by every
        # node that inherits them: KeyCache judges each once, by identity.
        self._keys = ra.KeyCache()

    def __getitem__(self, host):
        if host not in self._cache:
            raw = self._hostvars.raw_get(host)
            self._cache[host] = _RawFirst(self._hostvars, host, raw, self._keys) if isinstance(raw, dict) else {}
        return self._cache[host]

    def __contains__(self, host):
        return host in self._hostvars

    def keys(self):
        return self._hostvars.keys()


def view(hostvars):
    # Ansible's HostVars has raw_get; plain mappings (tests, a fabric table) are used as they are.
    return _HostVarsView(hostvars) if hasattr(hostvars, 'raw_get') else hostvars


def inputs(rows, host, keys):
    """The ``keys`` a host sets, read through ``view`` (a template is rendered, a plain value is not). A value that cannot be
    templated (an undefined variable inside it) raises ValueError naming the host and the variable."""
    row, out = rows[host], {}
    for key in keys:
        try:
            out[key] = row[key]
        except KeyError:
            continue
        except Exception as exc:  # undefined variables inside a templated value
            raise ValueError("%s: %s could not be templated: %s" % (host, key, exc)) from exc
    return out
