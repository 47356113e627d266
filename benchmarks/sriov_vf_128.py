# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Configure N VFs (default 128) on a PF with gpufabric.roce.sriov_vf and with the shell way,
side by side in one run, on a real kernel (the lab VM's netdevsim PF).

Every VF gets the seed's VF line: vlan 100, trust on, spoofchk off, link-state enable.

  shell    : echo N > sriov_numvfs, then one `ip link set dev PF vf i ...` per VF (one process each)
  module   : the module file run as Ansible runs it on a node (a fresh Python process reading its
             arguments file), first from 0 VFs, then again (idempotent, changed=false)
  in-proc  : the module's logic (module_utils run() with one IPRoute session) inside this process,
             i.e. the module without interpreter start-up and imports
  baseline : `python -c "import ansible.module_utils.basic, pyroute2"` (the fixed cost of any
             module process on this machine)

Run as root inside the lab VM (needs the collection importable as ansible_collections.gpufabric.roce,
e.g. PYTHONPATH=<dir holding ansible_collections>):

  python3 benchmarks/sriov_vf_128.py --setup-netdevsim --netdevsim-ko /path/netdevsim.ko
  python3 benchmarks/sriov_vf_128.py --pf eni10np1 --num-vfs 128 --json out.json

Exit code 0 when both goals hold for the module process figures (idempotent re-run <= 1 s,
>= 10x faster than the shell way), 1 otherwise; the in-process figures are reported next to them.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

from pyroute2 import IPRoute

from ansible_collections.gpufabric.roce.plugins.module_utils._host.sriov_vf import VF_KEYS, dump_vfs, run

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = os.path.join(REPO, 'plugins', 'modules', 'sriov_vf.py')
VF_LINE = {'vlan': 100, 'trust': True, 'spoofchk': False, 'link_state': 'enable'}


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True)


def setup_netdevsim(ko, max_vfs):
    sh('mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug')
    sh('modprobe psample || true')
    if not os.path.exists('/sys/bus/netdevsim'):
        sh('insmod %s' % ko)
    if not os.path.exists('/sys/bus/netdevsim/devices/netdevsim10'):
        sh('echo "10 1" > /sys/bus/netdevsim/new_device')
        time.sleep(0.5)
    pf = os.listdir('/sys/bus/netdevsim/devices/netdevsim10/net')[0]
    reset(pf)  # max_vfs cannot change while VFs exist
    sh('echo %d > /sys/kernel/debug/netdevsim/netdevsim10/max_vfs' % max_vfs)
    return pf


def numvfs_path(pf):
    return '/sys/class/net/%s/device/sriov_numvfs' % pf


def reset(pf):
    with open(numvfs_path(pf), 'w') as f:
        f.write('0\n')


def vf_state(pf):
    """The VF table as pyroute2 reads it (to prove both ways end in the same state)."""
    with IPRoute() as ipr:
        return dump_vfs(ipr, ipr.link_lookup(ifname=pf)[0])


def shell_way(pf, n, ip):
    script = ['echo %d > %s' % (n, numvfs_path(pf))]
    script += ['%s link set dev %s vf %d vlan 100 trust on spoofchk off state enable' % (ip, pf, i) for i in range(n)]
    t = time.monotonic()
    subprocess.run(['/bin/sh', '-e', '-c', '\n'.join(script)], check=True)
    return time.monotonic() - t


def module_args(pf, n):
    return {'pf': pf, 'num_vfs': n, 'vfs': [dict(VF_LINE, id=i) for i in range(n)]}


def module_process(pf, n):
    with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as f:
        json.dump({'ANSIBLE_MODULE_ARGS': module_args(pf, n)}, f)
    try:
        t = time.monotonic()
        p = subprocess.run([sys.executable, MODULE, f.name], capture_output=True, text=True, check=False)
        dt = time.monotonic() - t
    finally:
        os.unlink(f.name)
    result = json.loads(p.stdout)
    if result.get('failed'):
        raise SystemExit('module failed: %s' % result.get('msg'))
    return dt, result['changed']


def module_in_process(pf, n):
    params = module_args(pf, n)
    params['vfs'] = [dict(dict.fromkeys(VF_KEYS), **v) for v in params['vfs']]
    params.update(allow_vf_reset=False, persist=False)
    t = time.monotonic()
    with IPRoute() as ipr:
        result = run(platform.node(), params, ipr, False)
    return time.monotonic() - t, result['changed']


def timed(argv):
    t = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - t


def baseline():
    """Fixed cost of a module process: interpreter start, ansible.module_utils.basic, pyroute2."""
    py = sys.executable
    return {
        'python_start_s': timed([py, '-c', 'pass']),
        'import_ansible_basic_s': timed([py, '-c', 'import ansible.module_utils.basic']),
        'import_pyroute2_s': timed([py, '-c', 'from pyroute2 import IPRoute']),
        'import_both_s': timed([py, '-c', 'import ansible.module_utils.basic; from pyroute2 import IPRoute']),
    }


def ansible_adhoc(pf, n):
    """Idempotent re-run through the ansible CLI (controller + AnsiballZ + module), for reference."""
    args = json.dumps(module_args(pf, n))
    t = time.monotonic()
    p = subprocess.run(['ansible', 'localhost', '-c', 'local', '-m', 'gpufabric.roce.sriov_vf', '-a', args, '-o'],
                       capture_output=True, text=True, check=False)
    dt = time.monotonic() - t
    return dt, p.returncode, p.stdout.strip()[:200]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--pf', default='eni10np1')
    ap.add_argument('--num-vfs', type=int, default=128)
    ap.add_argument('--setup-netdevsim', action='store_true', help='create netdevsim10 (PF eni10np1) with max_vfs=--num-vfs')
    ap.add_argument('--netdevsim-ko', default='/tmp/setup/nds/netdevsim/netdevsim.ko')
    ap.add_argument('--json', help='also write the figures to this file')
    ap.add_argument('--ansible', action='store_true', help='also time an idempotent re-run through `ansible localhost -m`')
    args = ap.parse_args()
    n = args.num_vfs
    pf = setup_netdevsim(args.netdevsim_ko, n) if args.setup_netdevsim else args.pf
    ip = shutil.which('ip') or '/sbin/ip'

    reset(pf)
    t_shell = shell_way(pf, n, ip)
    shell_state = vf_state(pf)

    reset(pf)
    t_mod, changed_mod = module_process(pf, n)
    module_state = vf_state(pf)
    t_mod_idem, changed_mod_idem = module_process(pf, n)

    reset(pf)
    t_inproc, changed_inproc = module_in_process(pf, n)
    t_inproc_idem, changed_inproc_idem = module_in_process(pf, n)
    base = baseline()
    adhoc = ansible_adhoc(pf, n) if args.ansible else None

    same = shell_state == module_state and len(module_state) == n and all(
        all(module_state[i].get(k) == v for k, v in VF_LINE.items()) for i in range(n))
    fig = {
        'num_vfs': n, 'pf': pf, 'kernel': platform.release(), 'python': platform.python_version(),
        'shell_s': round(t_shell, 3),
        'module_process_s': round(t_mod, 3), 'module_process_changed': changed_mod,
        'module_process_idempotent_s': round(t_mod_idem, 3), 'module_process_idempotent_changed': changed_mod_idem,
        'module_in_process_s': round(t_inproc, 3), 'module_in_process_changed': changed_inproc,
        'module_in_process_idempotent_s': round(t_inproc_idem, 3), 'module_in_process_idempotent_changed': changed_inproc_idem,
        'baseline': {k: round(v, 3) for k, v in base.items()},
        'ansible_adhoc_idempotent_s': round(adhoc[0], 3) if adhoc else None,
        'ansible_adhoc_output': adhoc[2] if adhoc else None,
        'ratio_shell_vs_module_process': round(t_shell / t_mod, 1),
        'ratio_shell_vs_module_in_process': round(t_shell / t_inproc, 1),
        'same_final_state': same,
    }
    fig['goal_idempotent_le_1s'] = t_mod_idem <= 1.0
    fig['goal_ratio_ge_10x'] = t_shell / t_mod >= 10
    rows = [
        ('shell: echo + %d x ip link set' % n, t_shell, ''),
        ('module process, %d VFs from 0' % n, t_mod, 'changed=%s' % changed_mod),
        ('module process, idempotent re-run', t_mod_idem, 'changed=%s' % changed_mod_idem),
        ('module logic in-process, from 0', t_inproc, 'changed=%s' % changed_inproc),
        ('module logic in-process, idempotent', t_inproc_idem, 'changed=%s' % changed_inproc_idem),
        ('baseline: python -c pass', base['python_start_s'], ''),
        ('baseline: import ansible.module_utils.basic', base['import_ansible_basic_s'], ''),
        ('baseline: from pyroute2 import IPRoute', base['import_pyroute2_s'], ''),
        ('baseline: both imports', base['import_both_s'], ''),
    ]
    if adhoc:
        rows.append(('ansible localhost -m sriov_vf (idempotent)', adhoc[0], adhoc[2][:60]))
    for label, secs, note in rows:
        print('%-40s %8.3f s  %s' % (label, secs, note))
    print('shell / module process    = %.1fx' % fig['ratio_shell_vs_module_process'])
    print('shell / module in-process = %.1fx' % fig['ratio_shell_vs_module_in_process'])
    print('same final VF state both ways: %s' % same)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(fig, f, indent=1)
    ok = fig['goal_idempotent_le_1s'] and fig['goal_ratio_ge_10x'] and same and not changed_mod_idem
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
