"""Every fix an SR-IOV validation message offers passes when it is applied.

Each error of the renderer carries ``fix_vars``: the alternatives its fix text offers, each mapping a host (or
``(cluster)``) to inventory paths and new values (see plugins/module_utils/_k8s/sriov_checks.py). For every
bad-input case of test_k8s_render.py and every case the webhook table of test_k8s_webhook.py refuses, each
alternative is applied mechanically to the inventory, which must then render without any error.
"""

import copy
import re

import pytest
from test_k8s_render import BAD_INPUTS, REFERENCE_DEFAULTS, reference_hostvars
from test_k8s_webhook import WEBHOOK_CASES

from ansible_collections.gpufabric.roce.plugins.module_utils._k8s import common, sriov
from role_fallbacks import sriov_defaults

_PATH = re.compile(r"(?P<var>[a-z_]+)(?:\[(?P<index>[0-9]+)\](?:\.(?P<key>[a-z_]+))?)?")


def apply_fix(hv, defaults, alternative):
    """Set each ``path`` of the alternative on its host (None unsets: the renderer falls back to the defaults)."""
    for host, assignments in alternative.items():
        target = defaults if host == "(cluster)" else hv[host]
        for path, value in assignments.items():
            m = _PATH.fullmatch(path)
            assert m, "fix path %r is not <var>, <var>[i] or <var>[i].<key>" % path
            var, index, key = m.group("var"), m.group("index"), m.group("key")
            if index is None:
                target[var] = copy.deepcopy(value)
                continue
            items = copy.deepcopy(target[var])
            if key is None:
                items[int(index)] = copy.deepcopy(value)
            else:
                items[int(index)][key] = copy.deepcopy(value)
            target[var] = items


def _render(hv, defaults):
    return sriov.render_sriov(list(hv), hv, sriov_defaults(dict(REFERENCE_DEFAULTS, **defaults)))


def _by_message(expected):
    return lambda err: str(err) == expected


def _by_field(host, field):
    return lambda err: err.host == host and err.field == field


# (id, mutation(hv, defaults), which error of the refused inventory to fix)
CASES = [("bad-input/" + i, m, _by_message(e)) for i, m, e in BAD_INPUTS] + [
    ("webhook/" + c[0], c[3], _by_field(c[4][0], c[4][1])) for c in WEBHOOK_CASES if c[2] in ("refuse", "stricter")
]


def _target_error(mutation, pick):
    hv, defaults = reference_hostvars(), {}
    mutation(hv, defaults)
    with pytest.raises(common.RenderValidationError) as info:
        _render(hv, defaults)
    matching = [e for e in info.value.errors if pick(e)]
    assert matching, "the case's error is missing:\n" + str(info.value)
    return hv, defaults, matching[0], info.value


@pytest.mark.parametrize("mutation,pick", [(m, p) for _i, m, p in CASES], ids=[i for i, _m, _p in CASES])
def test_every_offered_fix_renders_when_applied(mutation, pick):
    hv, defaults, err, exc = _target_error(mutation, pick)
    assert err.fix_vars, "no machine-readable fix for: %s" % str(err)
    assert len(exc.errors) == 1, "each case has exactly one problem, so that its fix alone must make it render:\n%s" % exc
    for alternative in err.fix_vars:
        fixed_hv, fixed_defaults = copy.deepcopy(hv), copy.deepcopy(defaults)
        apply_fix(fixed_hv, fixed_defaults, alternative)
        try:
            _render(fixed_hv, fixed_defaults)
        except common.RenderValidationError as again:
            pytest.fail("applying %r for\n  %s\nstill fails:\n%s" % (alternative, str(err), again))


@pytest.mark.parametrize("mutation,pick", [(m, p) for _i, m, p in CASES], ids=[i for i, _m, _p in CASES])
def test_the_message_names_what_the_fix_changes(mutation, pick):
    """Each alternative changes at least one variable the message names (its field or its fix text)."""
    _hv, _defaults, err, _exc = _target_error(mutation, pick)
    said = err.field + " " + err.fix
    for alternative in err.fix_vars:
        paths = [path for assignments in alternative.values() for path in assignments]
        assert any(_PATH.fullmatch(p).group("var") in said for p in paths), (str(err), alternative)


def test_the_two_fixes_the_issue_named_now_work():
    """An empty PF name used to be told '#0-7' (refused again); ib + vfio-pci used to be told 'isRdma: true' first."""
    hv = reference_hostvars()
    hv["node1"]["sriov_networks_pf_names"] = ["#4-7"]
    hv["node1"]["sriov_networks_extra_policies"] = [{"name": "rdma", "pf_names": ["enp157s0np0#0-3"], "resource_name": "rdma_node1"}]
    with pytest.raises(common.RenderValidationError) as info:
        _render(hv, {})
    (err,) = info.value.errors
    assert err.fix == "write '<pf>#<first>-<last>' with whole numbers, e.g. enp157s0np0#4-7"
    apply_fix(hv, {}, err.fix_vars[0])
    assert _render(hv, {})["policies"][0]["spec"]["nicSelector"]["pfNames"] == ["enp157s0np0#4-7"]

    hv = reference_hostvars()
    hv["node2"]["sriov_networks_extra_policies"] = [
        {"name": "ib", "pf_names": ["ibp1s0f0"], "resource_name": "ib_node2", "link_type": "ib", "device_type": "vfio-pci", "is_rdma": True}
    ]
    with pytest.raises(common.RenderValidationError) as info:
        _render(hv, {})
    (err,) = info.value.errors
    assert err.fix == "set sriov_networks_extra_policies[0].device_type to 'netdevice', or set sriov_networks_extra_policies[0].is_rdma to false"
    for alternative in err.fix_vars:
        fixed = copy.deepcopy(hv)
        apply_fix(fixed, {}, alternative)
        _render(fixed, {})


def test_apply_fix_understands_every_path_form():
    hv = {"n": {"a": 1, "l": [{"k": 1}, {"k": 2}]}}
    defaults = {}
    apply_fix(hv, defaults, {"n": {"a": None, "l[1].k": 5}, "(cluster)": {"c": "x"}})
    apply_fix(hv, defaults, {"n": {"l[0]": {"k": 9}}})
    assert hv == {"n": {"a": None, "l": [{"k": 9}, {"k": 5}]}}
    assert defaults == {"c": "x"}
