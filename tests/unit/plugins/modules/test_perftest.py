# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module end to end through AnsibleModule: argument_spec constraints, check mode, a run whose
``run_command`` replays a real capture, and failures."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import json
import os

import pytest

from ansible.module_utils import basic
from ansible.module_utils.common import warnings as ansible_warnings

try:
    from ansible.module_utils import _internal as module_utils_internal
except ImportError:  # ansible-core < 2.19
    module_utils_internal = None
from ansible_collections.gpufabric.roce.plugins.modules import perftest

FIXTURES = os.path.join(os.path.dirname(__file__), '..', '..', 'fixtures', 'perftest')
SYSFS = os.path.join(FIXTURES, 'sysfs')

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core < 2.19
    import contextlib

    from ansible.module_utils.common.text.converters import to_bytes

    @contextlib.contextmanager
    def patch_module_args(args):
        old = basic._ANSIBLE_ARGS
        basic._ANSIBLE_ARGS = to_bytes(json.dumps({'ANSIBLE_MODULE_ARGS': args}))
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = old


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def run_module(monkeypatch, capsys, args, case=None, bins=True):
    calls = []

    def fake_run_command(self, cmd, *a, **kw):
        calls.append(cmd)
        return int(fixture(case + '.rc')), fixture(case + '.stdout'), fixture(case + '.stderr')

    def fake_bin(self, name, required=False, opt_dirs=None):
        return '/usr/bin/' + name if bins else None

    monkeypatch.setattr(basic.AnsibleModule, 'run_command', fake_run_command)
    monkeypatch.setattr(basic.AnsibleModule, 'get_bin_path', fake_bin)
    monkeypatch.setattr(perftest.platform, 'node', lambda: 'node2')
    # module warnings are process-global: start each run empty (a dict in ansible-core 2.19, a list before)
    monkeypatch.setattr(ansible_warnings, '_global_warnings', type(ansible_warnings._global_warnings)())
    if hasattr(module_utils_internal, 'is_controller'):
        # other unit tests load controller code, which makes warn() display instead of record (2.19+)
        monkeypatch.setattr(module_utils_internal, 'is_controller', False)
    with patch_module_args(args), pytest.raises(SystemExit) as exc:
        perftest.main()
    out = json.loads(capsys.readouterr().out)
    return exc.value.code, out, calls


CLIENT = dict(test='ib_write_bw', role='client', server='10.255.0.1', device='rxe0', gid_index='auto',
              netdev='va.100', size=4096, duration=2, timeout=30, sysfs_root=SYSFS)


def test_client_success(monkeypatch, capsys):
    code, out, calls = run_module(monkeypatch, capsys, CLIENT, 'write_bw.client')
    assert code == 0
    assert calls == [['/usr/bin/timeout', '--kill-after=5', '30', '/usr/bin/ib_write_bw', '-d', 'rxe0', '-i', '1',
                      '-x', '2', '-s', '4096', '-D', '2', '10.255.0.1']]
    assert out['changed'] is False
    assert out['gid_index'] == 2
    assert out['metrics']['bw_average_mib_s'] == 46.86
    assert out['metrics']['iterations'] == 24000
    assert out['cmd'] == calls[0]
    assert out['stdout'] == fixture('write_bw.client.stdout')


def test_latency_server_success(monkeypatch, capsys):
    args = dict(test='ib_write_lat', role='server', device='rxe0', gid_index=2, iterations=200, size=64, sysfs_root=SYSFS)
    code, out, calls = run_module(monkeypatch, capsys, args, 'write_lat.server')
    assert code == 0
    assert calls[0][3:] == ['/usr/bin/ib_write_lat', '-d', 'rxe0', '-i', '1', '-x', '2', '-s', '64', '-n', '200']
    assert out['metrics']['t_typical_us'] == 3999.19
    assert out['metrics']['t_p99_9_us'] == 6040.00


def test_client_requires_server(monkeypatch, capsys):
    args = dict(CLIENT)
    del args['server']
    code, out, calls = run_module(monkeypatch, capsys, args, 'write_bw.client')
    assert code == 1
    assert out['msg'] == 'role is client but all of the following are missing: server'
    assert calls == []


def test_duration_and_iterations_are_exclusive(monkeypatch, capsys):
    code, out, calls = run_module(monkeypatch, capsys, dict(CLIENT, iterations=100), 'write_bw.client')
    assert code == 1
    assert out['msg'] == 'parameters are mutually exclusive: duration|iterations'
    assert calls == []


def test_bad_gid_index(monkeypatch, capsys):
    code, out, calls = run_module(monkeypatch, capsys, dict(CLIENT, gid_index='two'), 'write_bw.client')
    assert code == 1
    assert out['msg'] == ('node2: gid_index="two": must be a GID table index (0, 1, ...) or "auto". '
                          'Fix: set gid_index: auto (with netdev) or the index of a RoCE v2 GID from rdma_facts')
    assert (out['field'], out['value']) == ('gid_index', 'two')
    assert calls == []


def test_check_mode(monkeypatch, capsys):
    code, out, calls = run_module(monkeypatch, capsys, dict(CLIENT, _ansible_check_mode=True), 'write_bw.client')
    assert code == 0
    assert calls == []
    assert out['changed'] is False
    assert out['cmd'][3:] == ['/usr/bin/ib_write_bw', '-d', 'rxe0', '-i', '1', '-x', '2', '-s', '4096', '-D', '2', '10.255.0.1']
    assert out['gid_index'] == 2


def test_perftest_failure_is_quoted(monkeypatch, capsys):
    code, out = run_module(monkeypatch, capsys, dict(CLIENT, gid_index=1), 'wrong_gid_client_other_netdev.client')[:2]
    assert code == 1
    assert "perftest said: 'Failed to modify QP 19 to RTR'" in out['msg']
    assert out['perftest_error'] == 'Failed to modify QP 19 to RTR'
    assert out['rc'] == 1


def test_threshold_failure(monkeypatch, capsys):
    code, out = run_module(monkeypatch, capsys, dict(CLIENT, min_bw_pct_of_link=90), 'write_bw.client')[:2]
    assert code == 1
    assert out['msg'] == ('node2: ib_write_bw client to 10.255.0.1: average bandwidth 0.39 Gb/s is 3.93% of the va.100 '
                          'link (10000 Mb/s), below min_bw_pct_of_link=90')
    assert out['metrics']['bw_average_mib_s'] == 46.86


def test_perftest_not_installed(monkeypatch, capsys):
    code, out, calls = run_module(monkeypatch, capsys, CLIENT, 'write_bw.client', bins=False)
    assert code == 1
    assert out['msg'] == 'node2: test=ib_write_bw: ib_write_bw is not installed. Fix: install the perftest package (apt/dnf install perftest)'
    assert calls == []


def warning_texts(out):
    """Warnings as Ansible shows them (ansible-core >= 2.19 sends WarningSummary objects, older plain strings)."""
    return [w['event']['msg'] if isinstance(w, dict) else w for w in out.get('warnings', [])]


def test_perftest_warnings_become_ansible_warnings(monkeypatch, capsys):
    code, out = run_module(monkeypatch, capsys, CLIENT, 'write_bw_mtu_too_big.client')[:2]
    assert code == 0
    assert out['perftest_warnings'] == ['Requested mtu is higher than active mtu Changing to active mtu - 3']
    assert warning_texts(out) == ['ib_write_bw client: Requested mtu is higher than active mtu Changing to active mtu - 3']
    assert 'warning' not in out['preamble']


def test_no_warnings_key_without_perftest_warnings(monkeypatch, capsys):
    out = run_module(monkeypatch, capsys, CLIENT, 'write_bw.client')[1]
    assert out['perftest_warnings'] == []
    assert warning_texts(out) == []


def test_extra_args_gid_index_next_to_gid_index_is_refused(monkeypatch, capsys):
    code, out, calls = run_module(monkeypatch, capsys, dict(CLIENT, extra_args=['-x3']), 'write_bw.client')
    assert code == 1
    assert out['msg'] == ('node2: extra_args=["-x3"]: -x3 repeats -x, which the module already passes for '
                          'gid_index=auto; perftest keeps only the last one given, so gid_index would be silently '
                          'ignored. Fix: remove -x3 from extra_args and set gid_index: 3')
    assert (out['field'], out['value']) == ('extra_args', ['-x3'])
    assert calls == []


def test_output_option_is_refused(monkeypatch, capsys):
    code, out, calls = run_module(monkeypatch, capsys, dict(CLIENT, extra_args=['--output=bandwidth']), 'write_bw.client')
    assert code == 1
    assert out['msg'].startswith('node2: extra_args=["--output=bandwidth"]: --output=bandwidth makes perftest print '
                                 'a single number instead of the report this module reads')
    assert calls == []


def test_bidirectional_run(monkeypatch, capsys):
    code, out, calls = run_module(monkeypatch, capsys, dict(CLIENT, extra_args=['-b']), 'write_bw_bidir.client')
    assert code == 0
    assert calls[0][-2:] == ['-b', '10.255.0.1']
    assert out['bidirectional'] is True
    assert out['preamble']['device'] == 'rxe0'
    assert out['preamble']['num_qps'] == 1
    assert out['metrics']['bw_average_mib_s'] == 13.62
    assert out['metrics']['link_capacity_gbps'] == 20.0


def test_completion_error_fails_with_class(monkeypatch, capsys):
    args = dict(CLIENT, gid_index=3, netdev=None, device='mlx5_2')
    code, out = run_module(monkeypatch, capsys, args, 'derived_completion_retry_exceeded.client')[:2]
    assert code == 1
    assert out['error_class'] == 'completion_error'
    assert out['error_detail'] == {'wc_status': 12, 'wc_status_name': 'IBV_WC_RETRY_EXC_ERR'}
    assert out['perftest_error'] == 'Completion with error at client: Failed status 12: wr_id 0 syndrom 0x81'
    assert 'PFC' in out['hint']
    assert out['msg'].endswith(out['hint'])


def test_rdma_cm_rejected_fails_with_class(monkeypatch, capsys):
    args = dict(CLIENT, gid_index=None, netdev=None, rdma_cm=True)
    code, out = run_module(monkeypatch, capsys, args, 'no_server_client_rdma_cm')[:2]
    assert code == 1
    assert (out['error_class'], out['error_detail']) == ('rdma_cm_rejected', {'cm_event': 'RDMA_CM_EVENT_REJECTED'})
    assert "perftest said: 'Unexpected CM event bl blka 8'" in out['msg']
