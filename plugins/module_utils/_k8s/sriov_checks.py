# -*- coding: utf-8 -*-
# Copyright (c) gpufabric.roce contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sriov-network-operator admission webhook's rules for SriovNetworkNodePolicies, checked offline.

The rules of the upstream webhook (``pkg/webhook/validate.go`` of sriov-network-operator v1.6.0) and
of the CRD schema that can be decided from the inventory alone, plus the rules this collection makes
stricter on purpose (docs/inventory.md, "Rules stricter than the operator's webhook").

Errors carry ``fix_vars`` where the fix is mechanical: the fixes the message offers, in its order, as
a list of alternatives. An alternative maps a host to ``{inventory path: new value}``; a path is a
variable name, ``<list variable>[<i>]`` or ``<list variable>[<i>].<key>``; ``None`` means unset; the
host ``(cluster)`` stands for the cluster-wide settings. Applying any one alternative clears that error
(tests/unit/plugins/module_utils/test_k8s_fixes.py applies every one).
"""

import re

from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import MTU_MAX, MTU_MIN, ident, shown_value
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.common import (
    LABEL_KEY_RE,
    LABEL_VALUE_RE,
    MELLANOX_VENDOR,
    _as_int,
    _Errors,
)

MLX_MAX_VFS = 128
HOSTNAME_LABEL = "kubernetes.io/hostname"
# fullmatch everywhere: '$' would also match before a trailing newline, which the operator refuses.
RESOURCE_NAME_RE = re.compile(r"[a-zA-Z0-9_]+")
PF_RANGE_RE = re.compile(r"(?P<pf>[^#\s]+)#(?P<first>[0-9]+)-(?P<last>[0-9]+)")
RANGE_TAIL_RE = re.compile(r"([0-9]+)-([0-9]+)")
NETDEV_RE = re.compile(r"[^/\s:#]{1,15}")
VENDOR_RE = re.compile(r"(?:0[xX])?([0-9a-fA-F]{4})")
EXAMPLE_PF = "enp157s0np0"

# The vendor IDs of the supported-nic-ids ConfigMap that network-operator 26.4.1 installs with its
# sriov-network-operator sub-chart (charts/sriov-network-operator/templates/configmap.yaml). The
# webhook refuses any other nicSelector.vendor and compares the exact string, so '15B3' is refused too.
SUPPORTED_NIC_VENDORS = {
    "15b3": "NVIDIA/Mellanox",
    "8086": "Intel",
    "14e4": "Broadcom",
    "1077": "QLogic",
    "1af4": "Red Hat virtio",
    "177d": "Marvell",
    "1d0f": "Amazon",
}

LINK_TYPES = ("eth", "ETH", "ib", "IB")
DEVICE_TYPES = ("netdevice", "vfio-pci")


class FixErrors(_Errors):
    """The error collector whose entries may carry ``fix_vars`` (see the module docstring)."""

    def add(self, host, field, value, problem, fix, *, fix_vars=None):
        super().add(host, field, value, problem, fix)
        if fix_vars:
            self.items[-1].fix_vars = fix_vars

    def attach(self, before, fix_vars):
        """Give the errors added since ``before`` (an earlier ``len(self.items)``) their machine-readable fixes."""
        for err in self.items[before:]:
            err.fix_vars = fix_vars


def as_int(errs, host, field, value, *, example, clamp=True, lo=None, hi=None, what="", fix=None):
    """``_as_int`` whose error carries a fix: an out-of-range number clamped into [lo, hi], else ``example``."""
    if isinstance(value, int) and not isinstance(value, bool) and (lo is None or value >= lo) and (hi is None or value <= hi):
        return value  # the common case, thousands of times per run: skip the general path
    before = len(errs.items)
    out = _as_int(errs, host, field, value, lo=lo, hi=hi, what=what, fix=fix)
    if out is None and len(errs.items) > before:
        number = value
        if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value.strip()):
            number = int(value.strip())
        fixed = example
        if clamp and isinstance(number, int) and not isinstance(number, bool):
            fixed = number if lo is None else max(number, lo)
            fixed = fixed if hi is None else min(fixed, hi)
        errs.attach(before, [{host: {field: fixed}}])
    return out


def describe(host, leads_and_alternatives):
    """Fix text generated from the alternatives themselves, so what the message says is what fix_vars does."""
    parts = []
    for lead, alt in leads_and_alternatives:
        changes = []
        for h, assignments in alt.items():
            where = "" if h == host else " of host %s" % h
            for path, value in assignments.items():
                changes.append("unset %s%s" % (path, where) if value is None else "set %s%s to %s" % (path, where, shown_value(value)))
        parts.append("%s: %s" % (lead, " and ".join(changes)))
    return "; or ".join(parts)


def parse_pf_name(entry):
    """Return (pf, first, last) for 'pf' or 'pf#first-last'; first/last are None without a range."""
    m = PF_RANGE_RE.fullmatch(entry)
    if m:
        return m.group("pf"), int(m.group("first")), int(m.group("last"))
    return entry, None, None


def check_vendor(errs, host, field, value):
    """nicSelector.vendor as the operator compares it: 4 lower-case hex digits, '' for any. None when refused."""
    if value is None or value == "":
        return ""
    number = isinstance(value, int) and not isinstance(value, bool)
    text = str(value) if number else value
    m = VENDOR_RE.fullmatch(text) if isinstance(text, str) else None
    vendor = m.group(1).lower() if m else None
    if vendor in SUPPORTED_NIC_VENDORS:
        return vendor
    hint = " (YAML reads an unquoted ID as a number: 0x15b3 becomes 5555)" if number else ""
    if vendor is None:
        problem = "not a PCI vendor ID (4 hex digits, e.g. 15b3)%s" % hint
    else:
        problem = "vendor %s is not in the sriov-network-operator's supported NIC list (%s: the supported-nic-ids of network-operator 26.4.1)%s" % (
            vendor,
            ", ".join(sorted(SUPPORTED_NIC_VENDORS)),
            hint,
        )
    errs.add(
        host,
        field,
        value,
        problem,
        "set %s to '15b3' (NVIDIA ConnectX, quoted), or to '' to select the PF by name only" % field,
        fix_vars=[{host: {field: MELLANOX_VENDOR}}, {host: {field: ""}}],
    )
    return None


def check_num_vfs(errs, host, fields, pol, need):
    """numVfs; ``need`` is one more than the highest VF index the policy's ranges name (0 without ranges)."""
    f = fields["num_vfs"]
    num_vfs = as_int(errs, host, f, pol["num_vfs"], example=need if need > 8 else 8, clamp=False)
    if num_vfs is None:
        return None
    if num_vfs < 1:
        low = need if need > 1 else 1
        errs.add(host, f, num_vfs, "numVfs must be at least 1", "set %s to %d..%d" % (f, low, MLX_MAX_VFS), fix_vars=[{host: {f: low}}])
        return None
    # The operator applies the limit by the NIC's real vendor. Without a vendor in the selector the
    # PF is taken for a ConnectX (what this collection drives), so an empty vendor gets the limit too.
    if pol["nic_vendor"] in ("", MELLANOX_VENDOR) and num_vfs > MLX_MAX_VFS:
        why = "" if pol["nic_vendor"] else " (applied without a vendor too: the PF is taken for a ConnectX)"
        errs.add(
            host,
            f,
            num_vfs,
            "numVfs exceeds the Mellanox maximum of %d VFs per PF%s" % (MLX_MAX_VFS, why),
            "set %s to %d or less" % (f, MLX_MAX_VFS),
            fix_vars=[{host: {f: MLX_MAX_VFS}}],
        )
        return None
    return num_vfs


def _device_combination_ok(link_type, device_type, is_rdma):
    """The cross-field rules of check_device: vfio-pci has no RDMA; an IB netdevice VF needs it (stricter)."""
    if device_type == "vfio-pci" and is_rdma is True:
        return False
    return not (link_type in ("ib", "IB") and device_type == "netdevice" and is_rdma is False)


def check_device(errs, host, fields, pol):
    """linkType, deviceType and isRdma, and the combinations refused. Returns (ok, is_rdma).

    ``pol["network"]`` is true for the policy whose resource gets the node's network (its SriovNetwork, or "ib": its
    SriovIBNetwork): the fix for a bad linkType there is 'eth', since 'ib' changes the node's whole pod network."""
    ok = True
    link_type, device_type, is_rdma = pol["link_type"], pol["device_type"], pol["is_rdma"]
    flt, fdt, frd = fields["link_type"], fields["device_type"], fields["is_rdma"]
    if link_type not in LINK_TYPES:
        ib_too = not pol.get("network") and _device_combination_ok("ib", device_type, is_rdma)
        errs.add(
            host,
            flt,
            link_type,
            "linkType must be 'eth' (RoCE, the node's SriovNetwork) or 'ib' (InfiniBand, a SriovIBNetwork without gateway)"
            if pol.get("network") else "linkType must be one of eth, ib",
            "set %s to 'eth' (RoCE)%s" % (flt, " or 'ib' (InfiniBand)" if ib_too else ""),
            fix_vars=[{host: {flt: "eth"}}] + ([{host: {flt: "ib"}}] if ib_too else []),
        )
        ok = False
    if device_type not in DEVICE_TYPES:
        if _device_combination_ok(link_type, "netdevice", is_rdma):
            fix, alt = "set %s to 'netdevice' for RDMA VFs" % fdt, "netdevice"
        else:
            fix, alt = "set %s to 'vfio-pci' (DPDK or VM passthrough, without RDMA)" % fdt, "vfio-pci"
        errs.add(host, fdt, device_type, "deviceType must be 'netdevice' or 'vfio-pci'", fix, fix_vars=[{host: {fdt: alt}}])
        ok = False
    if not isinstance(is_rdma, bool):
        choices = [v for v in (True, False) if _device_combination_ok(link_type, device_type, v)]
        errs.add(
            host,
            frd,
            is_rdma,
            "must be a boolean",
            "set %s to %s (unquoted)" % (frd, " or ".join("true" if v else "false" for v in choices)),
            fix_vars=[{host: {frd: v}} for v in choices],
        )
        return False, None
    if device_type == "vfio-pci" and is_rdma:
        errs.add(
            host,
            fdt,
            device_type,
            "deviceType 'vfio-pci' conflicts with isRdma: true",
            "set %s to 'netdevice', or set %s to false" % (fdt, frd),
            fix_vars=[{host: {fdt: "netdevice"}}, {host: {frd: False}}],
        )
        ok = False
    if link_type in ("ib", "IB") and device_type == "netdevice" and is_rdma is False:
        errs.add(
            host,
            frd,
            is_rdma,
            "linkType 'ib' requires isRdma: true with deviceType 'netdevice'",
            "set %s to true, or %s to 'eth'" % (frd, flt),
            fix_vars=[{host: {frd: True}}, {host: {flt: "eth"}}],
        )
        ok = False
    return ok, is_rdma


def _label_text(value):
    """What a label value means once quoted (YAML's unquoted true, 7 and null become 'true', '7' and '')."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (int, float, str)):
        return str(value)
    return None


def _label_ok(key, value):
    return isinstance(key, str) and LABEL_KEY_RE.match(key) is not None and isinstance(value, str) and LABEL_VALUE_RE.match(value) is not None


def check_node_selector(errs, host, fields, pol):
    f, node_selector = fields["node_selector"], pol["node_selector"]
    if not isinstance(node_selector, dict) or not node_selector:
        errs.add(
            host,
            f,
            node_selector,
            "nodeSelector must be a non-empty mapping of label to string value",
            "leave %s unset (defaults to kubernetes.io/hostname: <roce_node_name>) or give a mapping" % f,
            fix_vars=[{host: {f: None}}],
        )
        return False
    for k, v in node_selector.items():
        if not _label_ok(k, v):
            break
    else:
        return True  # no list built on this path: it runs for every policy
    bad = [(k, v) for k, v in node_selector.items() if not _label_ok(k, v)]
    fixed = {}
    for k, v in node_selector.items():
        text = _label_text(v)
        if _label_ok(k, text):
            fixed[k] = text
    # The hostname label keeps the policy on its own node: without it the selector may reach the
    # nodes of other hosts, whose policies on the same PF it would then overlap.
    fixed.setdefault(HOSTNAME_LABEL, pol["node_name"])
    for k, v in bad:
        errs.add(
            host,
            f,
            {k: v},
            "not a valid Kubernetes label selector entry (values must be strings)",
            "write it as %s (quoted values; the kubernetes.io/hostname entry keeps the policy on its own node)" % shown_value(fixed),
            fix_vars=[{host: {f: fixed}}],
        )
    return False


def _example_pf(pol):
    pf = pol.get("default_pf")
    return pf if isinstance(pf, str) and NETDEV_RE.fullmatch(pf) else EXAMPLE_PF


def _replaced(host, pol, index, entry):
    """The alternative that puts ``entry`` in place of the policy's PF selector ``index``."""
    names = list(pol["pf_names"])
    names[index] = entry
    return {host: {pol["pf_list_path"]: names}}


def _no_pf(errs, host, fields, pol):
    f = fields["pf_names"]
    if f == "roce_pf":
        errs.add(
            host,
            f,
            pol["pf_names"],
            "no PF to select",
            "set roce_pf (e.g. %s) or sriov_networks_pf_names to a list of PF names" % EXAMPLE_PF,
            fix_vars=[{host: {"roce_pf": EXAMPLE_PF}}, {host: {"sriov_networks_pf_names": [EXAMPLE_PF]}}],
        )
    else:
        errs.add(
            host,
            f,
            pol["pf_names"],
            "no PF to select",
            "set %s to a list of PF names or '<pf>#first-last' VF ranges no other policy of the node uses" % f,
        )


def check_pf_names(errs, host, fields, pol):
    """Parse the PF selectors; returns [(pf, first, last, entry, index)] or None when any is invalid.

    The range ends are checked against numVfs later (check_range_ends), once numVfs is known good."""
    pf_names, f = pol["pf_names"], fields["pf_names"]
    if not isinstance(pf_names, list) or not pf_names:
        _no_pf(errs, host, fields, pol)
        return None
    raw_vfs = pol["num_vfs"]
    span = raw_vfs if isinstance(raw_vfs, int) and not isinstance(raw_vfs, bool) and 1 <= raw_vfs <= MLX_MAX_VFS else 8
    ranges, ok = [], True
    for i, entry in enumerate(pf_names):
        if not isinstance(entry, str) or not entry:
            ex = _example_pf(pol)
            errs.add(
                host,
                f,
                entry,
                "PF names must be non-empty strings",
                "write the PF netdev name, e.g. %s or %s#0-3" % (ex, ex),
                fix_vars=[_replaced(host, pol, i, ex)],
            )
            ok = False
            continue
        pf, first, last = parse_pf_name(entry)
        if "#" in entry and first is None:
            head, _sep, tail = entry.partition("#")
            head = head if NETDEV_RE.fullmatch(head) else _example_pf(pol)
            m = RANGE_TAIL_RE.fullmatch(tail)
            tail = tail if m and int(m.group(1)) <= int(m.group(2)) < span else "0-%d" % (span - 1)
            errs.add(
                host,
                f,
                entry,
                "invalid VF range syntax",
                "write '<pf>#<first>-<last>' with whole numbers, e.g. %s#%s" % (head, tail),
                fix_vars=[_replaced(host, pol, i, "%s#%s" % (head, tail))],
            )
            ok = False
            continue
        if not NETDEV_RE.fullmatch(pf):
            ex = _example_pf(pol)
            errs.add(
                host,
                f,
                entry,
                "'%s' is not a valid netdev name (max 15 chars, no '/', ':' or spaces)" % pf,
                "use the PF's interface name, e.g. %s" % ex,
                fix_vars=[_replaced(host, pol, i, ex + entry[len(pf) :])],
            )
            ok = False
            continue
        if first is not None and first > last:
            swapped = "%s#%d-%d" % (pf, last, first)
            errs.add(host, f, entry, "VF range starts after it ends", "write the range as %s" % swapped, fix_vars=[_replaced(host, pol, i, swapped)])
            ok = False
            continue
        ranges.append((pf, first, last, entry, i))
    return ranges if ok else None


def check_range_ends(errs, host, fields, pol, *, ranges, num_vfs, need):
    """VF indexes run 0..numVfs-1, as the webhook checks for every 'pf#first-last'."""
    ok = True
    for pf, first, last, entry, index in ranges:
        if first is None or last < num_vfs:
            continue
        texts, alts = [], []
        if first < num_vfs:
            texts.append("end the range at %d or less" % (num_vfs - 1))
            alts.append(_replaced(host, pol, index, "%s#%d-%d" % (pf, first, num_vfs - 1)))
        if need <= MLX_MAX_VFS or pol["nic_vendor"] not in ("", MELLANOX_VENDOR):
            # Every policy of the node shares numVfs on a partitioned PF: raise them together.
            raise_paths = pol["num_vfs_paths"]
            texts.append("raise %s" % " and ".join(raise_paths))
            alts.append({host: {p: need for p in raise_paths}})
        errs.add(
            host,
            fields["pf_names"],
            entry,
            "VF range end %d is not below numVfs %d (VF indexes run 0..%d)" % (last, num_vfs, num_vfs - 1),
            ", or ".join(texts),
            fix_vars=alts,
        )
        ok = False
    return ok


def check_policy(errs, host, fields, pol):
    """Validate one policy description (plain dict with resolved values). Returns the cleaned dict or None."""
    ranges = check_pf_names(errs, host, fields, pol)
    need = 0  # one more than the highest VF index the ranges name
    for _pf, first, last, _entry, _index in ranges or ():
        if first is not None and last >= need:
            need = last + 1
    num_vfs = check_num_vfs(errs, host, fields, pol, need)
    mtu = as_int(
        errs,
        host,
        fields["mtu"],
        pol["mtu"],
        example=9000,
        clamp=False,
        lo=MTU_MIN,
        hi=MTU_MAX,
        what="(bytes)",
        fix="set %s to the VF MTU, e.g. 9000 (must not exceed the PF MTU)" % fields["mtu"],
    )
    priority = as_int(
        errs, host, fields["priority"], pol["priority"], example=99, lo=0, hi=99, what="(0 is the highest priority)", fix="set %s to 0..99" % fields["priority"]
    )
    ok, is_rdma = check_device(errs, host, fields, pol)
    resource_name = pol["resource_name"]
    if not isinstance(resource_name, str) or not RESOURCE_NAME_RE.fullmatch(resource_name):
        example = ident(resource_name or "roce")
        errs.add(
            host,
            fields["resource_name"],
            resource_name,
            "resourceName must match ^[a-zA-Z0-9_]+$",
            "use only letters, digits and underscores, e.g. %s" % example,
            fix_vars=[{host: {fields["resource_name"]: example}}],
        )
        ok = False
    ok = check_node_selector(errs, host, fields, pol) and ok
    if ranges is not None and num_vfs is not None:
        ok = check_range_ends(errs, host, fields, pol, ranges=ranges, num_vfs=num_vfs, need=need) and ok
    if not ok or ranges is None or None in (mtu, priority, num_vfs, is_rdma):
        return None
    # In place: the candidate dicts are the renderer's own, built for this one check.
    pol["num_vfs"], pol["mtu"], pol["priority"], pol["is_rdma"], pol["ranges"], pol["fields"] = num_vfs, mtu, priority, is_rdma, ranges, fields
    return pol


class _Slice:
    """The VFs one policy takes on one PF."""

    __slots__ = ("lo", "hi", "host", "pol", "entry", "index", "key")

    def __init__(self, fields):
        self.lo, self.hi, self.host, self.pol, self.entry, self.index = fields
        self.key = id(fields)  # the indexed tuple lives as long as the index; this wrapper does not


def _compatible(a, b):
    """Two equality selectors can select one node unless they ask the same label for different values."""
    return all(a.get(k, v) == v for k, v in b.items())


class VfRangeIndex:
    """Every policy's VF slices by PF, checked once for every pair of policies that may select a common node.

    A nodeSelector with kubernetes.io/hostname selects at most that node. Any other label cannot be
    resolved from the inventory, so such a selector is taken to select every node whose known labels
    don't rule it out (two selectors are disjoint only when they want different values of one label).
    Policies are grouped by PF, then by selector, and only groups that may meet are compared: per PF the
    cost is a sort of its slices plus (selectors with a hostname) x (selectors without one), not all pairs.
    """

    def __init__(self):
        self.by_pf = {}  # pf -> {selector signature: [slice tuple]}
        self.sig_node = {}  # selector signature -> its kubernetes.io/hostname value, or None
        self.sig_dicts = {}
        self.reported = set()

    def add(self, host, pol, spec):
        """Index a checked policy; ``spec`` is its rendered spec, whose pfNames and nodeSelector the
        index shares instead of keeping the policy's own copies alive (fewer objects for the GC)."""
        fields = pol["fields"]
        rec = {
            "name": pol["name"],
            "node_name": pol["node_name"],
            "num_vfs": pol["num_vfs"],
            "externally_managed": pol["externally_managed"],
            "pf_field": fields["pf_names"],
            "num_vfs_field": fields["num_vfs"],
            "selector_field": fields["node_selector"],
            "pf_list_path": pol["pf_list_path"],
            "num_vfs_paths": pol["num_vfs_paths"],
            "pf_names": spec["nicSelector"]["pfNames"],
            "node_selector": spec["nodeSelector"],
        }
        sig = tuple(sorted(rec["node_selector"].items()))
        self.sig_node[sig] = rec["node_selector"].get(HOSTNAME_LABEL)
        for pf, first, last, entry, index in pol["ranges"]:
            lo, hi = (0, rec["num_vfs"] - 1) if first is None else (first, last)
            groups = self.by_pf.get(pf)
            if groups is None:
                groups = self.by_pf[pf] = {}
            slices = groups.get(sig)
            if slices is None:
                slices = groups[sig] = []
            slices.append((lo, hi, host, rec, entry, index))

    def check(self, errs):
        for pf, groups in self.by_pf.items():
            for slices in groups.values():
                if len(slices) > 1:
                    self._sweep(errs, pf, slices, None)
            if len(groups) == 1:
                continue
            # Selectors naming the same node may meet, and so may any selector and one without a
            # hostname. The default (one hostname selector per node, none without) compares nothing.
            first_of, shared, wild = {}, {}, []
            for sig in groups:
                node = self.sig_node[sig]
                if node is None:
                    wild.append(sig)
                elif node in first_of:
                    shared.setdefault(node, [first_of[node]]).append(sig)
                else:
                    first_of[node] = sig
            for sigs in shared.values():
                self._compare(errs, pf, groups, sigs, sigs)
            if wild:
                for node, sig in first_of.items():
                    self._compare(errs, pf, groups, shared.get(node, [sig]), wild)
                self._compare(errs, pf, groups, wild, wild)

    def _compare(self, errs, pf, groups, left, right):
        """Sweep the pairs of a ``left`` and a ``right`` selector that may meet (each pair once when both are one list)."""
        for i, a in enumerate(left):
            for b in right[i + 1 :] if right is left else right:
                if _compatible(self.sig_dict(a), self.sig_dict(b)):
                    self._sweep(errs, pf, groups[a], groups[b])

    def sig_dict(self, sig):
        sel = self.sig_dicts.get(sig)
        if sel is None:
            sel = self.sig_dicts[sig] = dict(sig)
        return sel

    def _sweep(self, errs, pf, group, other):
        """Sorted by first VF: each slice is compared with the widest earlier slice of the peer group
        (its own group when ``other`` is None) and with the peer group's first slice (numVfs, externallyManaged)."""
        tagged = [(t[0], t[1], 0, _Slice(t)) for t in group]
        if other is not None:
            tagged.extend((t[0], t[1], 1, _Slice(t)) for t in other)
        tagged.sort(key=lambda t: (t[0], t[1]))
        widest, first = [None, None], [None, None]
        for lo, hi, g, s in tagged:
            peer = g if other is None else 1 - g
            if first[peer] is not None and first[peer].pol is not s.pol:
                self._agree(errs, pf, s, first[peer])
            prev = widest[peer]
            if prev is not None and prev.hi >= lo:
                self._overlap(errs, pf, s, prev)
            if widest[g] is None or hi > widest[g].hi:
                widest[g] = s
            if first[g] is None:
                first[g] = s

    def _once(self, s, kind):
        key = (s.key, kind)
        if key in self.reported:
            return False
        self.reported.add(key)
        return True

    def _agree(self, errs, pf, s, ref):
        sp, rp = s.pol, ref.pol
        if sp["num_vfs"] != rp["num_vfs"] and self._once(s, "num_vfs"):
            # Raise the lower one: lowering could cut off the other policy's range.
            low, high = (s, ref) if sp["num_vfs"] < rp["num_vfs"] else (ref, s)
            errs.add(
                s.host,
                sp["num_vfs_field"],
                sp["num_vfs"],
                "policies %s and %s partition PF %s but ask for different numVfs (%d vs %d)" % (rp["name"], sp["name"], pf, rp["num_vfs"], sp["num_vfs"]),
                "use the same numVfs in every policy that selects %s" % pf,
                fix_vars=[{low.host: {p: high.pol["num_vfs"] for p in low.pol["num_vfs_paths"]}}],
            )
        if sp["externally_managed"] != rp["externally_managed"] and self._once(s, "managed"):
            mode = "host" if rp["externally_managed"] else "operator"
            errs.add(
                s.host,
                "roce_vf_mode",
                "operator" if mode == "host" else "host",
                "policy %s and policy %s of host %s select PF %s on a node both may select, and the operator refuses policies "
                "on one PF that disagree on externallyManaged (roce_vf_mode=host)" % (sp["name"], rp["name"], ref.host, pf),
                "set roce_vf_mode to '%s' as on host %s" % (mode, ref.host),
                fix_vars=[{s.host: {"roce_vf_mode": mode}}],
            )

    def _overlap(self, errs, pf, s, prev):
        if not self._once(s, "overlap"):
            return
        sp, pp = s.pol, prev.pol
        where = "" if prev.host == s.host else " (host %s)" % prev.host
        scope = "the same PF %s" % pf
        if sp["node_name"] != pp["node_name"] or HOSTNAME_LABEL not in sp["node_selector"] or HOSTNAME_LABEL not in pp["node_selector"]:
            scope += " of a node both may select (a nodeSelector without kubernetes.io/hostname is taken to select any node it does not rule out)"
        # Across nodes, pinning a selector to its node keeps every VF; on one node only ranges can help.
        options = self._selector_fix(s, prev) + self._range_fix(pf, s, prev)
        fix = describe(s.host, options) if options else "split the VFs with disjoint '%s#first-last' ranges (or target different nodes)" % pf
        errs.add(
            s.host,
            sp["pf_field"],
            s.entry,
            "VF range %d-%d of policy %s overlaps VFs %d-%d of policy %s%s on %s" % (s.lo, s.hi, sp["name"], prev.lo, prev.hi, pp["name"], where, scope),
            fix,
            fix_vars=[alt for _lead, alt in options],
        )

    @staticmethod
    def _range_fix(pf, s, prev):
        """Disjoint ranges for the two slices, changing as little as possible; [] when there is no room."""
        changes = []
        if s.hi > prev.hi:
            changes = [(s, prev.hi + 1, s.hi)]
        elif prev.hi + (s.hi - s.lo + 1) <= s.pol["num_vfs"] - 1:
            changes = [(s, prev.hi + 1, prev.hi + s.hi - s.lo + 1)]
        elif prev.lo < s.lo:
            changes = [(prev, prev.lo, s.lo - 1)]
        elif prev.hi > prev.lo:
            mid = (prev.lo + prev.hi + 1) // 2
            changes = [(prev, prev.lo, mid - 1), (s, mid, prev.hi)]
        if not changes:
            return []
        alt = {}
        for sl, lo, hi in changes:
            paths = alt.setdefault(sl.host, {})
            path = sl.pol["pf_list_path"]
            names = paths.get(path) or list(sl.pol["pf_names"])
            names[sl.index] = "%s#%d-%d" % (pf, lo, hi)
            paths[path] = names
        return [("give the policies disjoint VF ranges", alt)]

    @staticmethod
    def _selector_fix(s, prev):
        """Pin the selectors without a hostname to their own node, when that makes them disjoint."""
        if s.pol["node_name"] == prev.pol["node_name"]:
            return []
        alt, pinned = {}, []
        for sl in (s, prev):
            sel = dict(sl.pol["node_selector"])
            if HOSTNAME_LABEL not in sel:
                sel[HOSTNAME_LABEL] = sl.pol["node_name"]
                alt.setdefault(sl.host, {})[sl.pol["selector_field"]] = sel
            pinned.append(sel)
        if not alt or _compatible(pinned[0], pinned[1]):
            return []
        return [("let each policy select only its own node", alt)]
