# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cross-field rules of the roles' arguments that an argument spec cannot say, run by
gpufabric.roce.validate_role_arguments for every host in the validation plays of playbooks/site.yml,
before phase 1. The late checks stay where they were (the roles' own asserts, the renderers, the node
modules) as a second line; the rules here reuse them where they exist, so both lines agree.

Each check takes the values the role would see on one host (after its argument spec validated and
converted them) and returns problems as (field, value, problem, fix). A rule that reads variables outside the role's
options names them in READS: the action resolves them as the role would see them and hands them over in ``reads``.
WARNINGS are rules of the same form whose values are legal but surprising: said once, before the change."""

import contextlib
import os
import posixpath
import re

from ansible import constants as C

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import NOT_SHOWN, GpufabricError, ifname_problem, secret_field, shown_value
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import DNS_LABEL_RE, RenderValidationError, is_dns_subdomain
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.operator import (
    HELM_DEFAULT_KEYS,
    NCP_DEFAULT_KEYS,
    render_chart_reference,
    render_helm_values,
    render_nic_cluster_policy,
)
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.perftest import THRESHOLDS, threshold_problem
from ansible_collections.gpufabric.roce.plugins.module_utils._verify.perftest_cmdline import TESTS
from ansible_collections.gpufabric.roce.plugins.module_utils._common.qos import effective_qos
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import ROCE_DEFAULTS
from ansible_collections.gpufabric.roce.plugins.module_utils._common.vf_settings import validate_planned
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


def _node_name_problem(key, value, fix):
    """(key, value, problem, fix) when ``value`` is not a Kubernetes node name (a DNS-1123 subdomain), else None."""
    if is_dns_subdomain(value):
        return None
    return (key, value, "is not a Kubernetes node name (a DNS-1123 subdomain: at most 253 lower-case letters, digits, '-' "
            "and '.', starting and ending with a letter or digit)", fix)


def _host_network(params, host, inventory, sources=None, reads=None):
    problems = []
    name = params.get('host_network_node_name')
    if name:
        problem = _node_name_problem('host_network_node_name', name, "set host_network_node_name to the node's name as kubectl get "
                                     "nodes shows it, or leave it empty for roce_node_name (else the inventory hostname)")
        if problem:
            problems.append(problem)
    if params.get('host_network_vf_mode') != 'host':
        return problems  # the VFs are the operator's: roce_vfs is not applied, and nothing is drained
    if params.get('host_network_drain') and params.get('host_network_allow_vf_reset'):
        for key, example in (('host_network_drain_timeout', 600), ('host_network_drain_poll_interval', 10)):
            value = params.get(key)
            if isinstance(value, int) and value <= 0:
                problems.append((key, value, 'must be a positive number of seconds (the drain before a VF reset)',
                                 'set %s to whole seconds, e.g. %d, or host_network_drain: false to reset the VFs without '
                                 'draining the node' % (key, example)))
        delegate = params.get('host_network_drain_delegate_to')
        # Ansible's implicit localhost needs no inventory entry.
        if isinstance(delegate, str) and inventory is not None and delegate not in inventory and delegate not in C.LOCALHOST:
            problems.append(('host_network_drain_delegate_to', delegate,
                             'is not a host of the inventory: the drain before a VF reset runs its Kubernetes tasks there',
                             'set host_network_drain_delegate_to to an inventory host with access to the cluster (check the '
                             'spelling), e.g. localhost, or leave it unset for the first host of k8s_controller (else localhost)'))
    plan_problems = _plan_value_problems(params, (reads or {}).get('plan_values') or {})
    if plan_problems:
        return problems + plan_problems
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


def _network_operator(params, host, inventory, sources=None, reads=None):
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
                if (e.field, e.problem) not in seen:
                    seen.add((e.field, e.problem))
                    problems.append((e.field, e.value, e.problem, e.fix))
    for key in ('network_operator_helm_timeout', 'network_operator_ready_timeout', 'network_operator_poll_interval'):
        value = params.get(key)
        if value is not None and value <= 0:
            problems.append((key, value, 'must be a positive number of seconds',
                             'set %s to whole seconds, e.g. 600 (a duration such as 10m is 600)' % key))
    gitops = params.get('network_operator_gitops') or {}
    interval = gitops.get('flux_interval')
    if interval is not None and not GO_DURATION_RE.match('%s' % interval):
        problems.append(('network_operator_gitops.flux_interval', interval, 'is not a duration Flux reads',
                         'write a Go duration such as 10m, 1h or 90s'))
    problems += _gitops_problems(gitops, bool(params.get('network_operator_chart_path')))
    problem = _ipam_problem(params, reads or {})
    if problem:
        problems.append(problem)
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


# What a Flux Kustomization's sourceRef may name (kustomize.toolkit.fluxcd.io/v1), and of them what the HelmRelease of a
# local chart may name as its chart's source (helm.toolkit.fluxcd.io/v2 chart.spec.sourceRef: no OCIRepository there).
FLUX_SOURCE_KINDS = ('GitRepository', 'OCIRepository', 'Bucket')
FLUX_CHART_SOURCE_KINDS = ('GitRepository', 'Bucket')
_FLUX_SOURCE_KEYS = ('kind', 'name', 'namespace')


def _gitops_problems(gitops, local_chart):
    """The GitOps roots' settings that render objects Flux or Argo CD refuse, or paths outside the GitOps repository."""
    problems = []
    for key in ('flux_namespace', 'argocd_namespace'):
        value = gitops.get(key)
        if value is not None and not (isinstance(value, str) and DNS_LABEL_RE.match(value) and len(value) <= 63):
            problems.append(('network_operator_gitops.%s' % key, value, 'is not a namespace name (a DNS-1123 label)',
                             'use lower-case letters, digits and "-", at most 63, e.g. %s' % ('flux-system' if key.startswith('flux') else 'argocd')))
    source = gitops.get('flux_source')
    if isinstance(source, dict):
        problems += _flux_source_problems(source, local_chart)
    elif source is not None:
        problems.append(('network_operator_gitops.flux_source', source, 'must be a mapping with kind and name',
                         'write e.g. {kind: GitRepository, name: flux-system}'))
    path = gitops.get('repo_path')
    if path is not None:
        norm = posixpath.normpath('%s' % path) if path else ''
        if not path or norm.startswith('/') or norm == '..' or norm.startswith('../'):
            problems.append(('network_operator_gitops.repo_path', path,
                             'is not a path inside the GitOps repository: Flux reads its Kustomizations\' paths (and Argo CD a local '
                             "chart's) from the repository's root and cannot leave it",
                             "write where roce_render_dir sits in the GitOps repository, relative to its root, e.g. ./render-out or "
                             "./clusters/a/render-out, or leave it unset for ./ and the name of roce_render_dir"))
    return problems


def _flux_source_problems(source, local_chart):
    field = 'network_operator_gitops.flux_source'
    unknown = sorted(set(source) - set(_FLUX_SOURCE_KEYS))
    if unknown:
        return [(field, unknown, 'unknown key(s)', 'use only: %s' % ', '.join(_FLUX_SOURCE_KEYS))]
    problems = []
    kinds = FLUX_CHART_SOURCE_KINDS if local_chart else FLUX_SOURCE_KINDS
    kind = source.get('kind')
    if kind not in kinds:
        meant = next((k for k in kinds if isinstance(kind, str) and k.lower() == kind.lower()), kinds[0])
        why = (' (network_operator_chart_path is set: the HelmRelease reads the chart from this source, and a chart\'s '
               'sourceRef is %s)' % ' or '.join(kinds)) if local_chart and kind in FLUX_SOURCE_KINDS else ''
        problems.append((field + '.kind', kind, 'is not a kind of Flux source a Kustomization can name (%s; Flux spells '
                         'them exactly)%s' % (', '.join(kinds), why), 'set kind: %s' % meant))
    name = source.get('name')
    if not is_dns_subdomain(name):
        problems.append((field + '.name', name, 'is not the name of a Kubernetes object',
                         'set name to the Flux source of the GitOps repository, e.g. flux-system (flux get sources all)'))
    ns = source.get('namespace')
    if ns not in (None, '') and not (isinstance(ns, str) and DNS_LABEL_RE.match(ns) and len(ns) <= 63):
        problems.append((field + '.namespace', ns, 'is not a namespace name (a DNS-1123 label)',
                         'use the namespace of the Flux source, e.g. flux-system, or leave it unset for flux_namespace'))
    return problems


def _ipam_problem(params, reads):
    """network_operator_ipam: whereabouts deploys no IPAM (the NicClusterPolicy of 26.x has no whereabouts): refused where
    nothing would give the SriovNetworks' pods addresses, or nothing can tell that something does. One message."""
    if params.get('network_operator_ipam') != 'whereabouts':
        return None
    sriov_ipam = reads.get('sriov_networks_ipam')
    if sriov_ipam == 'nv-ipam':
        return ('network_operator_ipam', 'whereabouts',
                'deploys no IPAM (the NicClusterPolicy of network-operator 26.x has no whereabouts), and sriov_networks_ipam is '
                'nv-ipam: nothing would serve its pools, and no pod on the SriovNetworks would get an address',
                'set network_operator_ipam: nv-ipam (the default), which deploys the NVIDIA IPAM that sriov_networks_ipam: nv-ipam needs')
    if params.get('roce_k8s_mode', ROCE_DEFAULTS['roce_k8s_mode']) != 'render':
        return None  # apply mode checks that the whereabouts CRD is in the cluster before the first change
    return ('network_operator_ipam', 'whereabouts',
            'deploys no IPAM (the NicClusterPolicy of network-operator 26.x has no whereabouts), and render mode cannot check '
            'that the cluster has whereabouts (apply mode does): pods on SriovNetworks with whereabouts IPAM would not start '
            'without it',
            'set network_operator_ipam: nv-ipam (the default; with sriov_networks_ipam: nv-ipam or host-local), or '
            'network_operator_ipam: none when you install whereabouts in the cluster yourself (k8snetworkplumbingwg/whereabouts) '
            'for sriov_networks_ipam: whereabouts')


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
    ('rdma_verify_remeasure_attempts', 0, 'a count of attempts'),
    ('rdma_verify_pod_poll_interval', 1, 'an interval in seconds'),
)
# rdma_verify: (option, highest allowed, why)
_RDMA_MAXIMA = (
    ('rdma_verify_remeasure_attempts', 10, 'each attempt is one more round of perftest over the pairs left, and one more loop '
     'item of every node'),
)


def _rdma_verify(params, host, inventory, sources=None, reads=None):
    # Both are real role defaults, templated before this check; the pod manifests are written in pod mode's render only.
    written = {'rdma_verify_report_dir': None}
    if params.get('rdma_verify_mode') == 'pod' and params.get('rdma_verify_pod_action') == 'render':
        written['rdma_verify_pod_render_dir'] = None
    problems = output_dir_problems(params, sources, written)
    for key, low, what in _RDMA_MINIMA:
        value = params.get(key)
        if value is not None and value < low:
            problems.append((key, value, 'must be at least %s (%s)' % (low, what), 'set %s to %s or more, or leave it unset' % (key, low)))
    for key, high, why in _RDMA_MAXIMA:
        value = params.get(key)
        if value is not None and value > high:
            problems.append((key, value, 'must be at most %s (%s)' % (high, why), 'set %s to %s or less, or leave it unset' % (key, high)))
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


def _preflight(params, host, inventory, sources=None, reads=None):
    # An empty list in a node's host_vars hides the group's rails: the PF default (the first rail's) is then missing.
    if (reads or {}).get('roce_rails') == [] and not params.get('preflight_pf'):
        return [('roce_rails', [], 'is empty on this node, and roce_pf is not set: the node has neither rails nor the one rail '
                 'of roce_pf (an empty roce_rails in host_vars replaces the group\'s rails, it does not add to them)',
                 "remove roce_rails: [] from this node's host_vars to give it the rails of group_vars/roce_nodes, or list its "
                 "rails; a one-rail node leaves roce_rails unset and sets roce_pf, roce_pod_subnet and roce_pod_gateway")]
    return _plan_value_problems(params, (reads or {}).get('plan_values') or {})


def _rails_tos_warning(params, host, inventory, sources=None, reads=None):
    """Rails whose ToS differ leave NCCL_IB_TC unset (_fabric.nccl.nccl_env: one traffic class for all HCAs): legal, and said
    before the change rather than only in phase 2's NCCL settings."""
    reads = reads or {}
    rails, cluster = reads.get('roce_rails'), reads.get('roce_qos')
    if not rails or not params.get('host_network_nccl'):
        return []
    overrides = reads.get('rail_overrides_qos') or {}
    tos = []  # (rail, tos, the variable that set it)
    for rail in rails:
        if not isinstance(rail, dict):
            return []  # the fabric plan names a rail that is not a mapping
        name, override, own = rail.get('name'), overrides.get(rail.get('name')), rail.get('qos')
        qos, problems = effective_qos(cluster, own, override, name)
        if qos is None or problems:
            return []  # QoS off on a rail, or refused by the fabric plan with its own message
        where = next((f for f, layer in (('roce_rail_overrides.%s.qos' % name, override), ('roce_rails[%s].qos' % name, own))
                      if isinstance(layer, dict) and layer.get('tos') is not None), 'roce_qos')
        tos.append((name, qos['tos'], where + '.tos'))
    counts = {}
    for _name, value, _where in tos:
        counts[value] = counts.get(value, 0) + 1
    if len(counts) < 2:
        return []
    meant = max(counts, key=lambda v: (counts[v], -[t[1] for t in tos].index(v)))
    odd = [t for t in tos if t[1] != meant]
    return [(odd[0][2], odd[0][1],
             "differs from the ToS of the node's other rails (%s): NCCL_IB_TC is one traffic class for all of a job's HCAs, so "
             "host_network will not set it, and NCCL then sends on traffic class 0, outside the lossless priority"
             % ', '.join('%s %d' % (name, value) for name, value, _w in tos),
             'give every rail the same tos: set it once in roce_qos and remove the rails\' own (%s); or keep them and set '
             'NCCL_IB_TC in the jobs yourself' % ', '.join(sorted({w for _n, _v, w in tos if w != 'roce_qos.tos'})))]


def _ipam_none_warning(params, host, inventory, sources=None, reads=None):
    """network_operator_ipam: none beside sriov_networks_ipam: nv-ipam is legal (nv-ipam deployed some other way), which the
    inventory cannot tell: said before the change rather than by pods without addresses."""
    if params.get('network_operator_ipam') != 'none' or (reads or {}).get('sriov_networks_ipam') != 'nv-ipam':
        return []
    return [('network_operator_ipam', 'none',
             'deploys no IPAM, and sriov_networks_ipam is nv-ipam: unless nv-ipam is deployed in the cluster some other way, '
             "nothing serves the SriovNetworks' pools and their pods get no address",
             'set network_operator_ipam: nv-ipam (the default) and run the operator phase (--tags operator) before the sriov phase')]


def _as_list(value):
    return value if isinstance(value, list) else None


def _preflight_reads(lookup):
    rails = lookup('roce_rails')
    if rails == []:
        return {'roce_rails': []}
    # A one-rail node with a pod network is checked against its plan.
    return {} if rails else _one_rail_plan_reads(lookup, ('preflight_pf', 'preflight_sriov_pf', 'preflight_num_vfs', 'preflight_min_mtu'))


def _network_operator_reads(lookup):
    ipam = lookup('sriov_networks_ipam')
    if ipam is None:
        ipam = with_role_defaults('sriov_networks', ('sriov_networks_ipam',))['sriov_networks_ipam']
    return {'sriov_networks_ipam': ipam}


def _host_network_reads(lookup):
    # roce_qos and roce_rails are mostly group_vars' own objects, which the memo key takes by identity; of a node's
    # roce_rail_overrides only the QoS (a node's own pf does not make its key differ from the others').
    rails, cluster = _as_list(lookup('roce_rails')), lookup('roce_qos')
    if not rails:
        # A one-rail node with a pod network: its VFs are its plan's.
        return _one_rail_plan_reads(lookup, ('host_network_sriov_pf', 'host_network_num_vfs', 'host_network_vfs'))
    if cluster is None or len(rails) < 2:
        return {}
    overrides = lookup('roce_rail_overrides')
    own = {name: o['qos'] for name, o in overrides.items() if isinstance(o, dict) and o.get('qos') is not None} \
        if isinstance(overrides, dict) else {}
    return {'roce_qos': cluster, 'roce_rails': rails, 'rail_overrides_qos': own or None}


# What a one-rail node's fabric plan reads for the roles' options that default to it: {option: the variable(s)}.
_PLAN_VARS = {'host_network_sriov_pf': 'roce_sriov_pf (else roce_pf)', 'host_network_num_vfs': 'roce_num_vfs',
              'host_network_vfs': 'roce_vfs', 'preflight_pf': 'roce_pf', 'preflight_sriov_pf': 'roce_sriov_pf (else roce_pf)',
              'preflight_num_vfs': 'roce_num_vfs', 'preflight_min_mtu': 'roce_mtu'}
_PLAN_INTS = {'host_network_num_vfs': 'roce_num_vfs', 'preflight_num_vfs': 'roce_num_vfs', 'preflight_min_mtu': 'roce_mtu'}


def _one_rail_plan_reads(lookup, options):
    """What a one-rail node's fabric plan reads for ``options``, or {} for a node without a pod network (no plan). Whether
    it has one, not its subnet: the memo key stays the same for the nodes of one group_vars."""
    if lookup('roce_pod_subnet') is None:
        return {}
    values = {'roce_pf': lookup('roce_pf'), 'roce_sriov_pf': lookup('roce_sriov_pf') or lookup('roce_pf'),
              'roce_num_vfs': lookup('roce_num_vfs'), 'roce_vfs': lookup('roce_vfs') or [], 'roce_mtu': lookup('roce_mtu')}
    return {'plan_values': {o: values[_PLAN_VARS[o].split(' ')[0]] for o in options}}


def _plan_value_problems(params, planned_values):
    """The roles' options set apart from what the node's fabric plan reads (a one-rail node with a pod network is
    configured and checked from its plan, as a rail is): refused, not ignored."""
    problems = []
    for key, value in planned_values.items():
        var, mine, same, planned = _PLAN_VARS[key], params.get(key), True, value
        if key in _PLAN_INTS and planned is None:
            planned = ROCE_DEFAULTS[_PLAN_INTS[key]]
        if key in _PLAN_INTS:
            with contextlib.suppress(TypeError, ValueError):  # a value of the wrong type: the spec's message names it
                same = int(mine) == int(planned)
        elif key == 'host_network_vfs':
            same = [_set_keys(v) for v in mine or []] == [_set_keys(v) for v in planned or []]
        else:
            same = mine in (None, '', planned)
        if not same:
            problems.append((key, mine, 'differs from %s (%s), which the node\'s fabric plan reads' % (var, shown_value(planned)),
                             'set %s instead (the plan\'s variable; %s applies only to a node without a pod network), or remove %s'
                             % (var.split(' ')[0], key, key)))
    return problems


def _set_keys(vf):
    return {k: v for k, v in vf.items() if v is not None} if isinstance(vf, dict) else vf


CHECKS = {
    'host_network': _host_network,
    'network_operator': _network_operator,
    'preflight': _preflight,
    'rdma_verify': _rdma_verify,
}
WARNINGS = {
    'host_network': _rails_tos_warning,
    'network_operator': _ipam_none_warning,
}
# What the rules of a role read besides its options: lookup(name) gives the variable as the role sees it on the host
# (None when unset); the result goes to the rules as ``reads`` and is part of their memo key, so keep it small.
READS = {
    'host_network': _host_network_reads,
    'network_operator': _network_operator_reads,
    'preflight': _preflight_reads,
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


def role_reads(role_short, lookup):
    """What the rules of ``role_short`` read besides its options (READS), through ``lookup(name)``: {} when nothing."""
    reads = READS.get(role_short)
    return reads(lookup) if reads else {}


def role_problems(role_short, params, host, inventory=None, refused=(), *, sources=None, reads=None, rules=None):
    """[(field, value, problem, fix)] of the cross-field rules of ``role_short`` for one host's values.
    ``refused`` names the options the argument spec refused: their values are not converted, so the
    rules skip them (the spec's message names them already). ``sources``: the inventory sources of the run
    (ansible_inventory_sources), which no output directory may be inside. ``reads``: ``role_reads``' answer.
    ``rules``: CHECKS (the default) or WARNINGS."""
    check = (CHECKS if rules is None else rules).get(role_short)
    if not check:
        return []
    params = {k: v for k, v in params.items() if k not in refused or k in _PER_ENTRY}
    return check(params, host, inventory, sources, reads or {})


def role_warnings(role_short, params, host, inventory=None, refused=(), *, sources=None, reads=None):
    """Like ``role_problems``, for the WARNINGS rules: legal values that do something the user may not expect."""
    return role_problems(role_short, params, host, inventory, refused, sources=sources, reads=reads, rules=WARNINGS)
