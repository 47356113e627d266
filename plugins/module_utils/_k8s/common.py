# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared pieces of the Kubernetes renderer: the error collector, value coercion, name rules.

Nothing in the ``_k8s_*`` modules imports Ansible: the filter plugin ``gpufabric.roce.k8s_render``
is a thin wrapper, and the unit tests and benchmarks import them directly.

Every error is a dict ``{host, field, value, problem, fix, message}``; ``message`` reads
``<host>: <field>=<value>: <problem>. Fix: <fix>``. Renderers collect *every* problem of the
whole input and raise :class:`RenderValidationError` once, before anything is written or applied.
"""

import copy
import re

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import GpufabricError, GpufabricErrors, plain

MELLANOX_VENDOR = "15b3"

# Label put on every object this collection creates, so that pruning never touches anything else.
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "gpufabric.roce"

DNS_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")


def is_dns_subdomain(value):
    """A Kubernetes object name of the DNS-1123 subdomain kind (a Node's name, a Flux source's): at most 253 characters."""
    return isinstance(value, str) and len(value) <= 253 and DNS_SUBDOMAIN_RE.match(value) is not None


LABEL_KEY_RE = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?\Z")
LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?\Z")


class RenderValidationError(GpufabricErrors, ValueError):
    """Every problem a render found (``errors``: GpufabricError), reported together; nothing was rendered or applied."""

    def __init__(self, errors):
        super().__init__(errors, format_errors(errors))


def format_errors(errors):
    count = len(errors)
    head = "%d problem%s found; nothing was rendered or applied:" % (count, "" if count == 1 else "s")
    return "\n".join([head] + ["  - %s" % e for e in errors])


class _Errors:
    def __init__(self):
        self.items = []

    def add(self, host, field, value, problem, fix):
        self.items.append(GpufabricError(host, field, plain(value), problem, fix))

    def raise_if_any(self):
        if self.items:
            raise RenderValidationError(self.items)


def _is_unset(value):
    return value is None or (isinstance(value, str) and value == "")


def require_keys(settings, keys, renderer, filter_name):
    """Refuse settings that lack one of ``keys`` instead of guessing it: the renderers have no defaults of their own
    (the filter ``gpufabric.roce.<filter_name>`` fills them in from the role's defaults/main.yml)."""
    missing = [key for key in keys if key not in settings]
    if missing:
        raise ValueError("%s: the settings lack %s: pass the role's defaults (gpufabric.roce.%s does)" % (renderer, ", ".join(missing), filter_name))


def _lookup(hvars, defaults, builtin, key):
    value = hvars.get(key) if hvars is not None else None
    if value is None:
        value = defaults.get(key) if defaults else None
    if value is None:
        value = builtin.get(key)
    return value


def _as_int(errs, host, field, value, *, lo=None, hi=None, what="", fix=None):
    """Integer check that rejects booleans and accepts digit strings (templated values)."""
    if isinstance(value, bool) or value is None:
        ok = False
    elif isinstance(value, int):
        ok = True
    elif isinstance(value, str) and re.match(r"^-?[0-9]+\Z", value.strip()):
        value = int(value.strip())
        ok = True
    else:
        ok = False
    if not ok:
        errs.add(host, field, value, "must be an integer%s" % (" " + what if what else ""), fix or "set %s to a whole number" % field)
        return None
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = "between %s and %s" % (lo, hi) if hi is not None else "at least %s" % lo
        errs.add(host, field, value, "must be %s%s" % (bounds, " " + what if what else ""), fix or "set %s to a value %s" % (field, bounds))
        return None
    return value


def _as_bool(errs, host, field, value):
    if isinstance(value, bool):
        return value
    errs.add(host, field, value, "must be a boolean", "set %s to true or false (unquoted)" % field)
    return None


def deep_merge(base, override):
    """Recursively merge ``override`` into a copy of ``base`` (dicts merge, anything else replaces)."""
    out = copy.deepcopy(base)
    for k, v in (override or {}).items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out
