# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpufabric.roce.role_view: variables of a role as another host would see them.

site.yml validates the SR-IOV render before the first change. When a run leaves the k8s_controller host out
(--limit to a rack), the render must still use the controller's settings: its inventory variables over the
role's own defaults and vars, read from the role's files here rather than repeated in the playbook."""

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_args as ra
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_context as rx


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _VALID_ARGS = frozenset(('role', 'host', 'names'))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        args = self._task.args
        host, names = '%s' % (args.get('host') or ''), args.get('names') or []
        if not host or not isinstance(names, list) or not names:
            raise AnsibleError('role_view: host (an inventory host) and names (a non-empty list of variable names) are required')
        role = rx.Role(self._loader, args.get('role') or '')
        raw = task_vars['hostvars'].raw_get(host)
        if not isinstance(raw, dict):
            raise AnsibleError('role_view: host %s is not in the inventory' % host)
        play = {k: task_vars[k] for k in rx.PLAY_VARS if k in task_vars}
        ctx = rx.Context(rx.Templater(self._templar), host, raw, role, play)
        view = {}
        for name in ('%s' % n for n in names):
            value = ctx.value(name)
            if value is ra.UNDEFINED:
                raise AnsibleError('role_view: %s is neither a variable of host %s nor a default or var of role %s' % (name, host, role.name))
            if value is not rx.OMITTED:
                view[name] = value
        result.update(changed=False, host=host, role=role.name, vars=view)
        return result
