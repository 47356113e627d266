# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a role of this collection sees on a host, resolved on the controller from that host's variables.

Shared by the actions validate_role_arguments (every host's role options, one pass) and role_view (a role's
variables as another host would see them: the k8s_controller's view when a --limit run leaves it out). Ansible
itself resolves a role's variables only for the host a task runs on; both actions need other hosts' views, so
they layer the role's own defaults/main.yml and vars/main.yml under the host's variables, as Ansible does,
and template in that host's context. Values that many hosts share (their group_vars) are templated once."""

import os

from ansible.errors import AnsibleError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_args as ra

try:  # ansible-core >= 2.19
    from ansible.errors import AnsibleValueOmittedError
    from ansible.template import trust_as_template
except ImportError:  # pragma: no cover - older cores: no omit error, every string is a template
    AnsibleValueOmittedError = None

    def trust_as_template(value):
        return value

COLLECTION = 'gpufabric.roce'
ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'roles')
PLAY_VARS = ('ansible_play_hosts_all', 'ansible_play_hosts', 'ansible_play_batch', 'play_hosts', 'ansible_play_name',
             'ansible_play_role_names', 'playbook_dir', 'ansible_check_mode', 'ansible_diff_mode', 'omit', 'hostvars',
             'groups')
OMITTED = object()


class Role:
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


class Templater:
    """Templates values in a host's role context, once per distinct input (hosts sharing group_vars share it)."""

    def __init__(self, templar):
        self._templar = templar
        self.memo, self.key_cache = {}, ra.KeyCache()

    def template_once(self, value, ctx):
        key = ra.memo_key(value, ctx.raw_lookup, ctx.host, self.key_cache)
        if key not in self.memo:
            templar = self._templar.copy_with_new_env(available_variables=ctx.variables())
            try:
                self.memo[key] = (templar.template(value), None)
            except Exception as exc:  # remembered so every host sharing the input gets the same answer
                if AnsibleValueOmittedError is not None and isinstance(exc, AnsibleValueOmittedError):
                    self.memo[key] = (OMITTED, None)
                else:
                    self.memo[key] = (None, exc)
        value, exc = self.memo[key]
        if exc is not None:
            raise exc
        return value


class Context:
    """The variables one role sees on one host: its host variables over the role's defaults."""

    def __init__(self, templater, host, raw, role, play):
        self.templater, self.host, self.raw, self.role, self.play = templater, host, raw, role, play
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
            return OMITTED, None
        # By identity for the containers every host shares (group_vars): judged once, not walked again per host.
        if self.templater.key_cache.has_template(value):
            value = self.templater.template_once(value, self)
        return value, source

    def value(self, name):
        """``name`` as the role sees it on this host (its variables over the role's vars and defaults), templated;
        ra.UNDEFINED when none of them has it, OMITTED when it templates to omit."""
        value = self.raw_lookup(name)
        if value is not ra.UNDEFINED and self.templater.key_cache.has_template(value):
            value = self.templater.template_once(value, self)
        return value

    def truth(self, expression):
        # Built here, so not tagged as coming from a trusted file: the expression itself is the task's.
        value = self.templater.template_once(trust_as_template('{{ (%s) | bool }}' % expression), self)
        return bool(value) and value is not OMITTED
