# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_network_persist is on by default (issue 17): in the default VF mode the SR-IOV config daemon drains
and reboots nodes, and without the systemd units the gateways and routes are gone after that reboot. The
role default, its argument spec (what ansible-doc and validate_role_arguments show) and the README agree;
only the lab inventory, whose virtme VMs have no systemd, turns it off, and says why."""

import pathlib

import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
ROLE = REPO / "roles" / "host_network"


def test_persist_is_the_default():
    assert yaml.safe_load((ROLE / "defaults" / "main.yml").read_text())["host_network_persist"] is True
    spec = yaml.safe_load((ROLE / "meta" / "argument_specs.yml").read_text())
    for entry in spec["argument_specs"].values():
        if "host_network_persist" in entry.get("options", {}):
            assert entry["options"]["host_network_persist"]["default"] is True
    assert "| `host_network_persist` | bool | `true` |" in (ROLE / "README.md").read_text()


def test_only_the_lab_inventory_turns_it_off_with_its_reason():
    for inv in (REPO / "inventories").iterdir():
        for path in inv.rglob("*.yml"):
            data = yaml.safe_load(path.read_text()) or {}
            if isinstance(data, dict) and data.get("host_network_persist") is False:
                assert path.relative_to(REPO).as_posix() == "inventories/lab/group_vars/roce_nodes.yml", path
                assert "no systemd" in path.read_text()
    lab = REPO / "inventories" / "lab" / "group_vars" / "roce_nodes.yml"
    if lab.exists():  # the checkout; the installed collection does not ship the lab
        assert yaml.safe_load(lab.read_text())["host_network_persist"] is False
