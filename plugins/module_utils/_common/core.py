# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared helpers of the host modules: the error type, sysfs/procfs access and
idempotent file/unit handling for ``persist``.  Private to this collection."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type  # noqa: UP001

import errno
import glob
import ipaddress
import json
import os
import re
import shlex

SYSTEMD_RUNTIME_DIR = '/run/systemd/system'
# Shown instead of a value that can carry a secret (secret_field()), in messages and diffs alike.
NOT_SHOWN = '<not shown: may hold a secret>'
# Names of variables or keys that can carry a secret: a kubeconfig (path or content), tokens, passwords,
# registry credentials. Secret *names* (image_pull_secrets) are not secrets.
# Matched anywhere in the name, case-insensitively (tlsKey, clientSecret, api_key); a bare 'secret' only as a whole
# word, so that image_pull_secrets and secretNames stay visible.
_SECRET_FIELD_RE = re.compile(r'(kubeconfig|token|password|passwd|passphrase|credential|auth|tls_?key|private_?key|secret_?key|'
                              r'client_?secret|api_?key|\bsecret\b)', re.IGNORECASE)


def secret_field(field):
    """Whether ``field`` (an option name or a key, possibly with a sub-key) can carry a secret: its value is never shown."""
    return bool(field) and bool(_SECRET_FIELD_RE.search('%s' % field))


def strings_in(value):
    """Every string inside ``value`` (mapping keys included), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings_in(k)
            yield from strings_in(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings_in(v)


def redact_secrets(value):
    """``value`` with every mapping entry whose key can carry a secret replaced by NOT_SHOWN, at any depth: what a
    diff may show of data the user wrote (Helm values, for one)."""
    if isinstance(value, dict):
        return dict((k, NOT_SHOWN if secret_field(k) and v not in (None, '') else redact_secrets(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [redact_secrets(v) for v in value]
    return value


class GpufabricError(Exception):
    """A validation or apply error whose message names host, field, value and fix. ``fix_vars``, when given: the
    alternatives the fix text offers, as variable assignments per host (the SR-IOV render's tests apply them)."""

    def __init__(self, host, field, value, problem, fix, *, fix_vars=None):
        self.host = host
        self.field = field
        self.value = value
        self.problem = problem
        self.fix = fix
        self.fix_vars = fix_vars
        super(GpufabricError, self).__init__(format_error(host, field, value, problem, fix))


class GpufabricErrors(GpufabricError):
    """Several problems found at once, each a GpufabricError in ``errors`` (the first one's fields are this error's);
    ``message``: the whole report, one line per problem, as the subclass words it."""

    def __init__(self, errors, message):
        first = errors[0]
        super(GpufabricErrors, self).__init__(first.host, first.field, first.value, first.problem, first.fix, fix_vars=first.fix_vars)
        self.errors = list(errors)
        self.args = (message,)


def format_error(host, field, value, problem, fix):
    """``<host>: <field>=<value as JSON>: <problem>. Fix: <fix>``"""
    return '%s: %s=%s: %s. Fix: %s' % (host, field, shown_value(value), problem, fix)


def parse_bool(value):
    """A boolean as YAML and Ansible spell one (true/yes/on/1, false/no/off/0, any case), or None when it is not one."""
    if isinstance(value, bool):
        return value
    text = ('%s' % value).strip().lower()
    if text in ('true', 'yes', 'on', '1'):
        return True
    if text in ('false', 'no', 'off', '0'):
        return False
    return None


def shown_value(value):
    """``value`` as JSON, as the user wrote it: non-ASCII characters as they are (not ``\\u00e9``), and the
    list and mapping subclasses Ansible wraps inventory values in as plain lists and mappings."""
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        pass
    try:
        return json.dumps(plain(value), sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def plain(value):
    """``value`` as builtins only: Ansible's tagged and unsafe strings, lazy containers and other subclasses are
    reduced to str, int, float, dict (str keys) and list, so that what is rendered, hashed or compared is the data."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict) or hasattr(value, 'items'):
        return {'%s' % k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    return value


def slug(name):
    """``name`` as a Kubernetes object name part: lower case, runs of other characters as one "-"."""
    return re.sub(r'[^a-z0-9.-]+', '-', ('%s' % name).lower()).strip('-.') or 'node'


def ident(name):
    """``name`` as an identifier (a key of nv-ipam's pools, a shell-safe word)."""
    return re.sub(r'[^A-Za-z0-9_]', '_', '%s' % name)


# Pod networks: the address rules (docs/inventory.md, "Address rules"). One place, read by the fabric plan
# (roce_pod_subnet, a rail's subnet and subnet_pool) before the first change.
_NOT_UNICAST = tuple((ipaddress.ip_network(net), what) for net, what in (
    ('0.0.0.0/8', '"this network" (0.0.0.0/8)'),
    ('127.0.0.0/8', 'loopback (127.0.0.0/8)'),
    ('169.254.0.0/16', 'link-local (169.254.0.0/16), which routers do not forward'),
    ('224.0.0.0/4', 'multicast (224.0.0.0/4)'),
    ('240.0.0.0/4', 'reserved (240.0.0.0/4, with the broadcast address 255.255.255.255)'),
    ('::/128', 'the unspecified address (::)'),
    ('::1/128', 'loopback (::1)'),
    ('fe80::/10', 'link-local (fe80::/10)'),
    ('ff00::/8', 'multicast (ff00::/8)'),
))
IPV6_UNSUPPORTED = ('IPv6 pod subnets are not supported yet: the VLAN gateways forward IPv4 only, so pods on different nodes '
                    'could not reach each other')
POD_SUBNET_EXAMPLE = 'a subnet of a private IPv4 range (10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16)'
# The fabric's MTU (gateways and VFs alike): the kernel's minimum for IPv4 (RFC 791: every host must accept 68-byte
# datagrams; the node module refuses less), and the largest the sriov-network-operator webhook accepts.
MTU_MIN = 68
MTU_MAX = 9978


# As integer ranges: ipaddress' overlaps() was a third of the fabric plan's own time at 10,000 nodes x 8 rails.
_NOT_UNICAST_RANGES = tuple((block.version, int(block.network_address), int(block.broadcast_address), what) for block, what in _NOT_UNICAST)


def pod_subnet_problem(net):
    """Why the ``ipaddress`` network ``net`` cannot be a pod subnet, or None: it must be IPv4 unicast."""
    first, last = int(net.network_address), int(net.broadcast_address)
    bad = [what for version, low, high, what in _NOT_UNICAST_RANGES if version == net.version and first <= high and low <= last]
    if net.version == 6:
        return 'is IPv6%s; %s' % (' and in %s' % ', '.join(bad) if bad else '', IPV6_UNSUPPORTED)
    if bad:
        return 'is not a unicast range: it is in %s, where no pod or gateway can have an address' % ', '.join(bad)
    return None


class Sysfs:
    """Reads (and writes) below a sysfs root and a procfs root.

    Unit tests point the roots at fixture trees; modules use ``/sys`` and ``/proc``.
    Every read returns ``default`` when the file is missing or the kernel refuses
    the read (EINVAL, EOPNOTSUPP, ...): absent attributes are normal in sysfs.
    """

    def __init__(self, sys_root='/sys', proc_root='/proc'):
        self.sys_root = sys_root
        self.proc_root = proc_root

    def path(self, rel):
        return os.path.join(self.sys_root, rel.lstrip('/'))

    def proc(self, rel):
        return os.path.join(self.proc_root, rel.lstrip('/'))

    @staticmethod
    def read_file(path, default=None):
        try:
            with open(path) as f:
                return f.read().strip()
        except (OSError, UnicodeDecodeError):
            return default

    @staticmethod
    def read_int_file(path, default=None):
        value = Sysfs.read_file(path)
        if value is None:
            return default
        try:
            return int(value, 0)
        except ValueError:
            return default

    def read(self, rel, default=None):
        return self.read_file(self.path(rel), default)

    def read_int(self, rel, default=None):
        return self.read_int_file(self.path(rel), default)

    def read_proc(self, rel, default=None):
        return self.read_file(self.proc(rel), default)

    def exists(self, rel):
        return os.path.exists(self.path(rel))

    def listdir(self, rel):
        try:
            return sorted(os.listdir(self.path(rel)))
        except OSError:
            return []

    def link_name(self, rel):
        """Basename of a symlink's target (``device/driver`` -> ``mlx5_core``), or None."""
        try:
            return os.path.basename(os.readlink(self.path(rel)))
        except OSError:
            return None

    def realpath(self, rel):
        """Resolved path of ``rel`` relative to the sysfs root, or None when missing."""
        p = self.path(rel)
        if not os.path.lexists(p):
            return None
        real = os.path.realpath(p)
        root = os.path.realpath(self.sys_root)
        if real.startswith(root + os.sep):
            return real[len(root):]
        return real


PCI_ADDR_RE = re.compile(r'^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$')


def pci_address_of(resolved_path):
    """The nearest PCI function in a resolved device path, or None.

    ``/devices/pci0000:00/0000:00:02.0/virtio0`` -> ``0000:00:02.0`` (the virtio NIC's
    PCI function); ``/devices/netdevsim10`` -> None.
    """
    if not resolved_path:
        return None
    for part in reversed(resolved_path.split('/')):
        if PCI_ADDR_RE.match(part):
            return part
    return None


def write_sysfs(path, value):
    """Write one value to a sysfs/procfs file; raises OSError (errno kept)."""
    with open(path, 'w') as f:
        f.write('%s\n' % value)


def oserror_text(exc):
    code = errno.errorcode.get(getattr(exc, 'errno', None) or 0, 'E?')
    return '%s (%s)' % (getattr(exc, 'strerror', None) or str(exc), code)


# --- persist helpers: idempotent files, symlinks and systemd units ---------------

_UNIT_NAME_RE = re.compile(r'^[A-Za-z0-9:_.\\-]+$')


def systemd_escape_path(path):
    """``systemd-escape --path`` for simple device paths (unit names of devices)."""
    path = path.strip('/')
    out = []
    for i, ch in enumerate(path):
        if ch == '/':
            out.append('-')
        elif ch.isalnum() or ch in ':_' or (ch == '.' and i > 0):
            out.append(ch)
        else:
            out.append('\\x%02x' % ord(ch))
    return ''.join(out)


def netdev_device_unit(ifname):
    return '%s.device' % systemd_escape_path('/sys/subsystem/net/devices/%s' % ifname)


def valid_unit_name(name):
    return bool(_UNIT_NAME_RE.match(name)) and len(name) <= 255


# Stricter than the kernel (which takes any bytes but "/", ":" and whitespace): the
# name is written into systemd ExecStart lines and "/bin/sh -c" scripts of persisted
# units, so only characters that mean nothing to sh or to systemd's specifier and
# variable expansion ("%", "$") pass; a leading "-" would read as an option of ip.
_IFNAME_RE = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.-]*\Z')
IFNAMSIZ = 16  # the kernel's buffer, NUL included


def ifname_problem(name):
    """Why ``name`` cannot be a netdev name here, or None when it can."""
    if not isinstance(name, str) or not name:
        return 'is not a valid interface name (empty)'
    if len(name.encode('utf-8')) > IFNAMSIZ - 1:
        return 'is not a valid interface name (Linux allows at most %d bytes, this has %d)' % (
            IFNAMSIZ - 1, len(name.encode('utf-8')))
    if not _IFNAME_RE.match(name):
        bad = sorted(set(ch for ch in name if not (ch.isascii() and (ch.isalnum() or ch in '_.-'))))
        if bad:
            return 'is not a valid interface name: it contains %s, which a shell or systemd unit line would interpret' % (
                ' '.join(repr(ch) for ch in bad))
        return 'is not a valid interface name: it starts with %r' % name[0]
    return None


def check_ifname(host, field, name, fix):
    """Raise GpufabricError (before anything changes) when ``name`` is not a safe netdev name."""
    problem = ifname_problem(name)
    if problem:
        raise GpufabricError(host, field, name, problem, fix)
    return name


def unit_quote(name):
    """``name`` for an ExecStart line, after check_ifname: refuses rather than escapes.

    shlex.quote leaves a checked name unchanged, so units of legitimate names keep their
    text; anything that would need quoting never reaches a unit."""
    if ifname_problem(name):
        raise ValueError('unsafe interface name for a unit: %r' % (name,))
    return shlex.quote(name)


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def ensure_file(path, content, check_mode, mode=0o644):
    """Make ``path`` hold ``content``. Returns (changed, before_text, after_text)."""
    before = read_text(path)
    if before == content:
        return False, before, content
    if not check_mode:
        d = os.path.dirname(path)
        if d and not os.path.isdir(d):
            os.makedirs(d)
        tmp = '%s.gpufabric-tmp' % path
        with open(tmp, 'w') as f:
            f.write(content)
        os.chmod(tmp, mode)
        os.rename(tmp, path)
    return True, before, content


def ensure_absent(path, check_mode):
    if not os.path.lexists(path):
        return False, None
    before = read_text(path)
    if not check_mode:
        os.unlink(path)
    return True, before


def ensure_symlink(link, target, check_mode):
    try:
        current = os.readlink(link)
    except OSError:
        current = None
    if current == target:
        return False
    if not check_mode:
        d = os.path.dirname(link)
        if not os.path.isdir(d):
            os.makedirs(d)
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link)
    return True


def systemd_running(runtime_dir=SYSTEMD_RUNTIME_DIR):
    return os.path.isdir(runtime_dir)


def unit_wanted_by(content, default='multi-user.target'):
    """The WantedBy= targets of a unit's text (what ``systemctl enable`` links it into)."""
    targets = []
    for line in (content or '').splitlines():
        if line.startswith('WantedBy='):
            targets.extend(line[len('WantedBy='):].split())
    return targets or [default]


def persist_unit(unit_name, content, state, check_mode, *, unit_dir='/etc/systemd/system',
                 run_command=None, wanted_by='multi-user.target'):
    """Install (state=present) or remove (state=absent) a oneshot unit and its
    ``<target>.wants`` symlinks, one per ``WantedBy=`` of its [Install] section (``wanted_by``
    when it has none): what ``systemctl enable`` creates. A link of this unit in any other
    ``*.wants`` directory (an earlier version's ``WantedBy=``) is removed.

    ``systemctl daemon-reload`` runs only when systemd is running (``/run/systemd/system``
    exists) and something changed; without systemd the files are still written so the
    next boot with systemd picks them up.  Returns a result dict for the module.
    """
    unit_path = os.path.join(unit_dir, unit_name)
    want_links = [os.path.join(unit_dir, '%s.wants' % w, unit_name) for w in unit_wanted_by(content, wanted_by)]
    existing = sorted(glob.glob(os.path.join(glob.escape(unit_dir), '*.wants', glob.escape(unit_name))))
    result = {'unit': unit_name, 'path': unit_path, 'changed': False, 'daemon_reload': False,
              'systemd_running': systemd_running()}
    link_changed = False
    if state == 'present':
        changed, before, after = ensure_file(unit_path, content, check_mode)
        for link in want_links:
            link_changed = ensure_symlink(link, unit_path, check_mode) or link_changed
        stale = [link for link in existing if link not in want_links]
    else:
        changed, before = ensure_absent(unit_path, check_mode)
        after = None
        stale = sorted(set(existing) | set(want_links))
    for link in stale:
        link_changed = ensure_absent(link, check_mode)[0] or link_changed
    result['changed'] = changed or link_changed
    result['before'] = before
    result['after'] = after
    if result['changed'] and result['systemd_running'] and not check_mode and run_command is not None:
        rc, _out, err = run_command(['systemctl', 'daemon-reload'])
        result['daemon_reload'] = rc == 0
        if rc != 0:
            result['warning'] = 'systemctl daemon-reload failed: %s' % err.strip()
    return result
