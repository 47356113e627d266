"""A stand-in for the gpufabric.roce.roce_default lookup in the action's unit tests.

The lookup needs Ansible's plugin loader, which a unit test must not install (it takes over the import of
ansible_collections.*). The lookup returns plugin_utils/_role_defaults.collection_default (the shared table
module_utils/_fabric/rails.ROCE_DEFAULTS, roce_render_dir, or a role's literal default such as rdma_verify_mode), so the role
files' templates get that value written in, as the role-argument messages show it. tests/integration/test_site_scale.py
validates through the real lookup."""

from unittest import mock

from ansible.template import trust_as_template

from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_args as ra
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _role_context as rx

_REAL_LOAD = rx.Role._load


def without_roce_default(value):
    if isinstance(value, dict):
        return {k: without_roce_default(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_roce_default(v) for v in value]
    if isinstance(value, str) and 'gpufabric.roce.roce_default' in value:
        return trust_as_template(ra._ROCE_DEFAULT_LOOKUP.sub(ra._shown_default, value))
    return value


def _load(loader, path, subdir, name):
    return without_roce_default(_REAL_LOAD(loader, path, subdir, name))


def patched():
    """Role files loaded with the lookup's value in place of the lookup."""
    return mock.patch.object(rx.Role, '_load', staticmethod(_load))
