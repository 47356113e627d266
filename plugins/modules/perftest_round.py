#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: perftest_round
short_description: Run one node's part of a round of RDMA tests (ping, perftest servers and clients) in one run
version_added: "0.1.0"
description:
  - One node's part of a round of an RDMA verification, in one module run - the ping of its peer, a perftest server for
    every test in O(tests) (all listening at once, test I(i) on O(server_ports)[i]), and its clients against O(peer), one
    test after the other (test I(i) to O(client_ports)[i]). Run it on every node of the round in one task, so one node's
    servers meet another's clients; P(gpufabric.roce.rdma_verify#role) does, for every round of its ring.
  - Each side is run and read as M(gpufabric.roce.perftest) runs and reads it (the GID choice, the command under
    C(timeout), the parsed figures, the error classes and hints, the thresholds, the port counters around a client).
  - A client that cannot connect (C(Couldn't connect)) is run again, 3 s apart, for up to O(connect_timeout) seconds
    while the peer's server may still be starting; not after a ping of the peer that got no reply.
  - A server still listening when its client should have connected (O(connect_timeout) after the round's start, plus
    the ping's time and O(client_timeout) per earlier test) is stopped, and its record says so. With O(rdma_cm) there is
    no listener to watch, and the server runs to its timeout.
  - The failure of a test is that test's record (RV(clients), RV(servers)), never the task's - the round's other tests
    still run. The task fails only on bad input, before anything runs, or when a program is missing.
author:
  - gpufabric.roce maintainers (@gpufabric)
options:
  tests:
    description:
      - The perftest programs of the round, in order.
    type: list
    elements: str
    required: true
    choices: [ib_write_bw, ib_read_bw, ib_send_bw, ib_write_lat, ib_read_lat, ib_send_lat]
  peer:
    description:
      - Address of the node whose servers this node's clients test against (its address on the RDMA network). No
        clients and no ping when omitted.
    type: str
  client_ports:
    description:
      - The TCP port of the peer's server of each test (one per test, in the order of O(tests)). Required with O(peer).
    type: list
    elements: int
  server_ports:
    description:
      - The TCP port of this node's server of each test (one per test). No servers when omitted.
    type: list
    elements: int
  ping:
    description:
      - Ping O(peer) before the clients run (C(ping -c ping_count -W ping_timeout -i 0.2)); RV(ping) holds the result.
    type: bool
    default: true
  ping_count:
    description: Pings to send.
    type: int
    default: 5
  ping_timeout:
    description: Seconds C(ping) waits for a reply (C(-W)).
    type: int
    default: 2
  device:
    description: RDMA device (C(-d)); see M(gpufabric.roce.perftest).
    type: str
  ib_port:
    description: Port of the RDMA device (C(-i)).
    type: int
    default: 1
  gid_index:
    description: GID index (C(-x)) as a number, or V(auto) (needs O(netdev)); see M(gpufabric.roce.perftest).
    type: raw
  netdev:
    description: Interface whose RoCE v2 GID O(gid_index=auto) selects, and whose speed the percentage threshold reads.
    type: str
  bw_size:
    description: Message size of the bandwidth tests (C(-s)).
    type: int
    default: 65536
  bw_duration:
    description: Seconds each bandwidth test runs (C(-D)).
    type: int
    default: 5
  qps:
    description: Queue pairs of the bandwidth tests (C(-q)).
    type: int
    default: 1
  lat_size:
    description: Message size of the latency tests (C(-s)).
    type: int
    default: 2
  lat_iterations:
    description: Exchanges of the latency tests (C(-n)).
    type: int
    default: 1000
  rdma_cm:
    description: Connect the queue pairs with rdma_cm (C(-R)).
    type: bool
    default: false
  tclass:
    description: IP ToS of the tests' traffic (C(--tclass), or C(-T) with O(rdma_cm)); see M(gpufabric.roce.perftest).
    type: int
  client_timeout:
    description: Seconds after which a client is killed (C(timeout)); at least O(bw_duration) + 5.
    type: int
    default: 60
  server_timeout:
    description:
      - Seconds after which the server of the first test is killed; a later test's server gets O(client_timeout) more
        per earlier test, as it waits through them.
    type: int
    default: 90
  connect_timeout:
    description: Seconds a client keeps trying to connect to a server that may still be starting.
    type: int
    default: 30
  min_bw_gbps:
    description: Fail a bandwidth test whose average is below this many Gb/s (its record, not the task).
    type: float
  min_bw_pct_of_link:
    description: Fail a bandwidth test whose average is below this percentage of the link speed of O(netdev).
    type: float
  link_speed_unknown:
    description: What O(min_bw_pct_of_link) does where the link speed is unknown - V(fail), or V(skip) the check.
    type: str
    choices: [fail, skip]
    default: fail
  max_lat_us:
    description: Fail a latency test whose average latency is above this many microseconds.
    type: float
  sysfs_root:
    description: Root of the sysfs tree read for the GID and the link speed. Change it only for tests.
    type: path
    default: /sys
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details: A benchmark changes nothing. In check mode the GIDs are resolved and the planned commands returned, but
      nothing is run.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
notes:
  - Needs the C(perftest) package, C(timeout) (coreutils) and C(ping) on the target.
  - Never reports a change.
seealso:
  - module: gpufabric.roce.perftest
"""

EXAMPLES = r"""
- name: A two-node round, both directions at once (node1 and node2 serve each other), between their gateways
  gpufabric.roce.perftest_round:
    tests: [ib_write_bw, ib_write_lat]
    # plan: the fabric plan (gpufabric.roce.fabric_plan); each node's slice of it names its gateway's address and netdev
    peer: "{{ ((plan | gpufabric.roce.fabric_plan_node(peer_node)).rails | first).addresses | first | split('/') | first }}"
    client_ports: [18515, 18517]
    server_ports: [18516, 18518]
    gid_index: auto
    netdev: "{{ ((plan | gpufabric.roce.fabric_plan_node(inventory_hostname)).rails | first).name }}"
    min_bw_gbps: 90
  register: round
"""

RETURN = r"""
ping:
  description: The ping of O(peer) - C(cmd), C(rc), C(stdout), C(stderr); V(null) without one.
  returned: always
  type: dict
clients:
  description:
    - One record per test, in the order of O(tests) (empty without O(peer)) - the return values of
      M(gpufabric.roce.perftest) (C(cmd), C(metrics), C(gid_index), C(gid_ipv4), C(netdev), C(thresholds_skipped),
      C(port_counters), C(counter_flags), C(error_class), C(hint), C(stdout), C(stderr), ...) plus C(test), C(role),
      C(ok), C(msg) (the failure, with its fix) and C(attempts) (runs, counting those that could not connect).
  returned: always
  type: list
  elements: dict
servers:
  description:
    - One record per test, as RV(clients) (empty without O(server_ports)); a server stopped because no client came has
      C(stopped=true) and C(error_class=client_failed).
  returned: always
  type: list
  elements: dict
"""

import platform

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufabric.roce.plugins.module_utils._common import pause_stats as _pause_stats
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.perftest import TESTS, PerftestError
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.perftest_round import LocalProcesses, run_round


def main():
    module = AnsibleModule(
        argument_spec=dict(
            tests=dict(type='list', elements='str', required=True, choices=list(TESTS)),
            peer=dict(type='str'),
            client_ports=dict(type='list', elements='int'),
            server_ports=dict(type='list', elements='int'),
            ping=dict(type='bool', default=True),
            ping_count=dict(type='int', default=5),
            ping_timeout=dict(type='int', default=2),
            device=dict(type='str'),
            ib_port=dict(type='int', default=1),
            gid_index=dict(type='raw'),
            netdev=dict(type='str'),
            bw_size=dict(type='int', default=65536),
            bw_duration=dict(type='int', default=5),
            qps=dict(type='int', default=1),
            lat_size=dict(type='int', default=2),
            lat_iterations=dict(type='int', default=1000),
            rdma_cm=dict(type='bool', default=False),
            tclass=dict(type='int'),
            client_timeout=dict(type='int', default=60),
            server_timeout=dict(type='int', default=90),
            connect_timeout=dict(type='int', default=30),
            min_bw_gbps=dict(type='float'),
            min_bw_pct_of_link=dict(type='float'),
            link_speed_unknown=dict(type='str', choices=['fail', 'skip'], default='fail'),
            max_lat_us=dict(type='float'),
            sysfs_root=dict(type='path', default='/sys'),
        ),
        required_by={'peer': ['client_ports']},
        supports_check_mode=True,
    )
    host = platform.node()
    params = module.params
    programs = list(params['tests']) + ['timeout'] + (['ping'] if params['peer'] and params['ping'] else [])
    found = {name: module.get_bin_path(name, required=False) for name in set(programs)}
    missing = sorted(name for name, path in found.items() if path is None)
    if missing and not module.check_mode:
        module.fail_json(msg='%s: %s not installed. Fix: install %s' % (
            host, ', '.join(missing), ' and '.join(sorted({'perftest (apt/dnf install perftest)' if n.startswith('ib_')
                                                           else 'coreutils' if n == 'timeout' else 'iputils-ping'
                                                           for n in missing}))))
    try:
        out = run_round(host, params, LocalProcesses(module.run_command), binaries=found,
                        timeout_bin=found.get('timeout') or 'timeout', ping_bin=found.get('ping') or 'ping',
                        check_mode=module.check_mode,
                        pause_reader=_pause_stats.read if (params.get('sysfs_root') or '/sys') == '/sys' else None)
    except PerftestError as exc:
        module.fail_json(msg=str(exc), field=exc.field, value=exc.value)
    for record in out['servers'] + out['clients']:
        for warning in record.get('perftest_warnings') or []:
            module.warn('%s %s: %s' % (record['test'], record['role'], warning))
    module.exit_json(changed=False, **out)


if __name__ == '__main__':
    main()
