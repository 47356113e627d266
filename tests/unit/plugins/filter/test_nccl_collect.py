# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufabric.roce._nccl_collect: every node's NCCL settings, read raw, templated only where a template is."""

import pytest
from ansible.errors import AnsibleFilterError
from fake_hostvars import FakeHostVars

from ansible_collections.gpufabric.roce.plugins.filter.nccl import FilterModule

collect = FilterModule().filters()['_nccl_collect']
ENV = {'NCCL_IB_HCA': '=mlx5_0:1', 'NCCL_IB_GID_INDEX': '3'}


def test_every_host_with_settings_keyed_by_node_name_one_raw_read_each():
    hv = FakeHostVars({'n1': {'host_network_nccl_env': ENV, 'roce_pf': 'x'}, 'n2': {'roce_pf': 'y'},
                       'n3': {'host_network_nccl_env': '{{ env_of_rack }}'}}, {'{{ env_of_rack }}': {'NCCL_IB_HCA': '=mlx5_1:1'}})
    got = collect(hv, {'n1': 'gpu-a1', 'n2': 'gpu-a2', 'n3': 'gpu-a3'})
    assert got == {'gpu-a1': ENV, 'gpu-a3': {'NCCL_IB_HCA': '=mlx5_1:1'}}
    assert hv.raw == ['n1', 'n2', 'n3'] and hv.rendered == [('n3', 'host_network_nccl_env')]
    assert collect(hv, {}) == {}
    assert collect({'n1': {'other': ENV}}, {'n1': 'gpu-a1'}, 'other') == {'gpu-a1': ENV}


def test_a_template_that_cannot_be_rendered_names_the_host_and_the_variable():
    hv = FakeHostVars({'n1': {'host_network_nccl_env': '{{ undefined_thing }}'}},
                      {'{{ undefined_thing }}': ValueError("'undefined_thing' is undefined")})
    with pytest.raises(AnsibleFilterError) as err:
        collect(hv, {'n1': 'gpu-a1'})
    assert str(err.value).startswith("n1: host_network_nccl_env could not be templated: 'undefined_thing' is undefined")
