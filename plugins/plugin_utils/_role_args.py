# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller-side logic of gpufabric.roce.validate_role_arguments, free of Ansible's templar so it
can be unit-tested: which variables a value depends on, the memo key that lets 1,000 hosts
sharing their group_vars be templated and validated once, and the error text (host, field,
value, fix) built from a role's argument spec."""

import json
import re

from jinja2 import Environment, meta
from jinja2.exceptions import TemplateSyntaxError

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import format_error, strings_in
from ansible_collections.gpufabric.roce.plugins.plugin_utils._role_defaults import collection_default

# A value whose template reads variables by a computed name cannot be keyed by the names it
# mentions; it is templated for every host (correct, just not shared).
_DYNAMIC_NAMES = frozenset(('vars', 'hostvars'))
_DYNAMIC_LOOKUP = re.compile(r"""\b(lookup|query|q)\(\s*['"](ansible\.builtin\.)?(vars|varnames)['"]""")


class _AnyName(dict):
    # Jinja's code generator (used by find_undeclared_variables) refuses unknown filter and test
    # names; Ansible's (bool, to_json, ...) are not in a plain Environment, and only names matter here.
    def __contains__(self, name):
        return True

    def __getitem__(self, name):
        return _any_name

    def get(self, name, default=None):
        return _any_name


def _any_name(*args, **kwargs):
    return None


# Functions of Ansible's and Jinja's template globals: mentioned like variables, but not variables.
_GLOBALS = frozenset(('lookup', 'query', 'q', 'now', 'undef', 'range', 'dict', 'lipsum', 'cycler', 'joiner', 'namespace'))
_ENV = Environment()
_ENV.filters = _AnyName()
_ENV.tests = _AnyName()
_REFS_CACHE = {}
UNDEFINED = '<undefined>'
MAX_LISTED = 20

_TYPE_TEXT = {
    'str': 'a string',
    'int': 'an integer',
    'float': 'a number',
    'bool': 'true or false',
    'list': 'a list',
    'dict': 'a mapping',
    'path': 'a path',
    'raw': 'a value',
}


def has_template(value):
    if isinstance(value, str):
        return '{{' in value or '{%' in value
    if isinstance(value, dict):
        return any(has_template(k) or has_template(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(has_template(v) for v in value)
    return False


def refs(value):
    """(names the templates in ``value`` read, whether they read variables by computed name)."""
    names, dynamic = set(), False
    for text in strings_in(value):
        if not has_template(text):
            continue
        key = '%s' % text
        if key not in _REFS_CACHE:
            try:
                found = frozenset(meta.find_undeclared_variables(_ENV.parse(key))) - _GLOBALS
            except TemplateSyntaxError:
                found = None  # let the templar report it, per host
            _REFS_CACHE[key] = (found, found is None or bool(found & _DYNAMIC_NAMES) or bool(_DYNAMIC_LOOKUP.search(key)))
        found, dyn = _REFS_CACHE[key]
        names |= found or set()
        dynamic = dynamic or dyn
    return names, dynamic


def freeze(value):
    """A hashable, order-stable stand-in for a variable value (tags and subclasses ignored)."""
    if isinstance(value, dict):
        return ('{', tuple(sorted(((freeze(k), freeze(v)) for k, v in value.items()), key=repr)))
    if isinstance(value, (list, tuple)):
        return ('[', tuple(freeze(v) for v in value))
    if isinstance(value, (set, frozenset)):
        return ('(', tuple(sorted((freeze(v) for v in value), key=repr)))
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return (type(value).__name__, value)
    return ('s', '%s' % value)


class KeyCache:
    """Per-run caches for ``memo_key``. Large values every host shares (``groups``, the play's host
    list) are the same object for each host, so they are frozen and scanned once, by identity; the
    object is kept referenced so its id cannot be reused by another object during the run.

    A frozen container stands in a key as a number, the same for every container of the same content: Python does not
    cache a tuple's hash, and a key holding ``groups`` frozen (10,000 hosts) was hashed again at every look-up, 40 us
    each, most of the role-argument check's own time at 10,000 nodes."""

    def __init__(self):
        self._frozen = {}
        self._templated = {}
        self._numbers = {}

    def freeze(self, value):
        if not isinstance(value, (dict, list, tuple, set, frozenset)):
            return freeze(value)
        hit = self._frozen.get(id(value))
        if hit is None or hit[0] is not value:
            frozen = freeze(value)
            hit = self._frozen[id(value)] = (value, ('#', self._numbers.setdefault(frozen, len(self._numbers))))
        return hit[1]

    def has_template(self, value):
        if not isinstance(value, (dict, list, tuple)):
            return has_template(value)
        hit = self._templated.get(id(value))
        if hit is None or hit[0] is not value:
            hit = self._templated[id(value)] = (value, has_template(value))
        return hit[1]


def memo_key(value, lookup, host, cache=None):
    """Key under which templating ``value`` gives the same result for every host.

    ``lookup(name)`` returns the raw (untemplated) value a host sees for ``name``, or UNDEFINED.
    The key holds every variable the template reaches, following templates inside those
    variables; when a template reads variables by computed name, the host itself is part of it."""
    cache = cache or KeyCache()
    seen, todo, parts = set(), [value], []
    per_host = False
    while todo:
        names, dynamic = refs(todo.pop())
        per_host = per_host or dynamic
        for name in sorted(names - seen):
            seen.add(name)
            raw = lookup(name)
            parts.append((name, cache.freeze(raw) if raw is not UNDEFINED else UNDEFINED))
            if raw is not UNDEFINED and cache.has_template(raw):
                todo.append(raw)
    return (cache.freeze(value), tuple(parts), host if per_host else None)


def expected_text(spec):
    """What a valid value of an option looks like, from its argument spec."""
    if spec.get('choices'):
        return 'one of: %s' % ', '.join('%s' % c for c in spec['choices'])
    kind = spec.get('type', 'str')
    text = _TYPE_TEXT.get(kind, 'a %s' % kind)
    if kind == 'list' and spec.get('elements'):
        text += ' of %s' % _TYPE_TEXT.get(spec['elements'], spec['elements']).replace('a ', '', 1).replace('an ', '', 1) + 's'
    return text


def field_of(message, options):
    """The option an ArgumentSpecValidator message is about (the longest option name it mentions)."""
    found = [o for o in options if re.search(r'(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])' % re.escape(o), message)]
    return max(found, key=len) if found else None


# The roles read the shared fabric defaults through this lookup; a message shows the value instead (default(9000)).
_ROCE_DEFAULT_LOOKUP = re.compile(r"""lookup\(\s*['"]gpufabric\.roce\.roce_default['"]\s*,\s*['"](\w+)['"]\s*\)""")


def _shown_default(match):
    try:
        return repr(collection_default(match.group(1)))
    except KeyError:
        return match.group(0)


def fix_text(option, spec, source, default_expr):
    """How to fix ``option``: set it (or the inventory variable its role default reads)."""
    want = expected_text(spec or {})
    if source == 'default':
        names = sorted(refs(default_expr)[0] - {'omit'})
        if names:
            return 'the role default of %s is %s: set %s to %s, or set %s itself' % (
                option, _ROCE_DEFAULT_LOOKUP.sub(_shown_default, '%s' % default_expr), ' / '.join(names), want, option)
    return 'set %s to %s in the inventory (group_vars/host_vars) or as an extra var' % (option, want)


def problem_lines(problems, limit=MAX_LISTED):
    """One line per distinct problem; hosts that share it are named together (first 3 + count)."""
    lines = []
    for p in problems[:limit]:
        hosts = p['hosts']
        who = hosts[0] if len(hosts) == 1 else '%s (and %d other host%s: %s%s)' % (
            hosts[0], len(hosts) - 1, '' if len(hosts) == 2 else 's', ', '.join(hosts[1:4]), ', ...' if len(hosts) > 4 else '')
        lines.append(format_error(who, p['field'], p['value'], '%s (role %s)' % (p['problem'], p['role']), p['fix']))
    if len(problems) > limit:
        lines.append('... and %d more problems' % (len(problems) - limit))
    return lines


def jsonable(value):
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return '%s' % value
