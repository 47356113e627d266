# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The common body of the netlink modules (sriov_vf, vlan_gateway): one pyroute2 session per
run, the collection's error format, systemd persistence, warnings."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import platform
import traceback

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.gpufabric.roce.plugins.module_utils._common import GpufabricError, ensure_absent, ensure_file, persist_unit

try:
    from pyroute2 import IPRoute
    HAS_PYROUTE2 = True
    PYROUTE2_IMPORT_ERROR = None
except ImportError:
    HAS_PYROUTE2 = False
    PYROUTE2_IMPORT_ERROR = traceback.format_exc()


def run_netlink_module(module, run, files=False):
    """Run ``run(host, params, ipr, check_mode, persist_fn=...)`` inside ONE IPRoute session and
    exit the module with its result (or with a GpufabricError naming host, field and value).
    ``files``: also pass ``file_fn(path, content)``, which writes a file beside the unit (``None``: removes it)."""
    if not HAS_PYROUTE2:
        module.fail_json(msg=missing_required_lib('pyroute2'), exception=PYROUTE2_IMPORT_ERROR)

    def persist_fn(name, content, state='present'):
        return persist_unit(name, content, state, module.check_mode, unit_dir=module.params['unit_dir'],
                            run_command=module.run_command)

    def file_fn(path, content):
        if content is None:
            changed, before = ensure_absent(path, module.check_mode)
            return {'changed': changed, 'before': before, 'after': None}
        changed, before, after = ensure_file(path, content, module.check_mode)
        return {'changed': changed, 'before': before, 'after': after}

    extra = {'file_fn': file_fn} if files else {}
    host = platform.node()
    try:
        with IPRoute() as ipr:
            result = run(host, module.params, ipr, module.check_mode, persist_fn=persist_fn, **extra)
    except GpufabricError as exc:
        module.fail_json(msg=str(exc), host=host, field=exc.field, value=exc.value)
    for warning in result.pop('warnings', []):
        module.warn(warning)
    module.exit_json(**result)
