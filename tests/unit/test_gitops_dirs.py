"""The GitOps roots of network_operator deploy sriov_networks' directory by name: the two roles must agree on it."""

import os

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _vars(role):
    with open(os.path.join(REPO, "roles", role, "vars", "main.yml")) as f:
        return yaml.safe_load(f)


def test_the_roots_name_the_sriov_networks_directory():
    dirs = _vars("network_operator")["__network_operator_gitops_dirs"]
    assert dirs[1] == _vars("sriov_networks")["__sriov_networks_render_subdir"]
    assert dirs[0] == "{{ __network_operator_render_subdir }}"
