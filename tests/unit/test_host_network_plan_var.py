# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_network's __host_network_plan must not plan the group when the play hands it the plan (issue 21).

Jinja resolves every variable a template names before it evaluates the expression (`l_0_x = resolve('x')` at the top
of the compiled template), and ansible-core renders a variable's template when it is resolved: a fallback named in
`a or b` is rendered even when `a` wins. Named there, __host_network_group_plan planned the whole group (reading
every node's variables) in each task that read the plan, for every node and loop item: 0.8 s per node at 200
nodes x 8 rails, growing with the fleet. Rendered here with ansible-core's own templar and the role's own vars file;
the group plan is replaced by a probe that counts its renders. The fallback itself (the vars lookup, which needs
the plugin loader) runs in tests/integration/test_site_scale.py."""

import pathlib

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = pathlib.Path(__file__).resolve().parents[2] / "roles" / "host_network"
PLAN_TEXT = '{"fabric": {"nodes": {}}}\n'


class Probe:
    def __init__(self):
        self.renders = 0

    def group_plan(self):
        self.renders += 1
        return "the group plan"


def _render_plan(**overrides):
    loader = DataLoader()
    role_vars = loader.load_from_file(str(ROLE / "vars" / "main.yml"), cache="none", trusted_as_template=True)
    probe = Probe()
    role_vars.update(overrides, __probe=probe)
    role_vars["__host_network_group_plan"] = trust_as_template("{{ __probe.group_plan() }}")
    value = Templar(loader=loader, variables=role_vars).template(trust_as_template("{{ __host_network_plan }}"))
    return value, probe.renders


def test_the_plan_the_play_hands_over_is_used_and_the_group_is_not_planned():
    assert _render_plan(host_network_fabric=PLAN_TEXT) == (PLAN_TEXT, 0)


def test_the_plan_this_run_made_is_used_and_the_group_is_not_planned_again():
    assert _render_plan(host_network_fabric={}, __host_network_fabric=PLAN_TEXT) == (PLAN_TEXT, 0)


def test_the_probe_sees_a_render_of_the_group_plan():
    # The probe itself: a template that names the group plan where the expression does not need it renders it.
    loader = DataLoader()
    probe = Probe()
    variables = {"__probe": probe, "a": "given", "b": trust_as_template("{{ __probe.group_plan() }}")}
    assert Templar(loader=loader, variables=variables).template(trust_as_template("{{ a or b }}")) == "given"
    assert probe.renders == 1
