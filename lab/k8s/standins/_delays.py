# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in's delay, widened by a test for one step: the number of seconds in a file of the control plane's state dir
while it exists (standins-sync-delay for the SR-IOV operator's sync, standins-reboot-delay for the NIC configuration
daemon's reboot)."""


def seconds(path, default):
    """The float in ``path`` (a pathlib.Path or None), else ``default`` (no file, or not a number)."""
    if path is not None:
        try:
            return float(path.read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            pass
    return default
