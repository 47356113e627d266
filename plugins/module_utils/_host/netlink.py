# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The common body of the netlink modules (sriov_vf, vlan_gateway, roce_qos): one pyroute2 session per
run, every rail of the node in that run (``rails``), the collection's error format, systemd persistence, warnings."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import platform
import traceback

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, ensure_absent, ensure_file, persist_unit

try:
    from pyroute2 import IPRoute
    HAS_PYROUTE2 = True
    PYROUTE2_IMPORT_ERROR = None
except ImportError:
    HAS_PYROUTE2 = False
    PYROUTE2_IMPORT_ERROR = traceback.format_exc()

RAILS = 'rails'
# A rail's name in the inventory, carried by an entry of ``rails`` for the messages and results only.
RAIL = 'rail'
RAIL_OPTION = dict(type='str')


def rails_option(options, required_if=None):
    """The ``rails`` argument of a module whose per-rail arguments are ``options`` (each rail takes the others from
    the top level: persist, state, unit_dir, ...)."""
    spec = dict(type='list', elements='dict', options=dict(options, rail=RAIL_OPTION))
    if required_if:
        spec['required_if'] = required_if
    return spec


def rail_label(rail, index):
    return rail.get(RAIL) or rail.get('pf') or rail.get('interface') or '%d' % index


def _in_rail(exc, label, problem=None):
    """``exc`` (a GpufabricError of one rail's run) with the field named as the rail's."""
    return GpufabricError(exc.host, '%s[%s].%s' % (RAILS, label, exc.field), exc.value, problem or exc.problem, exc.fix)


class RailsError(GpufabricError):
    """A rail's failure after earlier rails of the same run were changed: ``results`` are those rails' results."""

    def __init__(self, exc, results):
        self.results = results
        super(RailsError, self).__init__(exc.host, exc.field, exc.value, exc.problem, exc.fix)


def run_rails(host, params, check_mode, run_one, summary=None):
    """``run_one(rail_params, check_mode)`` for every entry of ``params['rails']``, each with the top-level arguments
    it does not set itself, in one module run.

    Every rail is validated and predicted (a check-mode pass) before the first change, so one rail's bad value
    changes no rail. A refusal only the kernel can give (a driver that refuses a VF setting) comes during the apply:
    that rail sets back what it had set, the rails before it keep their changes, and the error names them.

    Returns ``{changed, rails: [each rail's result, without its diff, with ``rail``], diff: [each rail's diff,
    headed by its rail]}`` plus ``summary(results)`` (module-specific keys) and every rail's warnings."""
    shared = {k: v for k, v in params.items() if k != RAILS}
    rails = params[RAILS] or []
    items = [(rail_label(r, i), dict(shared, **r)) for i, r in enumerate(rails)]
    labels = [label for label, _p in items]
    if len(set(labels)) != len(labels):
        dup = next(label for label in labels if labels.count(label) > 1)
        raise GpufabricError(host, RAILS, dup, 'names the same rail twice', 'give each rail (and its PF) once')

    def once(label, rail_params, check):
        try:
            return run_one(rail_params, check)
        except GpufabricError as exc:
            raise _in_rail(exc, label) from None

    predicted = [once(label, p, True) for label, p in items]
    if check_mode:
        results = predicted
    else:
        results = []
        for label, p in items:
            try:
                results.append(run_one(p, False))
            except GpufabricError as exc:
                changed = [lbl for lbl, r in zip(labels, results) if r.get('changed')]
                note = ('; the rails before it were changed and keep their changes: %s' % ', '.join(changed)) if changed else ''
                raise RailsError(_in_rail(exc, label, exc.problem + note), _combine(labels, results, summary)) from None
    return _combine(labels, results, summary)


def _combine(labels, results, summary):
    out = {'changed': any(r.get('changed') for r in results), RAILS: [], 'diff': [], 'warnings': []}
    for label, result in zip(labels, results):
        rail = dict(result)
        diff = rail.pop('diff', None)
        out['warnings'].extend(rail.pop('warnings', None) or [])
        rail[RAIL] = label
        out[RAILS].append(rail)
        if diff is not None:
            out['diff'].append(dict(diff, before_header=label, after_header=label))
    if summary:
        out.update(summary(results))
    return out


def run_netlink_module(module, run, files=False, summary=None, backends=None):
    """Run ``run(host, params, ipr, check_mode, persist_fn=...)`` inside ONE IPRoute session and exit the module
    with its result (or with a GpufabricError naming host, field and value); with ``rails``, once per rail
    (``run_rails``), still in one session.
    ``files``: also pass ``file_fn(path, content)``, which writes a file beside the unit (``None``: removes it).
    ``backends(ipr)``: keyword arguments for ``run`` made from the session (roce_qos's DCB and pause)."""
    if not HAS_PYROUTE2:
        module.fail_json(msg=missing_required_lib('pyroute2'), exception=PYROUTE2_IMPORT_ERROR)

    def fns(check):
        def persist_fn(name, content, state='present'):
            return persist_unit(name, content, state, check, unit_dir=module.params['unit_dir'], run_command=module.run_command)

        def file_fn(path, content):
            if content is None:
                changed, before = ensure_absent(path, check)
                return {'changed': changed, 'before': before, 'after': None}
            changed, before, after = ensure_file(path, content, check)
            return {'changed': changed, 'before': before, 'after': after}

        return dict(persist_fn=persist_fn, **({'file_fn': file_fn} if files else {}))

    host = platform.node()
    try:
        with IPRoute() as ipr:
            extra = backends(ipr) if backends else {}
            if module.params.get(RAILS) is None:
                result = run(host, module.params, ipr, module.check_mode, **dict(extra, **fns(module.check_mode)))
            else:
                result = run_rails(host, module.params, module.check_mode,
                                   lambda p, check: run(host, p, ipr, check, **dict(extra, **fns(check))), summary)
    except RailsError as exc:
        for warning in exc.results.pop('warnings', []):
            module.warn(warning)
        module.fail_json(msg=str(exc), host=host, field=exc.field, value=exc.value, **exc.results)
    except GpufabricError as exc:
        module.fail_json(msg=str(exc), host=host, field=exc.field, value=exc.value)
    for warning in result.pop('warnings', []):
        module.warn(warning)
    module.exit_json(**result)
