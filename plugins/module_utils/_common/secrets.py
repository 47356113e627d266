# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets kept out of every output, on every ansible-core the collection supports: the one place that decides how.

From ansible-core 2.22, ``ansible.module_utils.secrets`` registers a value as a secret and ansible-core masks it in
everything it writes (display, the log file, warnings and errors, the results callbacks receive, so AWX's job events),
also when it was registered in a worker process or a module; results keep the real value (as no_log options do there).
Before 2.22 nothing masks a value afterwards, so it is replaced in the data before the data leaves us, as AnsibleModule
replaces its no_log options' values. Private to this collection."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

try:
    from ansible.module_utils.secrets import register_secrets as _register_secrets
except ImportError:  # ansible-core < 2.22
    _register_secrets = None
try:
    from ansible.module_utils.common.parameters import remove_values
except ImportError:  # deprecated in 2.22, to be removed in 2.25; only used where the secrets API is missing
    remove_values = None

# Whether the running ansible-core masks registered secrets in its output by itself.
MASKS_SECRETS = _register_secrets is not None
# ansible-core strips these from a secret's ends before it registers it (and ignores a value that is nothing else).
_STRIP = ' \t\r\n'


def keep_secrets_out(value, secrets):
    """``value`` (a result, a message) as it may leave us, so that none of ``secrets`` (strings) reaches an output.

    With ansible-core's secrets API: the secrets are registered and ``value`` is returned as it is (ansible-core masks
    them wherever it writes, for the rest of the run). Without it: ``value`` with each secret replaced (``********``,
    or ``VALUE_SPECIFIED_IN_NO_LOG_PARAMETER`` for a whole string), at any depth. Register only what is secret: on
    2.22 a registered string is masked wherever it appears, whatever its length."""
    secrets = set(s for s in secrets if isinstance(s, str) and s.strip(_STRIP))
    if not secrets:
        return value
    if _register_secrets is not None:
        _register_secrets(sorted(secrets))
        return value
    return remove_values(value, secrets)
