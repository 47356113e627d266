# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role's own defaults/main.yml as the fallbacks of the controller's renderers: one copy of every default.

The roles hand their defaults to the render filters (roles/sriov_networks/vars/main.yml). A caller that gives fewer
(a playbook of the user's, a unit test) gets the rest from the same file, read here, so no value is written twice.
The shared ``roce_*`` variables come from ``_fabric.rails.ROCE_DEFAULTS``, as everywhere else.

``collection_default`` is the one answer to "what is the default of this variable" for YAML outside the variable's
own role (the gpufabric.roce.roce_default lookup): site.yml's plays and another role's defaults ask it instead of
writing the value again.

Controller-side only: it reads the collection's ``roles/`` beside ``plugins/``.
"""

from __future__ import annotations

import copy
import functools
import os
import re

import yaml

from ansible_collections.gpufabric.roce.plugins.module_utils._fabric.rails import ROCE_DEFAULTS

_ROLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, 'roles')
# The one template a fallback may be: another role's variable with a literal default
# ("{{ network_operator_namespace | default('nvidia-network-operator') }}"). Without that variable, which is the case
# of a caller that passes no value, Ansible would give the literal; so does this.
_OTHER_ROLES_VARIABLE = re.compile(r"""^\{\{\s*([a-z_][a-z0-9_]*)\s*\|\s*default\(\s*('[^']*'|"[^"]*")\s*\)\s*\}\}\Z""")


@functools.cache
def role_defaults(role):
    """The parsed defaults/main.yml of one of this collection's roles (``sriov_networks``), unrendered."""
    with open(os.path.join(_ROLES, role, 'defaults', 'main.yml'), encoding='utf-8') as fh:
        return yaml.safe_load(fh) or {}


def _fallback(role, key):
    """``(value, variable)``: the default, and the other role's variable it follows (None for a literal)."""
    if key in ROCE_DEFAULTS:
        return ROCE_DEFAULTS[key], None
    value = role_defaults(role)[key]
    if isinstance(value, str) and '{{' in value:
        match = _OTHER_ROLES_VARIABLE.match(value.strip())
        if not match:
            raise ValueError("roles/%s/defaults/main.yml: %s: %r is not a fallback a renderer can use without Ansible"
                             % (role, key, value))
        return yaml.safe_load(match.group(2)), match.group(1)
    return value, None


@functools.cache
def _role_names():
    """The roles whose variables collection_default answers for, longest name first (a variable belongs to the role
    whose name is its prefix). Read on first use, not at import."""
    return sorted((d for d in os.listdir(_ROLES) if os.path.isfile(os.path.join(_ROLES, d, 'defaults', 'main.yml'))),
                  key=len, reverse=True)


def _render_dir():
    # Where ansible-playbook runs from, as lookup('ansible.builtin.env', 'PWD') | default('.', true) reads it.
    return (os.environ.get('PWD') or '.') + '/render-out'


# Defaults that depend on the run rather than on a file: the function gives the value.
_COMPUTED = {'roce_render_dir': _render_dir}


def collection_default(name):
    """The default of ``name``: a shared ``roce_*`` variable, ``roce_render_dir``, or a role's variable whose
    defaults/main.yml value is a literal. ``KeyError`` (naming what it can answer) for anything else."""
    if name in ROCE_DEFAULTS:
        return copy.deepcopy(ROCE_DEFAULTS[name])
    if name in _COMPUTED:
        return _COMPUTED[name]()
    role = next((r for r in _role_names() if name.startswith(r + '_')), None)
    value = role_defaults(role).get(name) if role else None
    if value is None or (isinstance(value, str) and '{{' in value):
        raise KeyError("%r has no collection default. Fix: name one of %s, %s, or a variable of roles/<role>/defaults/main.yml"
                       " whose default is a literal (e.g. rdma_verify_mode)"
                       % (name, ', '.join(sorted(ROCE_DEFAULTS)), ', '.join(sorted(_COMPUTED))))
    return copy.deepcopy(value)


@functools.cache
def _fallbacks(role, keys):
    return {key: _fallback(role, key) for key in keys}


def with_role_defaults(role, keys, given=None, others=None):
    """``given`` (the caller's values; ``None`` means not given) over the role's defaults of ``keys``: every key set.
    ``others``: the caller's values of other roles' variables; a default that follows one of them
    (``{{ network_operator_resource_prefix | default('nvidia.com') }}``) takes its value when given, as Ansible would."""
    out = {}
    for key, (value, variable) in _fallbacks(role, tuple(keys)).items():
        followed = (others or {}).get(variable) if variable else None
        out[key] = copy.deepcopy(value if followed is None else followed)  # the cached values are shared
    out.update((k, v) for k, v in (given or {}).items() if v is not None)
    return out
