# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters gpu_nic_affinity (judge a node's rail NICs against its GPU<->NIC topology facts) and rail_data_direct (the
rail NICs that may be ConnectX-8 Data Direct); the logic is rail_affinity and rail_data_direct in
module_utils/_common/pci_topology.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import plain
from ansible_collections.gpufabric.roce.plugins.module_utils._common.pci_topology import rail_affinity, rail_data_direct


def _pf_names(pfs, overrides, filter_name):
    """PF names from names or rails (``{name, pf}``, a per-node override's ``pf`` winning)."""
    names = []
    for item in pfs:
        name = item
        if isinstance(item, dict):
            override = overrides.get(item.get('name')) if isinstance(overrides, dict) else None
            name = (override or {}).get('pf') or item.get('pf')
        if not isinstance(name, str) or not name:
            raise AnsibleFilterError('%s: pfs=%r must be PF netdev names or rails with a pf' % (filter_name, pfs))
        names.append(name)
    return names


def _pfs(pfs, overrides, name):
    pfs = plain(pfs)
    if isinstance(pfs, (str, dict)):
        pfs = [pfs]
    if not isinstance(pfs, list):
        raise AnsibleFilterError('%s: pfs=%r must be a list of PF netdev names' % (name, pfs))
    return _pf_names(pfs, plain(overrides) or {}, name)


def gpu_nic_affinity(facts, pfs, overrides=None):
    return rail_affinity(plain(facts) or {}, _pfs(pfs, overrides, 'gpu_nic_affinity'))


def rail_data_direct_filter(facts, pfs, overrides=None):
    return rail_data_direct(plain(facts) or {}, _pfs(pfs, overrides, 'rail_data_direct'))


class FilterModule(object):
    def filters(self):
        return {'gpu_nic_affinity': gpu_nic_affinity, '_rail_data_direct': rail_data_direct_filter}
