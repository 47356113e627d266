# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-ins for the components that write status on a real GPU cluster (see lab/k8s/README.md).

Run them with `python -m standins ...` from lab/k8s (controlplane.py start does it for you).
"""
