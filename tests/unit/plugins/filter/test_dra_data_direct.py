# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The path of the Data Direct refusal, filter to filter as roles/preflight and roles/sriov_networks/tasks/data_direct.yml
chain them: rdma_facts of a fake Data Direct node -> gpufabric.roce._rail_data_direct (the node's preflight_data_direct) ->
gpufabric.roce._nccl_collect (the controller's raw read of every node) -> gpufabric.roce._dra_data_direct."""

import os

from fake_hostvars import FakeHostVars
from test_data_direct import DD_PATH, Kernel, build

from ansible_collections.gpufabric.roce.plugins.filter.k8s_render import FilterModule as K8sFilters
from ansible_collections.gpufabric.roce.plugins.filter.nccl import FilterModule as NcclFilters
from ansible_collections.gpufabric.roce.plugins.filter.topology import FilterModule as TopologyFilters
from ansible_collections.gpufabric.roce.plugins.module_utils._host import rdma_facts as rf

rail_data_direct = TopologyFilters().filters()['_rail_data_direct']
collect = NcclFilters().filters()['_nccl_collect']
check = K8sFilters().filters()['_dra_data_direct']
RAILS = [{'name': 'rail0', 'pf': 'ens1np0'}, {'name': 'rail1', 'pf': 'ens9np0'}]


def _preflight(tmp_path, pairing, **tree):
    root = build(tmp_path, **tree)
    facts = rf.gather(os.path.join(root, 'sys'), os.path.join(root, 'proc'), netns_mode_getter=None, data_direct_pairing=pairing)
    # as roles/preflight sets it: the rails, a roce_rail_overrides pf winning
    return rail_data_direct(facts, RAILS, {'rail1': {'pf': 'ens2np0'}})


def test_a_data_direct_node_stops_gpu_alignment_and_a_plain_one_passes(tmp_path):
    gb = _preflight(tmp_path / 'gb', Kernel({'mlx5_0': DD_PATH, 'mlx5_1': None}))
    plain = _preflight(tmp_path / 'plain', Kernel({}), data_direct=False)
    assert [r['pf'] for r in gb] == ['ens1np0'] and plain == []
    hosts = ['gb300-1', 'h100-1', 'new-1']
    hv = FakeHostVars({'gb300-1': {'preflight_data_direct': gb}, 'h100-1': {'preflight_data_direct': plain}, 'new-1': {}}, {})
    got = check(collect(hv, dict(zip(hosts, hosts)), 'preflight_data_direct'), hosts)
    assert got['refused'] == ['gb300-1'] and got['unchecked'] == ['new-1']
    assert '\n  - gb300-1: sriov_networks_dra_align_gpu=true: rail NIC mlx5_0 (PF ens1np0, 0000:03:00.0 on pcieRoot pci0000:00) ' \
           'is ConnectX-8 Data Direct: its DMA goes through 0000:82:00.0 on pcieRoot pci0000:80' in got['message']
    assert 'h100-1' not in got['message'] and 'new-1' not in got['message']
