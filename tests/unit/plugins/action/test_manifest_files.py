"""gpufabric.roce.manifest_files action plugin: writes YAML on the controller, idempotently."""

import os
from unittest import mock

import yaml
from ansible.plugins.action import ActionBase

from ansible_collections.gpufabric.roce.plugins.action.manifest_files import ActionModule


def run(args, check_mode=False):
    task = mock.MagicMock()
    task.args = args
    task.check_mode = check_mode
    action = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None)
    with mock.patch.object(ActionBase, "run", return_value={}):
        return action.run(task_vars={})


OBJECTS = [{"apiVersion": "v1", "kind": "A", "metadata": {"name": "a"}, "spec": {"trust": "on"}}, {"kind": "B"}]


def test_writes_multi_document_files_and_is_idempotent(tmp_path):
    dest = tmp_path / "render" / "sriov-networks"
    args = {"dest": str(dest), "files": {"objects.yaml": OBJECTS, "one.yaml": {"x": 1}}}
    first = run(args)
    assert first["changed"] is True
    assert [f["documents"] for f in first["files"]] == [2, 1]
    assert list(yaml.safe_load_all((dest / "objects.yaml").read_text())) == OBJECTS
    assert "trust: 'on'" in (dest / "objects.yaml").read_text()
    assert oct(os.stat(dest / "one.yaml").st_mode & 0o777) == "0o644"
    second = run(args)
    assert second["changed"] is False
    assert not [p for p in os.listdir(dest) if p.startswith(".")]  # no temp files left behind


def test_check_mode_writes_nothing(tmp_path):
    dest = tmp_path / "out"
    result = run({"dest": str(dest), "files": {"a.yaml": OBJECTS}}, check_mode=True)
    assert result["changed"] is True
    assert not dest.exists()


def test_rejects_paths_in_file_names(tmp_path):
    result = run({"dest": str(tmp_path), "files": {"../escape.yaml": OBJECTS}})
    assert result["failed"] is True
    assert "plain names" in result["msg"]
    result = run({"dest": str(tmp_path), "files": {"a.yaml": []}, "mode": "rw"})
    assert result["failed"] is True and "octal" in result["msg"]
