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

import os

from ansible.errors import AnsibleError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_args as ra
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_checks as rc

try:  # ansible-core >= 2.19
    from ansible.errors import AnsibleValueOmittedError
    from ansible.template import trust_as_template
except ImportError:  # pragma: no cover - older cores: no omit error, every string is a template
    AnsibleValueOmittedError = None

    def trust_as_template(value):
        return value

COLLECTION = 'gpufabric.roce'
ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'roles')
_PLAY_VARS = ('ansible_play_hosts_all', 'ansible_play_hosts', 'ansible_play_batch', 'play_hosts', 'ansible_play_name',
              'ansible_play_role_names', 'playbook_dir', 'ansible_check_mode', 'ansible_diff_mode', 'omit', 'hostvars',
              'groups')
_OMITTED = object()


class _Role:
    def __init__(self, loader, entry):
        if isinstance(entry, str):
            entry = {'name': entry}
        if not isinstance(entry, dict) or not entry.get('name'):
            raise AnsibleError('roles: each entry is a role name or {name, entry_point, when}, got %r' % (entry,))
        name = '%s' % entry['name']
        short = name[len(COLLECTION) + 1:] if name.startswith(COLLECTION + '.') else name
        path = os.path.join(ROLES_DIR, short)
        if '.' in short or not os.path.isdir(path):
            raise AnsibleError('roles: %s is not a role of %s (roles: %s)' % (name, COLLECTION, ', '.join(sorted(os.listdir(ROLES_DIR)))))
        self.name = '%s.%s' % (COLLECTION, short)
        self.short = short
        self.entry_point = '%s' % entry.get('entry_point', 'main')
        self.when = entry.get('when')
        specs = (self._load(loader, path, 'meta', 'argument_specs') or {}).get('argument_specs') or {}
        if self.entry_point not in specs:
            raise AnsibleError('roles: %s has no argument spec for entry point %s' % (self.name, self.entry_point))
        self.options = specs[self.entry_point].get('options') or {}
        self.defaults = self._load(loader, path, 'defaults', 'main') or {}
        self.vars = self._load(loader, path, 'vars', 'main') or {}
        self.validator = ArgumentSpecValidator(self.options)

    @staticmethod
    def _load(loader, path, subdir, name):
        for ext in ('.yml', '.yaml'):
            full = os.path.join(path, subdir, name + ext)
            if os.path.exists(full):
                # Trusted as templates, as Ansible loads the role's own files (2.19 renders only those).
                try:
                    return loader.load_from_file(full, cache='none', trusted_as_template=True)
                except TypeError:  # pragma: no cover - ansible-core < 2.19 has no trust marking
                    return loader.load_from_file(full, cache='none')
        return None


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _VALID_ARGS = frozenset(('roles', 'hosts'))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self._task.args
        roles = [_Role(self._loader, r) for r in (args.get('roles') or [])]
        if not roles:
            raise AnsibleError('roles: list at least one role of %s' % COLLECTION)
        hosts = args.get('hosts')
        hosts = [('%s' % h) for h in (task_vars.get('ansible_play_hosts_all') if hosts is None else hosts)]
        hostvars = task_vars['hostvars']
        # Every inventory host (rdma_verify_hosts must name some); None when the play vars do not say.
        every = (task_vars.get('groups') or {}).get('all')
        self._inventory = None if every is None else frozenset(('%s' % h) for h in every)
        self._sources = tuple(task_vars.get('ansible_inventory_sources') or ())
        play = {k: task_vars[k] for k in _PLAY_VARS if k in task_vars}

        self._template_memo, self._validate_memo, self._key_cache = {}, {}, ra.KeyCache()
        problems, checked, skipped = {}, 0, 0
        for host in hosts:
            raw = hostvars.raw_get(host)
            if not isinstance(raw, dict):
                raise AnsibleError('hosts: %s is not in the inventory' % host)
            for role in roles:
                ctx = _Context(self, host, raw, role, play)
                if role.when is not None and not ctx.truth(role.when):
                    skipped += 1
                    continue
                checked += 1
                for p in self._check(ctx):
                    key = (p['role'], p['field'], ra.freeze(p['value']), p['problem'])
                    problems.setdefault(key, dict(p, hosts=[]))['hosts'].append(host)

        found = list(problems.values())
        result.update(changed=False, hosts=len(hosts), checked=checked, skipped=skipped,
                      templated=len(self._template_memo), validated=len(self._validate_memo),
                      problems=[dict(p, value=ra.jsonable(p['value'])) for p in found])
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
            if value is not _OMITTED:
                values[option], sources[option] = value, source
        key = (role.name, tuple((k, self._key_cache.freeze(v)) for k, v in values.items()))
        if key not in self._validate_memo:
            checked = role.validator.validate(dict(values), validate_role_argument_spec=True)
            # The cross-field rules (plugin_utils/_role_checks.py) read the converted values; a value the spec refused
            # is left out of them (reported once, by the spec). They do not depend on which host it is.
            refused = {ra.field_of(m, role.options) for m in checked.error_messages}
            cross = rc.role_problems(role.short, checked.validated_parameters, ctx.host, self._inventory, refused, sources=self._sources)
            self._validate_memo[key] = (checked.error_messages, cross)
        messages, cross = self._validate_memo[key]
        for message in messages:
            field = ra.field_of(message, role.options)
            problems.append(self._problem(ctx, field, values.get(field), message, sources.get(field, 'default')))
        for field, value, problem, fix in cross:
            problems.append({'role': role.name, 'field': field, 'value': value, 'problem': problem, 'fix': fix})
        # Last line of defence for every check above: a variable that can carry a secret is named, never shown.
        for p in problems:
            p['value'], p['problem'] = rc.redact(p['field'], p['value'], p['problem'])
        return problems

    @staticmethod
    def _problem(ctx, field, value, message, source):
        spec = ctx.role.options.get(field) or {}
        return {'role': ctx.role.name, 'field': field or 'arguments', 'value': value, 'problem': '%s' % message,
                'fix': ra.fix_text(field, spec, source, ctx.role.defaults.get(field)) if field else
                'see the argument spec of role %s' % ctx.role.name}

    def template_once(self, value, ctx):
        key = ra.memo_key(value, ctx.raw_lookup, ctx.host, self._key_cache)
        if key not in self._template_memo:
            templar = self._templar.copy_with_new_env(available_variables=ctx.variables())
            try:
                self._template_memo[key] = (templar.template(value), None)
            except Exception as exc:  # remembered so every host sharing the input gets the same answer
                if AnsibleValueOmittedError is not None and isinstance(exc, AnsibleValueOmittedError):
                    self._template_memo[key] = (_OMITTED, None)
                else:
                    self._template_memo[key] = (None, exc)
        value, exc = self._template_memo[key]
        if exc is not None:
            raise exc
        return value


class _Context:
    """The variables one role sees on one host: its host variables over the role's defaults."""

    def __init__(self, action, host, raw, role, play):
        self.action, self.host, self.raw, self.role, self.play = action, host, raw, role, play
        self._variables = None

    def raw_lookup(self, name):
        for layer in (self.raw, self.role.vars, self.role.defaults, self.play):
            if name in layer:
                return layer[name]
        return ra.UNDEFINED

    def variables(self):
        if self._variables is None:
            merged = dict(self.play)
            merged.update(self.role.defaults)
            merged.update(self.role.vars)
            merged.update(self.raw)
            self._variables = merged
        return self._variables

    def option(self, name):
        if name in self.raw:
            value, source = self.raw[name], 'inventory'
        elif name in self.role.defaults:
            value, source = self.role.defaults[name], 'default'
        else:
            return _OMITTED, None
        if ra.has_template(value):
            value = self.action.template_once(value, self)
        return value, source

    def truth(self, expression):
        # Built here, so not tagged as coming from a trusted file: the expression itself is the task's.
        value = self.action.template_once(trust_as_template('{{ (%s) | bool }}' % expression), self)
        return bool(value) and value is not _OMITTED
