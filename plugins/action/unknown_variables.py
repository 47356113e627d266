# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpufabric.roce.unknown_variables: warn about roce_*/<role>_* variables no role reads.

One task on the controller reads the variable names of every inventory host (no templating), so a
1,000-node inventory costs one pass, not a task per host."""

import os

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _unknown_vars as uv

ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'roles')


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _VALID_ARGS = frozenset(('hosts', 'ignore'))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        hosts = self._task.args.get('hosts')
        if hosts is None:
            hosts = (task_vars.get('groups') or {}).get('all') or []
        hosts = ['%s' % h for h in hosts]
        ignore = self._task.args.get('ignore') or []
        if not isinstance(ignore, list):
            raise AnsibleError('ignore: a list of variable names, got %r' % (ignore,))
        known = uv.known_names(ROLES_DIR) | frozenset('%s' % n for n in ignore)
        hostvars = task_vars['hostvars']

        def names():
            for host in hosts:
                raw = hostvars.raw_get(host)
                if not isinstance(raw, dict):
                    raise AnsibleError('hosts: %s is not in the inventory' % host)
                yield host, raw.keys()

        unknown = uv.find_unknown(names(), known)
        lines = uv.warning_lines(unknown, known)
        result.update(changed=False, hosts=len(hosts), unknown=dict(sorted(unknown.items())))
        if lines:
            result['warnings'] = lines
        result['msg'] = ('%d variable%s that no role reads' % (len(lines), '' if len(lines) == 1 else 's')) if lines else \
            'no unknown roce_*/<role>_* variable on %d hosts' % len(hosts)
        return result
