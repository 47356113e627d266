# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cross-field rules of the roles' arguments that an argument spec cannot say, run by
gpufabric.roce.validate_role_arguments for every host in the validation plays of playbooks/site.yml,
before phase 1. The late checks stay where they were (the roles' own asserts, the renderers, the node
modules) as a second line; the rules here reuse them where they exist, so both lines agree.

Each check takes the values the role would see on one host (after its argument spec validated and
converted them) and returns problems as (field, value, problem, fix)."""

import os
import re

from ansible_collections.gpufabric.roce.plugins.module_utils._common import NOT_SHOWN, GpufabricError, ifname_problem, secret_field
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_common import RenderValidationError
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s_operator import (
    HELM_DEFAULT_KEYS,
    NCP_DEFAULT_KEYS,
    render_chart_reference,
    render_helm_values,
    render_nic_cluster_policy,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._perftest import THRESHOLDS, threshold_problem
from ansible_collections.gpufabric.roce.plugins.module_utils._perftest_cmdline import TESTS
from ansible_collections.gpufabric.roce.plugins.module_utils._rails import ROCE_DEFAULTS
from ansible_collections.gpufabric.roce.plugins.module_utils._sriov_vf import validate_planned
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import with_role_defaults

# A Go duration as Flux reads spec.interval: 10m, 1h30m, 45s.
GO_DURATION_RE = re.compile(r'([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+\Z', re.ASCII)
PORT_MAX = 65535
_DEFAULTS_FROM = 'host_network_vfs defaults to roce_vfs, host_network_num_vfs to roce_num_vfs'


def _cwd():
    # What the roles' defaults read (lookup env PWD): the directory ansible-playbook runs from.
    return os.environ.get('PWD') or os.getcwd()


def inventory_areas(sources):
    """Where Ansible reads inventory for ``sources`` (ansible_inventory_sources), as (real path, source) pairs: a
    directory source whole; a file source, the file and the group_vars/ and host_vars/ beside it, which are read with it."""
    areas = []
    for s in sources or ():
        path = os.path.expanduser('%s' % s)
        if os.path.isdir(path):
            areas.append((os.path.realpath(path), os.path.realpath(path)))
        elif os.path.isfile(path):
            real = os.path.realpath(path)
            areas += [(real, real)] + [(os.path.join(os.path.dirname(real), sub), real) for sub in ('group_vars', 'host_vars')]
    return areas


def inventory_problem(key, shown, path, sources, example=None):
    """(key, shown, problem, fix) when ``path`` (a real path on the controller) is where Ansible reads inventory for
    ``sources``, else None: the next run would parse what is written there as inventory. ``example``: the file name
    to suggest for an output file; None for an output directory."""
    for area, source in inventory_areas(sources):
        if path != area and not path.startswith(area.rstrip(os.sep) + os.sep):
            continue
        if area != source:
            where = 'is inside %s, which Ansible reads with the inventory source %s' % (area, source)
        else:
            where = '%s the inventory source %s' % ('is' if path == area and not os.path.isdir(area) else 'is inside', source)
        problem = '%s: the next run would read the files written there as inventory (bogus hosts, groups or variables)' % where
        if example is None:
            fix = ('set %s to a directory outside every inventory source, e.g. %s, or run ansible-playbook from a directory that is '
                   'not inside the inventory' % (key, os.path.join(os.path.dirname(area), os.path.basename(path.rstrip(os.sep)) or 'out')))
        else:
            fix = 'set %s to a file outside every inventory source, e.g. %s' % (key, os.path.join(os.path.dirname(area), example))
        return key, shown, problem, fix
    return None


def output_dir_problems(params, sources, defaults):
    """Output directories inside an inventory source (``inventory_problem``). ``defaults``: {option: sub-directory of the
    current directory the role uses when the option is unset} (the argument spec fills an unset option with its doc
    default, which starts with ``<``)."""
    problems = []
    for key, default in defaults.items():
        value = params.get(key)
        given = isinstance(value, str) and value and not value.startswith('<')
        if not given and default is None:
            continue
        path = os.path.realpath(os.path.join(_cwd(), os.path.expanduser(value if given else default)))
        problem = inventory_problem(key, value if given else '%s (the default: %s in the current directory)' % (path, default), path, sources)
        if problem:
            problems.append(problem)
    return problems


def output_file_problem(key, value, path, example):
    """(key, value, problem, fix) when the run cannot write a file at ``path`` (a real path on the controller), else
    None: found before the first change, not when the file is written, after the phases that change the nodes."""
    parent = os.path.dirname(path)
    if os.path.isdir(path):
        return key, value, 'is a directory, not a file', 'give %s the path of a file, e.g. %s' % (key, os.path.join(path, example))
    if os.path.exists(path) and not os.path.isfile(path):
        return key, value, 'is not a regular file', 'give %s the path of a regular file, e.g. %s' % (key, os.path.join(parent, example))
    if not os.path.isdir(parent):
        return (key, value, 'is in %s, which %s' % (parent, 'is not a directory' if os.path.exists(parent) else 'does not exist'),
                'create the directory first (mkdir -p %s), or give %s a file in an existing directory' % (parent, key))
    # The file is written to a temporary file beside it, then renamed: the directory must be writable.
    if not os.access(parent, os.W_OK | os.X_OK):
        return (key, value, 'cannot be written: the user ansible-playbook runs as may not write in %s' % parent,
                'give %s a file in a directory this user may write, or let it write in %s' % (key, parent))
    return None


def same_file_problems(files):
    """[(key, value, problem, fix)] for each file of ``files`` ([(key, value, real path, example, written)]: what the run
    writes, and what it reads, with written False) that an earlier one names too, when the run writes either: one
    file would replace the other, or replace what the run (or a slice beside it) reads."""
    problems, seen = [], {}
    for key, value, path, example, written in files:
        other = seen.get(path)
        if other is None:
            seen[path] = (key, written)
            continue
        if not (written or other[1]):
            continue
        what = 'what this run writes to %s' % other[0] if other[1] else 'the file of %s, which this run reads' % other[0]
        # A name none of the files has (the example may be the shared file's own name).
        stem, ext = os.path.splitext(example)
        names = [example] + ['%s-%d%s' % (stem, i, ext) for i in range(2, len(files) + 2)]
        free = next(os.path.join(os.path.dirname(path), n) for n in names if os.path.join(os.path.dirname(path), n) not in seen)
        problems.append((key, value, 'is the same file as %s: one would replace the other' % what,
                         'give %s a file of its own, e.g. %s' % (key, free)))
    return problems


def output_file_problems(written, sources, read=None):
    """The rules of every file the run writes on the controller, before the first change: outside the inventory (the
    output directories' rule, ``inventory_problem``), a file that can be written (``output_file_problem``) and no two
    of them, nor one the run reads, the same file (``same_file_problems``). ``written``: {variable: absolute path};
    ``read``: {variable: absolute path} of the files the run reads. An unset variable is None. Returns (key, value,
    problem, fix) tuples, one per file at most from the first two rules."""
    problems, files = [], []
    for key, value in list((written or {}).items()) + list((read or {}).items()):
        if value in (None, ''):
            continue
        path = os.path.realpath(os.path.expanduser('%s' % value))
        example = '%s.json' % re.sub(r'^roce_|_out$', '', key)
        files.append((key, value, path, example, key in (written or {})))
        if key in (written or {}):
            problem = inventory_problem(key, value, path, sources, example) or output_file_problem(key, value, path, example)
            if problem:
                problems.append(problem)
    # The files read first: a collision blames the file written, the one to move.
    return problems + same_file_problems(sorted(files, key=lambda f: f[4]))


def _host_network(params, host, inventory, sources=None):
    problems = []
    if params.get('host_network_vf_mode') != 'host':
        return problems  # the VFs are the operator's: roce_vfs is not applied
    if params.get('host_network_drain') and params.get('host_network_allow_vf_reset'):
        for key, example in (('host_network_drain_timeout', 600), ('host_network_drain_poll_interval', 10)):
            value = params.get(key)
            if isinstance(value, int) and value <= 0:
                problems.append((key, value, 'must be a positive number of seconds (the drain before a VF reset)',
                                 'set %s to whole seconds, e.g. %d, or host_network_drain: false to reset the VFs without '
                                 'draining the node' % (key, example)))
    vfs = params.get('host_network_vfs') or []
    num_vfs = params.get('host_network_num_vfs')
    pf = params.get('host_network_sriov_pf')
    if ifname_problem(pf):
        pf = 'pf0'  # its name is refused elsewhere (vlan_gateway_fabric); here it is only named
    seen = set()
    entries = [None] + list(vfs)  # None: num_vfs alone
    for vf in entries:
        if vf is not None and vf.get('id') in seen:
            problems.append(('host_network_vfs[id=%s]' % vf['id'], vf['id'], 'VF id listed twice',
                             'merge the settings of VF %s into one entry of roce_vfs (host_network_vfs)' % vf['id']))
            continue
        if vf is not None and not (isinstance(vf, dict) and isinstance(vf.get('id'), int) and not isinstance(vf.get('id'), bool)):
            continue  # the spec's message names it
        try:
            # As sriov_vf will see them on the node (the PF, its totalvfs, a VF reset are checked there).
            validate_planned(host, pf, num_vfs=num_vfs, vfs=[] if vf is None else [{k: v for k, v in vf.items() if v is not None}])
        except (TypeError, ValueError):
            continue  # a value of the wrong type, which the spec's message names
        except GpufabricError as exc:
            field = 'host_network_num_vfs' if exc.field == 'num_vfs' else 'host_network_' + exc.field
            problem = exc.problem.replace('PF pf0 ', 'the PF ') if pf == 'pf0' else exc.problem
            problems.append((field, exc.value, problem, '%s (%s)' % (exc.fix, _DEFAULTS_FROM)))
            if vf is None:
                return problems  # every id check would repeat the VF count's problem
        if vf is not None:
            seen.add(vf.get('id'))
    return problems


def _shown_kubeconfig(value):
    """A kubeconfig of the wrong type as the user wrote it (a list as the list), but never a mapping's content:
    a kubeconfig mapping carries credentials."""
    if isinstance(value, (list, tuple)):
        return [v if v is None or isinstance(v, (str, int, float, bool)) else '<a mapping, not shown>' for v in value]
    return value if isinstance(value, (int, float, bool)) else '<%s>' % type(value).__name__


def _network_operator(params, host, inventory, sources=None):
    # The manifests are written in render mode only.
    written = {'roce_render_dir': 'render-out'} if params.get('roce_k8s_mode') == 'render' else {}
    problems, seen = output_dir_problems(params, sources, written), set()
    # Read when given; it has no fallback (its role default is derived from roce_qos_via).
    optional = ('network_operator_nic_configuration_operator',)
    for render, keys in ((render_helm_values, HELM_DEFAULT_KEYS), (render_chart_reference, HELM_DEFAULT_KEYS),
                         (render_nic_cluster_policy, NCP_DEFAULT_KEYS)):
        cfg = with_role_defaults('network_operator', keys, {k: params[k] for k in keys + optional if k in params})
        try:
            render(cfg)
        except RenderValidationError as exc:
            for e in exc.errors:
                if (e['field'], e['problem']) not in seen:
                    seen.add((e['field'], e['problem']))
                    problems.append((e['field'], e['value'], e['problem'], e['fix']))
    for key in ('network_operator_helm_timeout', 'network_operator_ready_timeout', 'network_operator_poll_interval'):
        value = params.get(key)
        if value is not None and value <= 0:
            problems.append((key, value, 'must be a positive number of seconds',
                             'set %s to whole seconds, e.g. 600 (a duration such as 10m is 600)' % key))
    interval = (params.get('network_operator_gitops') or {}).get('flux_interval')
    if interval is not None and not GO_DURATION_RE.match('%s' % interval):
        problems.append(('network_operator_gitops.flux_interval', interval, 'is not a duration Flux reads',
                         'write a Go duration such as 10m, 1h or 90s'))
    kubeconfig = params.get('network_operator_kubeconfig')
    if params.get('roce_k8s_mode', ROCE_DEFAULTS['roce_k8s_mode']) == 'apply' and isinstance(kubeconfig, str) and kubeconfig:
        # The value is never shown: a kubeconfig pasted as a string (its content, not a path) is a secret.
        if not os.path.isfile(os.path.expanduser(kubeconfig)):
            problems.append(('network_operator_kubeconfig', NOT_SHOWN,
                             'is a string but not the path of a file on the controller (the value is not shown: it may be '
                             "a kubeconfig's content)",
                             'set network_operator_kubeconfig to the path of a kubeconfig file on the controller (AWX - a '
                             'credential file), give its content as a mapping (YAML, not a string), or leave it empty for '
                             '~/.kube/config or the in-cluster account'))
    elif kubeconfig not in (None, '') and not isinstance(kubeconfig, (str, dict)):
        problems.append(('network_operator_kubeconfig', _shown_kubeconfig(kubeconfig), 'must be a path or a mapping',
                         'set it to the path of a kubeconfig file on the controller or to its content as a mapping'))
    return problems


# rdma_verify: (option, lowest allowed, what it is)
_RDMA_MINIMA = (
    ('rdma_verify_ib_port', 1, 'an HCA port number'),
    ('rdma_verify_bw_size', 1, 'a message size in bytes'),
    ('rdma_verify_bw_duration', 1, 'a duration in seconds'),
    ('rdma_verify_lat_size', 1, 'a message size in bytes'),
    ('rdma_verify_lat_iterations', 5, 'an iteration count (perftest needs at least 5)'),
    ('rdma_verify_qps', 1, 'a queue-pair count'),
    ('rdma_verify_client_timeout', 1, 'a timeout in seconds'),
    ('rdma_verify_server_timeout', 1, 'a timeout in seconds'),
    ('rdma_verify_connect_retries', 0, 'a retry count'),
    ('rdma_verify_ping_count', 1, 'a ping count'),
    ('rdma_verify_ping_timeout', 1, 'a timeout in seconds'),
)


def _rdma_verify(params, host, inventory, sources=None):
    # Both are real role defaults, templated before this check; the pod manifests are written in pod mode's render only.
    written = {'rdma_verify_report_dir': None}
    if params.get('rdma_verify_mode') == 'pod' and params.get('rdma_verify_pod_action') == 'render':
        written['rdma_verify_pod_render_dir'] = None
    problems = output_dir_problems(params, sources, written)
    for key, low, what in _RDMA_MINIMA:
        value = params.get(key)
        if value is not None and value < low:
            problems.append((key, value, 'must be at least %s (%s)' % (low, what), 'set %s to %s or more, or leave it unset' % (key, low)))
    for name in THRESHOLDS:
        key = 'rdma_verify_' + name
        value = params.get(key)
        problem = threshold_problem(name, value) if value is not None else None
        if problem:
            # The perftest module's rule, as it would refuse the value in phase 5.
            problems.append((key, value, problem[0], '%s (%s: %s), or leave it unset for no threshold' % (problem[1], key, problem[1].rsplit(' ', 1)[-1])))
    if params.get('rdma_verify_mode') == 'pod' and not params.get('rdma_verify_pod_image'):
        problems.append(('rdma_verify_pod_image', params.get('rdma_verify_pod_image'), 'is empty, and rdma_verify_mode is pod: the test pods need an image',
                         'set rdma_verify_pod_image to an image with perftest and ping (a mirror for air-gapped clusters), '
                         'or set rdma_verify_mode: host'))
    if params.get('rdma_verify_mode') == 'pod' and params.get('rdma_verify_full_duplex'):
        problems.append(('rdma_verify_full_duplex', True, 'is for host mode, and rdma_verify_mode is pod',
                         'leave rdma_verify_full_duplex unset (false) in pod mode, or set rdma_verify_mode: host'))
    port = params.get('rdma_verify_tcp_port')
    if port is not None and not 1 <= port <= PORT_MAX:
        problems.append(('rdma_verify_tcp_port', port, 'is not a TCP port (1..65535)', 'set rdma_verify_tcp_port to a free port, e.g. 18515'))
    tests = params.get('rdma_verify_tests')
    if tests is not None:
        unknown = [t for t in tests if t not in TESTS]
        if unknown or not tests:
            problems.append(('rdma_verify_tests', tests, 'unknown test(s) %s' % ', '.join(unknown) if unknown else 'is empty',
                             'list perftest programs among %s, e.g. [ib_write_bw, ib_write_lat]' % ', '.join(TESTS)))
    hosts = params.get('rdma_verify_hosts')
    if hosts is not None and inventory is not None:
        missing = [h for h in hosts if h not in inventory]
        if missing:
            problems.append(('rdma_verify_hosts', hosts, 'not in the inventory: %s' % ', '.join(missing),
                             'list inventory hosts of roce_nodes (check the spelling), or leave rdma_verify_hosts unset for the whole group'))
    gid = params.get('rdma_verify_gid_index')
    if gid is not None and gid != 'auto' and not re.match(r'[0-9]+\Z', '%s' % gid, re.ASCII):
        problems.append(('rdma_verify_gid_index', gid, 'is neither auto nor a GID index', 'set rdma_verify_gid_index to auto or a number such as 3'))
    client, server = params.get('rdma_verify_client_timeout'), params.get('rdma_verify_server_timeout')
    duration = params.get('rdma_verify_bw_duration')
    if client is not None and duration is not None and client < duration + 5:
        problems.append(('rdma_verify_client_timeout', client, 'is below rdma_verify_bw_duration + 5 (%s)' % (duration + 5),
                         'set rdma_verify_client_timeout to at least %s' % (duration + 5)))
    if client is not None and server is not None and server <= client:
        problems.append(('rdma_verify_server_timeout', server, 'must exceed rdma_verify_client_timeout (%s)' % client,
                         'set rdma_verify_server_timeout above %s, e.g. %s' % (client, client + 30)))
    return problems


CHECKS = {
    'host_network': _host_network,
    'network_operator': _network_operator,
    'rdma_verify': _rdma_verify,
}


# Lists whose entries are checked one by one even when the spec refused one of them (an unknown key in one
# VF entry must not hide a bad MAC in another); an entry the rules cannot read is left to the spec's message.
_PER_ENTRY = frozenset(('host_network_vfs',))


def redact(field, value, message):
    """(value, message) safe to show for ``field``: a secret-bearing value is replaced, and removed from the message
    (an argument spec message may quote it)."""
    if not secret_field(field) or value in (None, ''):
        return value, message
    text = '%s' % message
    for s in _quoted_forms(value):
        if len(s) >= 4:
            text = text.replace(s, NOT_SHOWN)
    return NOT_SHOWN, text


def _quoted_forms(value):
    """Every form in which a message may quote ``value``: each key and scalar as text, and a container's repr."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _quoted_forms(k)
            yield from _quoted_forms(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _quoted_forms(v)
    elif value is not None:
        yield '%s' % value
    if isinstance(value, (dict, list, tuple)):
        yield repr(value)


def role_problems(role_short, params, host, inventory=None, refused=(), *, sources=None):
    """[(field, value, problem, fix)] of the cross-field rules of ``role_short`` for one host's values.
    ``refused`` names the options the argument spec refused: their values are not converted, so the
    rules skip them (the spec's message names them already). ``sources``: the inventory sources of the run
    (ansible_inventory_sources), which no output directory may be inside."""
    check = CHECKS.get(role_short)
    if not check:
        return []
    params = {k: v for k, v in params.items() if k not in refused or k in _PER_ENTRY}
    return check(params, host, inventory, sources)
