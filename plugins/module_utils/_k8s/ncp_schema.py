# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NicClusterPolicy ``spec`` checked against its CRD schema before anything is applied.

The inventory's overrides (``network_operator_nic_cluster_policy_overrides``) are merged into the rendered
spec; a key the CRD does not know, or a value of the wrong type, would be pruned silently or refused by the
API server after phases 1-2 changed the nodes. :func:`schema_problems` checks the merged spec against the
structural schema of network-operator 26.4.1's CRD (``_k8s_ncp_schema_data``; 26.7 changed only ``status``, its spec
schema is the same, which the unit tests check against both CRDs) the way the unit tests'
jsonschema check does: objects that list ``properties`` are closed (strict field validation), types,
``required``, ``enum``, ``pattern``, bounds, ``nullable`` and int-or-string. No dependency on jsonschema,
which a controller or an execution environment need not have.
"""

import re

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.ncp_schema_data import NCP_SCHEMA_CHART_VERSION, NCP_SPEC_SCHEMA

__all__ = ["NCP_SCHEMA_CHART_VERSION", "NCP_SCHEMA_CHART_VERSIONS", "NCP_SPEC_SCHEMA", "schema_problems"]

# The chart versions whose NicClusterPolicy CRD has exactly this spec schema (tests/unit/.../test_k8s_ncp_schema.py).
NCP_SCHEMA_CHART_VERSIONS = (NCP_SCHEMA_CHART_VERSION, "26.7.0-rc.2")

_TYPES = {
    "object": (dict, "a mapping"),
    "array": (list, "a list"),
    "string": (str, "a string"),
    "boolean": (bool, "true or false"),
    "integer": (int, "an integer"),
    "number": ((int, float), "a number"),
}
_PATTERNS = {}


def _type_ok(value, kind):
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[kind][0])


def _join(path, key):
    return "%s.%s" % (path, key) if path else "%s" % key


def schema_problems(value, schema=None, path="", limit=20):
    """[(path, problem, allowed)] of ``value`` against ``schema`` (default: the NicClusterPolicy spec);
    ``allowed`` lists the keys an object accepts when the problem is an unknown key, else None."""
    found = []
    _check(value, NCP_SPEC_SCHEMA if schema is None else schema, path, found)
    return found[:limit]


def _check(value, schema, path, found):
    if value is None:
        if not schema.get("nullable"):
            found.append((path, "must not be null", None))
        return
    if schema.get("x-kubernetes-int-or-string"):
        if not (_type_ok(value, "integer") or isinstance(value, str)):
            found.append((path, "must be an integer or a string", None))
        return
    for sub in ("allOf",):
        for s in schema.get(sub) or ():
            _check(value, s, path, found)
    if schema.get("anyOf") and not any(not _problems_of(value, s, path) for s in schema["anyOf"]):
        found.append((path, "matches none of the allowed forms", None))
        return
    kind = schema.get("type")
    if kind and kind in _TYPES and not _type_ok(value, kind):
        found.append((path, "must be %s, not %s" % (_TYPES[kind][1], type(value).__name__), None))
        return
    if "enum" in schema and value not in schema["enum"]:
        found.append((path, "must be one of %s" % ", ".join("%s" % e for e in schema["enum"]), None))
    if isinstance(value, str):
        _string(value, schema, path, found)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            found.append((path, "must be at least %s" % schema["minimum"], None))
        if "maximum" in schema and value > schema["maximum"]:
            found.append((path, "must be at most %s" % schema["maximum"], None))
    elif isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            found.append((path, "needs at least %d item(s)" % schema["minItems"], None))
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            found.append((path, "takes at most %d item(s)" % schema["maxItems"], None))
        for i, item in enumerate(value):
            if "items" in schema:
                _check(item, schema["items"], "%s[%d]" % (path, i), found)
    elif isinstance(value, dict):
        _object(value, schema, path, found)


def _string(value, schema, path, found):
    if "minLength" in schema and len(value) < schema["minLength"]:
        found.append((path, "needs at least %d character(s)" % schema["minLength"], None))
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        found.append((path, "takes at most %d characters" % schema["maxLength"], None))
    pattern = schema.get("pattern")
    if pattern:
        if pattern not in _PATTERNS:
            _PATTERNS[pattern] = re.compile(pattern, re.ASCII)
        if not _PATTERNS[pattern].search(value):
            found.append((path, "does not match the pattern %s" % pattern, None))


def _object(value, schema, path, found):
    props = schema.get("properties")
    for key in schema.get("required") or ():
        if key not in value:
            found.append((_join(path, key), "is required", None))
    extra = schema.get("additionalProperties")
    for key in sorted(value, key=str):
        sub = _join(path, key)
        if props is not None and key in props:
            _check(value[key], props[key], sub, found)
        elif isinstance(extra, dict):
            _check(value[key], extra, sub, found)
        elif props is not None and extra is not True and not schema.get("x-kubernetes-preserve-unknown-fields"):
            found.append((sub, "is not a field of the CRD", sorted(props)))


def _problems_of(value, schema, path):
    out = []
    _check(value, schema, path, out)
    return out
