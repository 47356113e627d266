# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One mistake, one message: the findings of checks that run per node, grouped across the nodes that share them.

A bad line in group_vars makes every node of the group fail the same check. Each node's findings are texts that begin
with the node's name (``node7: roce_pf=... is not a netdev ...``); without that name, identical findings are one problem,
listed once with the nodes that have it (``node1 (and 63 other nodes: ...)``) and where the value they read is set (the
file and line Ansible read it from: ``Source: roce_pf in .../group_vars/roce_nodes.yml:3``).

Per-node checks fail per node (a play's max_fail_percentage counts the nodes), so the grouped list is the failure
message of one node, the *reporter*: the first node of the batch with a finding. Every other failing node's message
points to it. Only the reporter reads every node's findings; the others read the nodes before them, at most WINDOW."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import re

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import shown_value
from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.pod_network import hosts_named

try:  # ansible-core 2.19 and later tag every value it reads from a file with where it read it
    from ansible._internal._datatag._tags import Origin
except ImportError:  # pragma: no cover - older ansible-core: findings are grouped without their source
    Origin = None

# How many nodes of the batch a failing node looks through for the reporter. Beyond it, a node reports its own
# findings: a batch whose first nodes pass would otherwise make every failing node read every node before it.
WINDOW = 50


def origin(value):
    """Where Ansible read ``value`` (``path:line``, or a description such as the extra vars), or None."""
    tag = Origin.get_tag(value) if Origin is not None else None
    if tag is None:
        return None
    if tag.path:
        return '%s:%d' % (tag.path, tag.line_num) if tag.line_num else '%s' % tag.path
    return tag.description or None


def without_host(text, host):
    """A finding's text without the node's name where a sentence starts with it (``node7: ...``)."""
    return re.sub(r'(^|(?<=[.;] ))%s: ' % re.escape(host), '', ' '.join(('%s' % text).split()))


def _raw(hostvars, host):
    raw = hostvars.raw_get(host) if hasattr(hostvars, 'raw_get') else hostvars.get(host)
    return raw if isinstance(raw, dict) else {}


def _entries(findings):
    """A node's findings as (text, names of the variables whose value it is about): each is a text or {msg, vars}."""
    out = []
    for f in findings or []:
        if isinstance(f, dict):
            names = f.get('vars') or []
            out.append(('%s' % f.get('msg', ''), [names] if isinstance(names, str) else list(names)))
        else:
            out.append(('%s' % f, []))
    return [(t, n) for t, n in out if t.strip()]


def source_of(raws, names):
    """Where the nodes of ``raws`` ({host: raw variables}) set the first of ``names`` one of them sets:
    ``roce_pf in <path:line>`` (the same place for all) or ``... (and N other places)``; None when unknown."""
    for name in names:
        places = []
        for raw in raws.values():
            if name in raw:
                where = origin(raw[name])
                if where is None:
                    return None  # set where Ansible keeps no origin (a template's result, a fact)
                if where not in places:
                    places.append(where)
        if places:
            more = len(places) - 1
            return '%s in %s%s' % (name, places[0], ' (and %d other place%s)' % (more, '' if more == 1 else 's') if more else '')
    return None


def group(node_findings, raws=None):
    """``node_findings``: [(host, findings)] in play order. Returns [(hosts, text, source)], one per distinct finding,
    in the order first seen."""
    groups = {}
    for host, findings in node_findings:
        for text, names in _entries(findings):
            key = without_host(text, host)
            entry = groups.setdefault(key, {'hosts': [], 'names': []})
            entry['hosts'].append(host)
            entry['names'].extend(n for n in names if n not in entry['names'])
    out = []
    for text, entry in groups.items():
        source = None
        if raws is not None and entry['names']:
            source = source_of({h: raws[h] for h in entry['hosts'] if h in raws}, entry['names'])
        out.append((entry['hosts'], text, source))
    return out


def report(node_findings, what, raws=None):
    """The grouped findings as one message: every distinct finding, as the other nodes' messages point here."""
    groups = group(node_findings, raws)
    failing = [h for h, findings in node_findings if _entries(findings)]
    lines = ['%s: %d problem%s on %d node%s (a problem several nodes share is listed once, naming them):' % (
        what[:1].upper() + what[1:], len(groups), '' if len(groups) == 1 else 's', len(failing), '' if len(failing) == 1 else 's')]
    for hosts, text, source in groups:
        line = '  - %s: %s' % (hosts_named(hosts), text)
        if source:
            line += '%s Source: %s.' % ('' if line.endswith('.') else '.', source)
        lines.append(line)
    return '\n'.join(lines)


def _findings_of(hostvars, host, key):
    value = _raw(hostvars, host).get(key)
    return value if isinstance(value, (list, tuple)) else []


def _own(findings):
    return ' '.join(' '.join(t.split()) for t, _n in _entries(findings))


def message(hostvars, batch, key, host, what, *, grouping=True):
    """The failure message of ``host`` for the findings each node of ``batch`` holds in its variable ``key``: the
    grouped report when ``host`` is the reporter, a pointer to the reporter otherwise, and the host's own findings
    when nothing is grouped (``grouping`` false: under the free strategy the other nodes may not have checked yet).
    Empty when ``host`` has no finding."""
    own = _findings_of(hostvars, host, key)
    if not _entries(own):
        return ''
    batch = ['%s' % h for h in batch or []]
    if not grouping or host not in batch:
        return _own(own)
    reporter = None
    for other in batch[:WINDOW]:
        if other == host or _entries(_findings_of(hostvars, other, key)):
            reporter = other
            break
    if reporter is None:
        return _own(own)
    if reporter != host:
        count = len(_entries(own))
        return '%s: %s: %d problem%s, listed with every other node\'s in the message of %s (one line per problem, naming the nodes).' % (
            host, what, count, '' if count == 1 else 's', reporter)
    raws = {h: _raw(hostvars, h) for h in batch}
    node_findings = [(h, raws[h].get(key) if isinstance(raws[h].get(key), (list, tuple)) else []) for h in batch]
    if sum(1 for _h, findings in node_findings if _entries(findings)) == 1:
        return _own(own)  # nothing to group
    return report(node_findings, what, raws)


def _variable(field):
    """The inventory variable a problem's field is (``roce_rails[rail1].subnet`` -> ``roce_rails``)."""
    match = re.match(r'[A-Za-z_][A-Za-z0-9_]*', '%s' % (field or ''))
    return match.group(0) if match else None


def render_errors(errors, hostvars=None):
    """The message of a render refused for ``errors`` (the GpufabricErrors of a RenderValidationError: host, field, value,
    problem, fix): one line per distinct problem, naming the nodes that have it and where the variable is set.

    ``hostvars`` is read for the origin of a value only (which group_vars or host_vars file set it), never for the value:
    the renderers read the fabric plan, and only the inventory's sources know where a plan's input came from."""
    groups = {}
    for e in errors:
        key = (e.field, shown_value(e.value), e.problem, e.fix)
        hosts = groups.setdefault(key, [])
        if '%s' % e.host not in hosts:
            hosts.append('%s' % e.host)
    lines = ['%d problem%s found; nothing was rendered or applied:' % (len(groups), '' if len(groups) == 1 else 's')]
    for (field, value, problem, fix), hosts in groups.items():
        line = '  - %s: %s=%s: %s. Fix: %s' % (hosts_named(hosts), field, value, problem, fix)
        name = _variable(field)
        if hostvars is not None and name:
            raws = {h: _raw(hostvars, h) for h in hosts if h in hostvars}
            source = source_of(raws, [name]) if raws else None
            if source:
                line += '%s Source: %s.' % ('' if line.endswith('.') else '.', source)
        lines.append(line)
    return '\n'.join(lines)
