#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

DOCUMENTATION = r"""
---
module: perftest
short_description: Run one side of an RDMA perftest benchmark and return parsed results
version_added: "0.1.0"
description:
  - Runs the server or the client side of C(ib_write_bw), C(ib_read_bw), C(ib_send_bw), C(ib_write_lat),
    C(ib_read_lat) or C(ib_send_lat) (the Linux RDMA C(perftest) package) under C(timeout) and returns its
    results as numbers, the GID index used, the command (a list) and the raw output.
  - O(gid_index=auto) picks the GID the way an operator should, from
    C(/sys/class/infiniband/<device>/ports/<port>/gid_attrs), as
    the lowest index whose type is C(RoCE v2), whose ndev is O(netdev) (for example the VLAN gateway
    C(<pf>.<vlan>)), and whose GID is IPv4-mapped (C(0000:0000:0000:0000:0000:ffff:xxxx:xxxx)).
    Empty slots, which the kernel answers with EINVAL, are skipped. A wrong GID index is the usual cause of
    C(Failed to modify QP ... to RTR).
  - The server side blocks until a client has finished. Start it with C(async) and C(poll=0), run the
    client, then collect the server with M(ansible.builtin.async_status) (see EXAMPLES). The module itself
    always waits for perftest, at most O(timeout) seconds.
  - Both bandwidth header variants are parsed, C(BW peak[MB/sec]) (older perftest, for example Debian's
    4.5+0.17) and C(BW peak[MiB/sec]) / C(BW peak[Gb/sec]) (newer perftest, C(--report_gbits)), as well as the
    latency table (C(t_min), C(t_max), C(t_typical), C(t_avg), C(t_stdev), 99% and 99.9% percentiles), the short
    latency table of duration mode, and the preamble (device, link type, MTU, GID index, ...).
  - Bidirectional runs (C(-b) in O(extra_args), title C(RDMA_Write Bidirectional BW Test) and the like) are read
    like the others. perftest reports for C(-b) the B(sum of both directions) on both sides (each side adds the
    report of its peer to its own), so RV(metrics) holds that sum, RV(bidirectional) is V(true) and the link
    percentages are of twice the link speed. With C(--report-both) the two directions are also returned
    separately in RV(directions).
  - "Warnings perftest prints while it runs (C(WARNING: BW peak won't be measured in this run), C(Requested mtu is
    higher than active mtu), the PCIe relaxed-ordering warnings, C(libibverbs: Warning: ...), C(Conflicting CPU
    frequency values detected), C(Using sampled CPU speed), ...) are returned in RV(perftest_warnings) and shown as
    Ansible warnings (RV(warnings)). They never become RV(preamble) keys."
  - "A failed run fails the task with perftest's own message quoted (for example
    C(Unable to find the Infiniband/RoCE device), C(Failed to modify QP 19 to RTR), C(Couldn't connect to
    10.255.0.1:18515), C(Completion with error at client: Failed status 12: wr_id 0 syndrom 0x81),
    C(Event: RDMA_CM_EVENT_REJECTED; error: 8.)), its class in RV(error_class) and a hint at the usual fix in
    RV(hint): wrong GID index or MTU mismatch, firewall or rdma_cm port, PFC/ECN and lossless configuration,
    link flaps, peer not listening, port down, queue pair limits."
  - C(--output=bandwidth|message_rate|latency) is refused before running. perftest then prints a single number
    instead of its report, while this module returns every figure of the report in RV(metrics) (in Gb/s and MiB/s,
    microseconds).
  - The thresholds O(min_bw_gbps), O(min_bw_pct_of_link) and O(max_lat_us) fail the task with a message
    giving the measured value and the limit.
author:
  - gpufabric.roce maintainers (@gpufabric)
options:
  test:
    description:
      - The perftest program to run.
    type: str
    required: true
    choices: [ib_write_bw, ib_read_bw, ib_send_bw, ib_write_lat, ib_read_lat, ib_send_lat]
  role:
    description:
      - Which side to run. C(server) listens on O(tcp_port); C(client) connects to O(server).
      - Both sides must be given the same O(test), O(size), O(duration)/O(iterations), O(qps), O(tcp_port)
        and O(rdma_cm).
    type: str
    required: true
    choices: [server, client]
  server:
    description:
      - Address (or name) of the server side. Required when O(role=client).
      - With O(rdma_cm=true) it must be an address on the RDMA network (for example the peer's VLAN
        gateway address), because rdma_cm resolves the route and the GID from it.
    type: str
  device:
    description:
      - RDMA device (C(-d)), for example C(mlx5_0) or C(rxe0).
      - When omitted, perftest uses the first device; with O(gid_index=auto) every device is searched for a
        GID on O(netdev) and the one found is used and returned in RV(device).
    type: str
  ib_port:
    description:
      - Port of the RDMA device (C(-i)).
    type: int
    default: 1
  gid_index:
    description:
      - GID index (C(-x)) as a number, or V(auto) to choose it from sysfs (see the description; needs O(netdev)).
      - When omitted, perftest's default is used (index 0 on Ethernet, which is usually an IPv6 link-local GID).
      - With O(rdma_cm=true) rdma_cm chooses the GID from the address; leave it unset then.
    type: raw
  netdev:
    description:
      - Interface whose RoCE v2 GID O(gid_index=auto) selects, for example the VLAN gateway C(enp157s0np0.100).
      - Also the interface whose C(/sys/class/net/<netdev>/speed) gives the link speed for C(bw_pct_of_link) in RV(metrics).
        When omitted, the ndev of the chosen GID is used.
    type: str
  size:
    description:
      - Message size in bytes (C(-s)). perftest's default applies when omitted (65536 for bandwidth, 2 for latency).
    type: int
  duration:
    description:
      - Run for this many seconds (C(-D)). Mutually exclusive with O(iterations).
      - In duration mode perftest does not measure the peak bandwidth (it reports 0) and latency tests print
        only the average latency.
    type: int
  iterations:
    description:
      - Number of exchanges (C(-n)), at least 5. Mutually exclusive with O(duration).
    type: int
  qps:
    description:
      - Number of queue pairs (C(-q)). Bandwidth tests only; perftest's latency tests refuse C(-q), even C(-q 1).
    type: int
  report_gbits:
    description:
      - Pass C(--report_gbits) so that perftest prints Gb/s. The returned results carry both units either way.
    type: bool
    default: false
  rdma_cm:
    description:
      - Connect the queue pairs with rdma_cm (C(-R)) instead of the TCP exchange of QP numbers and GIDs.
    type: bool
    default: false
  tclass:
    description:
      - IP ToS of the test's traffic (0-255; the rail's QoS C(tos), docs/qos.md) - C(--tclass) (the GRH traffic class, the
        IP ToS on RoCE v2), or C(-T) with O(rdma_cm=true).
      - Omit it to test as applications do by default - with O(rdma_cm=true) the RDMA-CM default ToS that
        P(gpufabric.roce.roce_qos#module) writes applies.
    type: int
  tcp_port:
    description:
      - TCP port of the out-of-band exchange (C(-p)); perftest's default is 18515. Use different ports to run
        several servers on one node at the same time.
    type: int
  timeout:
    description:
      - Seconds after which perftest is killed (C(timeout --kill-after=5)) and the task fails.
      - With O(duration) it must be at least O(duration) + 5. For the server it should cover the time until
        the client starts and finishes.
    type: int
    default: 60
  extra_args:
    description:
      - Further perftest arguments, appended as given (for example C([--qp-timeout=14]), C([-F]) or C([-b]) for a
        bidirectional bandwidth test).
      - They are read the way perftest reads its command line (short options with attached values such as
        C(-x3), clusters such as C(-bR), C(--gid-index=3), C(--gid-index 3) and unambiguous abbreviations such as
        C(--gid=3)). Options this module has (C(-d)/C(--ib-dev), C(-i)/C(--ib-port), C(-x)/C(--gid-index),
        C(-s)/C(--size), C(-D)/C(--duration), C(-n)/C(--iters), C(-q)/C(--qp), C(-p)/C(--port),
        C(-R)/C(--rdma_cm), C(--report_gbits)) are refused before running, with the module option to set
        instead; perftest keeps only the last of two C(-x), so C(extra_args=[-x3]) next to O(gid_index) would
        silently override it.
      - Also refused before running - C(--output=...) (see the description), C(--run_infinitely), C(-h), C(-V), and
        C(-b) or C(-q) with a latency test (perftest refuses them there).
    type: list
    elements: str
    default: []
  min_bw_gbps:
    description:
      - Fail the task when the average bandwidth is below this many Gb/s (10^9 bit/s). Bandwidth tests only.
    type: float
  min_bw_pct_of_link:
    description:
      - Fail the task when the average bandwidth is below this percentage of the link speed of O(netdev).
        Bandwidth tests only; the link speed must be known (C(/sys/class/net/<netdev>/speed) not C(-1)),
        otherwise the task fails before running, unless O(link_speed_unknown=skip).
    type: float
  link_speed_unknown:
    description:
      - What O(min_bw_pct_of_link) does on a link whose speed the kernel does not report (virtual NICs) - V(fail) before
        running, or V(skip) the percentage check (named in RV(thresholds_skipped)) and apply the other thresholds.
    type: str
    choices: [fail, skip]
    default: fail
  max_lat_us:
    description:
      - Fail the task when the average latency (C(t_avg)) is above this many microseconds. Latency tests only.
    type: float
  sysfs_root:
    description:
      - Root of the sysfs tree read for O(gid_index=auto) and the link speed. Change it only for tests.
    type: path
    default: /sys
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
    details: A benchmark changes nothing. In check mode the GID is still resolved and the planned
      command returned in RV(cmd), but perftest is not run.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
requirements:
  - perftest (C(ib_write_bw) and the other tests) on the target node
  - C(timeout) (coreutils) on the target node
  - pyroute2 on the target node, optional - only the pause frames of RV(port_counters) are read with it
notes:
  - Needs the C(perftest) package and C(timeout) (coreutils) on the target, and enough locked memory
    (C(ulimit -l)) for the RDMA buffers, which root has.
  - Never reports a change.
  - The latency tests of perftest print their results on both sides, except C(ib_read_lat), whose server
    prints none; RV(metrics) is then empty on the server.
  - perftest's C(MB) is 2^20 bytes (its help says so), the same as C(MiB). RV(metrics) gives bandwidth in Gb/s
    (10^9 bit/s) and MiB/s whatever perftest printed.
seealso:
  - module: gpufabric.roce.rdma_facts
  - name: perftest
    description: The Linux RDMA perftest suite.
    link: https://github.com/linux-rdma/perftest
"""

EXAMPLES = r"""
# One pair: node1 serves, node2 connects. The server must not block the play: start it
# asynchronously, run the client, then collect the server's result.
- name: Start the ib_write_bw server (does not block)
  gpufabric.roce.perftest:
    test: ib_write_bw
    role: server
    device: mlx5_0
    gid_index: auto
    netdev: enp157s0np0.100
    duration: 5
    size: 65536
    timeout: 60
  async: 70
  poll: 0
  register: bw_server_job
  when: inventory_hostname == 'node1'

- name: Run the client against node1's VLAN gateway address
  gpufabric.roce.perftest:
    test: ib_write_bw
    role: client
    server: 10.255.0.2
    device: mlx5_0
    gid_index: auto
    netdev: enp157s0np0.100
    duration: 5
    size: 65536
    timeout: 30
    min_bw_pct_of_link: 80
  register: bw_client
  # the async server may need a moment to listen: retry only "Couldn't connect"
  retries: 10
  delay: 3
  until: bw_client is succeeded or "Couldn't connect" not in (bw_client.msg | default(''))
  when: inventory_hostname == 'node2'

- name: Collect the server side
  ansible.builtin.async_status:
    jid: "{{ bw_server_job.ansible_job_id }}"
  register: bw_server
  until: bw_server.finished
  retries: 30
  delay: 2
  when: inventory_hostname == 'node1'

- name: Show what was measured
  ansible.builtin.debug:
    msg: >-
      {{ bw_client.metrics.bw_average_gbps }} Gb/s
      ({{ bw_client.metrics.bw_pct_of_link | default('n/a') }} % of link), GID index {{ bw_client.gid_index }}
  when: inventory_hostname == 'node2'

- name: Latency with an explicit GID index and a limit
  gpufabric.roce.perftest:
    test: ib_write_lat
    role: client
    server: 10.255.0.2
    device: rxe0
    gid_index: 3
    iterations: 1000
    size: 64
    max_lat_us: 10

- name: Bidirectional bandwidth over 4 queue pairs (metrics are the sum of both directions)
  gpufabric.roce.perftest:
    test: ib_write_bw
    role: client
    server: 10.255.0.2
    gid_index: auto
    netdev: enp157s0np0.100
    qps: 4
    duration: 10
    timeout: 40
    extra_args: [-b, --report-both]
    min_bw_pct_of_link: 80  # of twice the link speed, since -b counts both directions
  register: bidir

- name: Plan only (check mode) - resolve the GID and show the command
  gpufabric.roce.perftest:
    test: ib_send_bw
    role: client
    server: 10.255.0.6
    gid_index: auto
    netdev: eth1.100
  check_mode: true
  register: planned
"""

RETURN = r"""
cmd:
  description: The command run (or planned in check mode), as a list, including the C(timeout) wrapper.
  returned: always
  type: list
  elements: str
  sample: [/usr/bin/timeout, --kill-after=5, "30", /usr/bin/ib_write_bw, -d, rxe0, -i, "1", -x, "2", -s, "4096", -D, "2", 10.255.0.1]
device:
  description: The RDMA device used; found by O(gid_index=auto) when O(device) was omitted.
  returned: always
  type: str
  sample: rxe0
gid_index:
  description: The GID index passed to perftest (chosen by O(gid_index=auto), or as given); V(null) when none was passed.
  returned: always
  type: int
  sample: 2
gid:
  description: The GID at RV(gid_index) as in sysfs, when known.
  returned: always
  type: str
  sample: "0000:0000:0000:0000:0000:ffff:0aff:0001"
gid_ipv4:
  description: The IPv4 address of an IPv4-mapped RV(gid), else V(null).
  returned: always
  type: str
  sample: 10.255.0.1
netdev:
  description: The interface whose speed was read (O(netdev), or the ndev of the GID).
  returned: always
  type: str
  sample: va.100
link_speed_mbps:
  description: Speed of RV(netdev) in Mb/s from sysfs; V(null) when unknown (C(-1), missing).
  returned: always
  type: int
  sample: 10000
metrics:
  description:
    - The result row (the last one when perftest printed several, as with C(-a)), as numbers. Keys carry
      their unit. Empty in check mode and when this side prints no table.
    - Bandwidth tests have C(bytes), C(iterations), C(bw_peak_gbps), C(bw_average_gbps), C(bw_peak_mib_s),
      C(bw_average_mib_s), C(msg_rate_mpps), C(bw_unit_reported) and, when the link speed is known,
      C(link_speed_gbps), C(bw_pct_of_link), C(bw_peak_pct_of_link).
    - Latency tests have C(bytes), C(iterations), C(t_min_us), C(t_max_us), C(t_typical_us), C(t_avg_us),
      C(t_stdev_us), C(t_p99_us), C(t_p99_9_us); in duration mode only C(bytes), C(iterations), C(t_avg_us),
      C(tps_average).
    - For a bidirectional run (RV(bidirectional)) the bandwidth and message rate are the sum of both directions,
      as perftest prints them, C(link_capacity_gbps) is twice C(link_speed_gbps), and C(bw_pct_of_link) and
      C(bw_peak_pct_of_link) are percentages of C(link_capacity_gbps). Iterations are this side's own count.
  returned: always
  type: dict
  sample: {bytes: 4096, iterations: 24000, bw_peak_gbps: 0.0, bw_average_gbps: 0.39309, bw_peak_mib_s: 0.0,
           bw_average_mib_s: 46.86, msg_rate_mpps: 0.011996, bw_unit_reported: MB/sec, link_speed_gbps: 10.0,
           bw_pct_of_link: 3.9309, bw_peak_pct_of_link: 0.0}
bidirectional:
  description: Whether perftest ran bidirectionally (C(-b)); then RV(metrics) is the sum of both directions.
  returned: always
  type: bool
  sample: false
directions:
  description:
    - With C(-b --report-both), each direction's own result (the last row of perftest's C(Local results) and
      C(Remote results) tables), keys as RV(metrics), percentages of the single link speed. Empty otherwise.
  returned: always
  type: dict
  sample: {local: {bytes: 4096, iterations: 2000, bw_average_mib_s: 6.4}, remote: {bytes: 4096, iterations: 2000,
           bw_average_mib_s: 7.31}}
rows:
  description: Every result row, same keys as RV(metrics) without the link percentages.
  returned: always
  type: list
  elements: dict
preamble:
  description: The settings perftest printed before the run, typed (C(device), C(num_qps), C(transport_type),
    C(connection_type), C(mtu_bytes), C(link_type), C(gid_index), C(rdma_cm_qps), C(data_exchange_method), ...).
  returned: always
  type: dict
  sample: {device: rxe0, num_qps: 1, transport_type: IB, connection_type: RC, mtu_bytes: 1024,
           link_type: Ethernet, gid_index: 2, rdma_cm_qps: false, data_exchange_method: Ethernet}
connection:
  description: The local and remote queue pairs perftest printed (C(lid), C(qpn), C(psn), C(gid), C(gid_ipv4)).
  returned: always
  type: dict
  sample: {local: [{lid: "0000", qpn: "0x0013", psn: "0x754d10", gid: "0000:0000:0000:0000:0000:ffff:0aff:0001",
           gid_ipv4: 10.255.0.1}], remote: []}
port_counters:
  description:
    - What the RDMA port's counters (C(hw_counters/) and C(counters/)) moved during the test - C(counters) (every one that
      moved), C(problems) (those that move only on loss, reordering or retransmission), C(congestion) (ECN marks and
      CNPs, ConnectX only), C(pause) (the pause frames of the port's netdev, the PF - C(rx_prio3_pause)...; mlx5 only,
      empty on drivers without them; read with the C(SIOCETHTOOL) statistics ioctl on a live node). The port's, not the
      pair's - another pair on the same port is in them too.
    - V(null) when the device or port was not found.
  returned: always
  type: dict
  sample: {counters: {sent_pkts: 16384, rcvd_pkts: 16390, out_of_seq_request: 3}, problems: {out_of_seq_request: 3}, congestion: {},
           pause: {}}
counter_flags:
  description: A line for a test that passed its thresholds while the port's problem counters moved (a lucky pass).
  returned: always
  type: list
  elements: str
thresholds_skipped:
  description: Thresholds not checked, and why (O(min_bw_pct_of_link) on a link of unknown speed with O(link_speed_unknown=skip)).
  returned: always
  type: list
  elements: str
thresholds:
  description: Every threshold evaluated, with C(name), C(limit), C(measured), C(unit) and C(passed).
  returned: always
  type: list
  elements: dict
  sample: [{name: min_bw_gbps, limit: 100.0, measured: 0.39, unit: Gb/s, passed: false}]
perftest_warnings:
  description:
    - "Every warning perftest (or libibverbs) printed, on stderr or stdout, once each, with its continuation line
      (for example C(Requested mtu is higher than active mtu Changing to active mtu - 3),
      C(WARNING: BW peak won't be measured in this run.), C(Device not recognized to implement inline feature.
      Disabling it))."
  returned: always
  type: list
  elements: str
warnings:
  description: Ansible's warnings of the task; each entry of RV(perftest_warnings), prefixed with the test and the side.
  returned: when perftest printed warnings
  type: list
  elements: str
  sample: ["ib_write_bw client: Requested mtu is higher than active mtu Changing to active mtu - 3"]
perftest_error:
  description: perftest's own error message, when the run failed (for a completion error, the side and the status line).
  returned: failure
  type: str
  sample: Failed to modify QP 19 to RTR
error_class:
  description:
    - The kind of failure, when the run failed. One of C(completion_error), C(rdma_cm_rejected),
      C(rdma_cm_unreachable), C(rdma_cm_addr_error), C(rdma_cm_route_error), C(rdma_cm_connect_error),
      C(rdma_cm_event), C(qp_rtr), C(gid_type_mismatch), C(no_device), C(port_query), C(port_not_active),
      C(qp_create), C(device_context), C(tcp_listen), C(tcp_connect), C(rdma_cm_client), C(peer_gone),
      C(timeout) or C(unknown).
  returned: failure
  type: str
  sample: completion_error
error_detail:
  description: For C(completion_error) the work completion status (C(wc_status), C(wc_status_name), for example
    12 and C(IBV_WC_RETRY_EXC_ERR)); for the rdma_cm classes C(cm_event) and, when printed, C(cm_status). Else empty.
  returned: failure
  type: dict
  sample: {wc_status: 12, wc_status_name: IBV_WC_RETRY_EXC_ERR}
hint:
  description: What to check or change for RV(perftest_error); V(null) for an unknown message.
  returned: failure
  type: str
rc:
  description: Exit status of perftest (124 when killed by the timeout).
  returned: when perftest ran (not in check mode)
  type: int
  sample: 0
stdout:
  description: perftest's standard output.
  returned: always
  type: str
stderr:
  description: perftest's standard error.
  returned: always
  type: str
"""

import platform

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpufabric.roce.plugins.module_utils._common import pause_stats as _pause_stats
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.perftest import TESTS, PerftestError, run


def main():
    module = AnsibleModule(
        argument_spec=dict(
            test=dict(type='str', required=True, choices=list(TESTS)),
            role=dict(type='str', required=True, choices=['server', 'client']),
            server=dict(type='str'),
            device=dict(type='str'),
            ib_port=dict(type='int', default=1),
            gid_index=dict(type='raw'),
            netdev=dict(type='str'),
            size=dict(type='int'),
            duration=dict(type='int'),
            iterations=dict(type='int'),
            qps=dict(type='int'),
            report_gbits=dict(type='bool', default=False),
            rdma_cm=dict(type='bool', default=False),
            tclass=dict(type='int'),
            tcp_port=dict(type='int'),
            timeout=dict(type='int', default=60),
            extra_args=dict(type='list', elements='str', default=[]),
            min_bw_gbps=dict(type='float'),
            min_bw_pct_of_link=dict(type='float'),
            link_speed_unknown=dict(type='str', choices=['fail', 'skip'], default='fail'),
            max_lat_us=dict(type='float'),
            sysfs_root=dict(type='path', default='/sys'),
        ),
        required_if=[('role', 'client', ['server'])],
        mutually_exclusive=[('duration', 'iterations')],
        supports_check_mode=True,
    )
    host = platform.node()
    params = module.params
    binary = module.get_bin_path(params['test'], required=False)
    if binary is None and not module.check_mode:
        module.fail_json(msg='%s: test=%s: %s is not installed. Fix: install the perftest package '
                             '(apt/dnf install perftest)' % (host, params['test'], params['test']),
                         field='test', value=params['test'])
    timeout_bin = module.get_bin_path('timeout', required=False)
    if timeout_bin is None and not module.check_mode:
        module.fail_json(msg='%s: timeout=%d: the timeout command (coreutils) is not installed. '
                             'Fix: install coreutils' % (host, params['timeout']), field='timeout', value=params['timeout'])

    def runner(cmd):
        return module.run_command(cmd)

    try:
        # The pause counters come from the running kernel (an ioctl), so only where sysfs is the kernel's own.
        result, error = run(host, params, runner, check_mode=module.check_mode, binary=binary,
                            timeout_bin=timeout_bin or 'timeout',
                            pause_reader=_pause_stats.read if (params.get('sysfs_root') or '/sys') == '/sys' else None)
    except PerftestError as exc:
        module.fail_json(msg=str(exc), field=exc.field, value=exc.value)
    for warning in result['perftest_warnings']:
        module.warn('%s %s: %s' % (params['test'], params['role'], warning))
    if error:
        module.fail_json(msg=error, **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
