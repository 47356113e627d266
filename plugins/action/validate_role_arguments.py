# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpufabric.roce.validate_role_arguments: every host's role arguments, one pass.

Ansible validates a role's argument spec with one task per host (a worker process each, tagged
``always``); at 1,000 nodes and three roles that is 3,000 task runs before anything happens. This
plugin does the same check for every host in one task on the controller: it resolves each option
the way the role would see it (host variables over role defaults), templates what needs templating
once per distinct input (hosts that share their group_vars share the result) and runs
ArgumentSpecValidator once per distinct set of values."""

import re

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_args as ra
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_checks as rc
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_context as rx


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _VALID_ARGS = frozenset(('roles', 'hosts'))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self._task.args
        roles = [rx.Role(self._loader, r) for r in (args.get('roles') or [])]
        if not roles:
            raise AnsibleError('roles: list at least one role of %s' % rx.COLLECTION)
        hosts = args.get('hosts')
        hosts = [('%s' % h) for h in (task_vars.get('ansible_play_hosts_all') if hosts is None else hosts)]
        hostvars = task_vars['hostvars']
        # Every inventory host (rdma_verify_hosts must name some); None when the play vars do not say.
        every = (task_vars.get('groups') or {}).get('all')
        self._inventory = None if every is None else frozenset(('%s' % h) for h in every)
        self._sources = tuple(task_vars.get('ansible_inventory_sources') or ())
        play = {k: task_vars[k] for k in rx.PLAY_VARS if k in task_vars}

        self._templater, self._validate_memo, self._rules_memo = rx.Templater(self._templar), {}, {}
        problems, warnings, checked, skipped_pairs = {}, {}, 0, 0
        for host in hosts:
            raw = hostvars.raw_get(host)
            if not isinstance(raw, dict):
                raise AnsibleError('hosts: %s is not in the inventory' % host)
            for role in roles:
                ctx = rx.Context(self._templater, host, raw, role, play)
                if role.when is not None and not ctx.truth(role.when):
                    skipped_pairs += 1
                    continue
                checked += 1
                host_problems, host_warnings = self._check(ctx)
                # Hosts that share a problem (their group_vars) are named together: one mistake, one line.
                for into, items in ((problems, host_problems), (warnings, host_warnings)):
                    for p in items:
                        key = (p['role'], p['field'], ra.freeze(p['value']), p['problem'])
                        into.setdefault(key, dict(p, hosts=[]))['hosts'].append(host)

        found = list(problems.values())
        # skipped_pairs, not skipped: Ansible reads a result's skipped as the task's own (a count of 1 made the task
        # skipped), and ansible-core 2.22 deprecates returning it from an action.
        result.update(changed=False, hosts=len(hosts), checked=checked, skipped_pairs=skipped_pairs,
                      templated=len(self._templater.memo), validated=len(self._validate_memo),
                      problems=[dict(p, value=ra.jsonable(p['value'])) for p in found])
        if warnings:
            result['warnings'] = ra.problem_lines(list(warnings.values()))
        if found:
            result['failed'] = True
            lines = ra.problem_lines(found)
            result['msg'] = '%d problem%s in the role arguments of %d host%s:\n%s' % (
                len(found), '' if len(found) == 1 else 's', len({h for p in found for h in p['hosts']}),
                '' if len(hosts) == 1 else 's', '\n'.join(lines))
        else:
            result['msg'] = 'role arguments of %s valid on %d hosts (%d distinct sets of values checked)' % (
                ', '.join(r.name for r in roles), len(hosts), len(self._validate_memo))
        return result

    def _check(self, ctx):
        role = ctx.role
        values, sources, problems = {}, {}, []
        for option in role.options:
            try:
                value, source = ctx.option(option)
            except (AnsibleError, ValueError, TypeError) as exc:
                problems.append(self._problem(ctx, option, role.defaults.get(option), 'could not be templated: %s' % exc, 'default'))
                continue
            if value is not rx.OMITTED:
                values[option], sources[option] = value, source
        key = (role.name, tuple((k, self._templater.key_cache.freeze(v)) for k, v in values.items()))
        if key not in self._validate_memo:
            checked = role.validator.validate(dict(values), validate_role_argument_spec=True)
            refused = {ra.field_of(m, role.options) for m in checked.error_messages}
            self._validate_memo[key] = (checked.error_messages, checked.validated_parameters, refused)
        messages, validated, refused = self._validate_memo[key]
        # The cross-field rules (plugin_utils/_role_checks.py) read the converted values; a value the spec refused
        # is left out of them (reported once, by the spec). They do not depend on which host it is, only on the values
        # and on what they read besides the options (rc.READS), which joins their memo key.
        reads = rc.role_reads(role.short, lambda name: self._read(ctx, name))
        freeze = self._templater.key_cache.freeze
        rules_key = (key, tuple((k, freeze(v)) for k, v in reads.items())) if reads else key
        if rules_key not in self._rules_memo:
            args = (role.short, validated, ctx.host, self._inventory, refused)
            self._rules_memo[rules_key] = (rc.role_problems(*args, sources=self._sources, reads=reads),
                                           rc.role_warnings(*args, sources=self._sources, reads=reads))
        cross, warned = self._rules_memo[rules_key]
        # A rule that names a variable an option's role default reads explains why that default failed: the spec's
        # message about the option (preflight_pf missing, for an empty roce_rails) would repeat the one mistake.
        explained = {re.match(r'\w*', f).group(0) for f, _v, _p, _x in cross} - set(role.options)
        for message in messages:
            field = ra.field_of(message, role.options)
            source = sources.get(field, 'default')
            if source == 'default' and field in role.defaults and ra.refs(role.defaults[field])[0] & explained:
                continue
            problems.append(self._problem(ctx, field, values.get(field), message, source))
        for field, value, problem, fix in cross:
            problems.append({'role': role.name, 'field': field, 'value': value, 'problem': problem, 'fix': fix})
        warnings = [{'role': role.name, 'field': f, 'value': v, 'problem': p, 'fix': x} for f, v, p, x in warned]
        # Last line of defence for every check above: a variable that can carry a secret is named, never shown.
        for p in problems + warnings:
            p['value'], p['problem'] = rc.redact(p['field'], p['value'], p['problem'])
        return problems, warnings

    @staticmethod
    def _read(ctx, name):
        """A variable outside the role's options as the role sees it on the host; None when unset or not templatable
        (the rules then leave it to whoever reads it to say so)."""
        try:
            value = ctx.value(name)
        except (AnsibleError, ValueError, TypeError):
            return None
        return None if value is ra.UNDEFINED or value is rx.OMITTED else value

    @staticmethod
    def _problem(ctx, field, value, message, source):
        spec = ctx.role.options.get(field) or {}
        return {'role': ctx.role.name, 'field': field or 'arguments', 'value': value, 'problem': '%s' % message,
                'fix': ra.fix_text(field, spec, source, ctx.role.defaults.get(field)) if field else
                'see the argument spec of role %s' % ctx.role.name}
