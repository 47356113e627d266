"""A kubeconfig's credentials stay out of every output on every controller (issue 44, item 2): through ansible-core's
secrets API where it has one (2.22: registered, then masked by ansible-core in display, logs and the results callbacks
get; the result keeps the real value), replaced in the data before it leaves the action on the older ones.

Runs on the pinned ansible-core (make test) and on the matrix's 2.22 cell (make matrix MATRIX_CELLS=2.22
MATRIX_PYTEST=<this file>): each test asserts what the running release must do, and the first one that the running
release is the one the branch taken says it is."""

import itertools
import json
import os
import pathlib
import uuid
from unittest import mock

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.playbook.play_context import PlayContext
from ansible.plugins.action import ActionBase
from ansible.plugins.loader import connection_loader
from ansible.release import __version__ as ansible_version

from ansible_collections.gpufabric.roce.plugins.action import k8s_apply, k8s_tools, rollout_wait
from ansible_collections.gpufabric.roce.plugins.module_utils._common import secrets
from ansible_collections.gpufabric.roce.plugins.module_utils._common.secrets import MASKS_SECRETS, keep_secrets_out

NEW_CORE = tuple(int(x) for x in ansible_version.split(".")[:2]) >= (2, 22)
try:
    from ansible.module_utils.secrets import mask_secrets
except ImportError:  # ansible-core < 2.22: nothing is masked on output
    mask_secrets = None


def _unique(prefix):
    # ansible-core 2.22's registry lasts as long as the process: values no other test prints.
    return "%s-%s" % (prefix, uuid.uuid4().hex)


def _kubeconfig():
    """A kubeconfig mapping: its credential (the token) and strings that are not secrets (random, so that a mask of
    them can only come from this test)."""
    token, user, server = _unique("tok"), _unique("user"), "https://%s.invalid:6443" % _unique("api")
    content = {
        "apiVersion": "v1", "kind": "Config", "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": user}}],
        "users": [{"name": user, "user": {"token": token}}],
    }
    return content, token, (user, server)


def _masked(text):
    """``text`` as ansible-core writes it out: masked where it masks registered secrets."""
    return mask_secrets(text) if NEW_CORE else text


def _action(cls, args):
    task = mock.MagicMock()
    task.args = args
    task.check_mode = False
    task.diff = False
    return cls.ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)


def test_the_shim_takes_the_secrets_api_exactly_where_ansible_core_has_it():
    assert MASKS_SECRETS is NEW_CORE, (ansible_version, MASKS_SECRETS)
    assert (secrets._register_secrets is not None) is NEW_CORE


def test_a_secret_is_masked_by_ansible_core_on_2_22_and_replaced_in_the_result_before():
    token = _unique("tok")
    result = {"failed": True, "msg": "401 Unauthorized: Bearer %s" % token, "problems": ["rejected %s" % token], "rc": 1}
    out = keep_secrets_out(json.loads(json.dumps(result)), {token, "", "  "})
    if NEW_CORE:
        assert out == result  # the real value stays in the result, as no_log values do on 2.22
        shown = _masked(json.dumps(out))
        assert token not in shown and "Bearer $REDACTED$" in shown
    else:
        assert token not in json.dumps(out)
        assert out["msg"] == "401 Unauthorized: Bearer ********" and out["problems"] == ["rejected ********"] and out["rc"] == 1
    assert keep_secrets_out({"msg": "nothing secret"}, set()) == {"msg": "nothing secret"}


@pytest.mark.parametrize("module", [k8s_apply, k8s_tools, rollout_wait])
def test_the_actions_kubeconfig_option_is_not_no_log(module):
    # no_log would make ansible-core 2.22 register every string of a mapping (v1, Config, the user's name).
    assert not module.ARGUMENT_SPEC["kubeconfig"].get("no_log")


def test_rollout_wait_keeps_the_token_out_of_its_display_lines_and_its_result(capsys):
    content, token, plain = _kubeconfig()
    action = _action(rollout_wait, {"check": "sriov_sync", "namespace": "nvidia-network-operator", "expected": [{"node": "n1"}],
                                    "timeout": 10, "interval": 5, "kubeconfig": content})
    failure = {"failed": True, "msg": "Unauthorized: the server rejected token %s" % token}
    with mock.patch.object(ActionBase, "run", return_value={}), \
            mock.patch.object(action, "_execute_module", return_value=failure) as execute, \
            mock.patch.object(rollout_wait.time, "monotonic", side_effect=itertools.count(0, 4)), \
            mock.patch.object(rollout_wait.time, "sleep"):
        result = action.run(task_vars={})
    out = capsys.readouterr().out
    # The reads got the real kubeconfig; the polls failed on it and said so, once per poll.
    assert execute.call_args.kwargs["module_args"]["kubeconfig"] == content
    assert result["failed"] is True and result["polls"] == 2, result
    assert out.count("sriov_sync: poll ") == 2 and "read failed: Unauthorized: the server rejected token" in out, out
    assert token not in out
    assert token not in _masked(json.dumps(result))
    if NEW_CORE:
        assert "rejected token $REDACTED$" in out
        assert token in json.dumps(result)  # masked on output, kept in the data
    else:
        assert "rejected token ********" in out
    # Only the credential is a secret: the user's name, the server, v1 and Config are still shown.
    for text in plain + ("apiVersion: v1, kind: Config",):
        assert _masked(text) == text


def test_k8s_tools_probes_with_a_private_file_and_keeps_the_token_out_of_its_failure(tmp_path):
    # A real local connection: the mapping is written to a file in the task's private temporary directory (mode 0700),
    # the probe gets its path, not the mapping (whose no_log option would register every string of it on 2.22), and
    # the directory is gone afterwards.
    content, token, plain = _kubeconfig()
    play_context = PlayContext()
    connection = connection_loader.get("local", play_context)
    connection._shell.set_option("remote_tmp", str(tmp_path / "remote"))
    task = mock.MagicMock(args={"kubeconfig": content}, check_mode=False, diff=False)
    action = k8s_tools.ActionModule(task, connection, play_context, loader=DataLoader(), templar=None, shared_loader_obj=None)
    seen = {}

    def k8s_info(module_name, module_args, task_vars):
        path = module_args["kubeconfig"]
        seen.update(module=module_name, path=path, content=json.loads(pathlib.Path(path).read_text()),
                    mode=os.stat(os.path.dirname(path)).st_mode & 0o777)
        return {"failed": True, "msg": "Invalid kube-config: token %s expired" % token}

    found = mock.MagicMock(resolved=True)
    with mock.patch.object(ActionBase, "run", return_value={}), \
            mock.patch.object(k8s_tools.module_loader, "find_plugin_with_context", return_value=found), \
            mock.patch.object(action, "_execute_module", side_effect=k8s_info):
        result = action.run(task_vars={"inventory_hostname": "ctl"})
    assert seen["module"] == "kubernetes.core.k8s_info" and seen["content"] == content and seen["mode"] == 0o700, seen
    assert seen["path"].startswith(str(tmp_path / "remote")) and not os.path.exists(os.path.dirname(seen["path"]))
    assert result["failed"] is True and "ctl: cannot reach the cluster with kubeconfig (content given in" in result["msg"], result
    assert token not in _masked(json.dumps(result))
    assert ("token $REDACTED$ expired" if NEW_CORE else "token ******** expired") in _masked(result["msg"])
    for text in plain:
        assert _masked(text) == text


def test_k8s_apply_keeps_the_token_out_of_a_failure_it_passes_on():
    content, token, plain = _kubeconfig()
    action = _action(k8s_apply, {"definition": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}], "kubeconfig": content})
    failure = {"failed": True, "msg": "Failed to get client due to Unauthorized (token %s)" % token}
    with mock.patch.object(ActionBase, "run", return_value={}), mock.patch.object(action, "_execute_module", return_value=failure):
        result = action.run(task_vars={})
    assert result["failed"] is True and "Failed to get client" in result["msg"]
    assert token not in _masked(json.dumps(result))
    for text in plain:
        assert _masked(text) == text
