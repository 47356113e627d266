"""gpufabric.roce.manifest_files action plugin: writes YAML on the controller, idempotently."""

import os
from unittest import mock

import yaml
from ansible.plugins.action import ActionBase

from ansible_collections.gpufabric.roce.plugins.action import manifest_files as mf
from ansible_collections.gpufabric.roce.plugins.action.manifest_files import ActionModule


def run(args, check_mode=False, diff=False):
    task = mock.MagicMock()
    task.args = args
    task.check_mode = check_mode
    task.diff = diff
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


def test_diff_mode_shows_each_changed_file(tmp_path):
    dest = tmp_path / "out"
    run({"dest": str(dest), "files": {"a.yaml": OBJECTS, "b.yaml": {"x": 1}}})
    changed = [dict(OBJECTS[0], spec={"trust": "off"}), OBJECTS[1]]
    result = run({"dest": str(dest), "files": {"a.yaml": changed, "b.yaml": {"x": 1}, "c.yaml": {"y": 2}}}, check_mode=True, diff=True)
    assert [d["after_header"] for d in result["diff"]] == [str(dest / "a.yaml"), str(dest / "c.yaml")]
    assert result["diff"][0]["before"] == (dest / "a.yaml").read_text()
    assert "trust: 'off'" in result["diff"][0]["after"]
    assert result["diff"][1]["before_header"] == "%s (absent)" % (dest / "c.yaml")
    assert "trust: 'on'" in (dest / "a.yaml").read_text()  # check mode wrote nothing
    assert "diff" not in run({"dest": str(dest), "files": {"a.yaml": changed}}, check_mode=True)


def test_a_failed_write_leaves_no_temporary_file(tmp_path):
    """A full disk (ENOSPC) during render must not leave a 0-byte temporary behind."""
    dest = tmp_path / "out"
    dest.mkdir()
    real_fdopen = os.fdopen

    def full_disk(fd, *a, **kw):
        fh = real_fdopen(fd, *a, **kw)
        fh.write = mock.MagicMock(side_effect=OSError(28, "No space left on device"))
        return fh

    with mock.patch("os.fdopen", side_effect=full_disk):
        result = run({"dest": str(dest), "files": {"a.yaml": OBJECTS}})
    assert result["failed"] is True
    assert result["msg"].startswith("cannot write %s: No space left on device." % (dest / "a.yaml"))
    assert "roce_render_dir" in result["msg"]
    assert os.listdir(dest) == []


def test_stale_temporaries_of_an_earlier_run_are_removed_and_nothing_else(tmp_path):
    """Before: a zero-byte .<file>.XXXXXXXX left by a failed or killed run stayed after later successful runs."""
    dest = tmp_path / "out"
    dest.mkdir()
    stale = dest / ".sriov-network-node-policies.yaml.k2j9x_7q"
    stale.write_text("")
    others = [".sriov-network-node-policies.yaml.swp", ".other.yaml.abcdefgh", "notes.txt", ".sriov-network-node-policies.yaml.toolong123"]
    for name in others:
        (dest / name).write_text("x")
    args = {"dest": str(dest), "files": {"sriov-network-node-policies.yaml": OBJECTS}}
    assert run(args, check_mode=True)["removed_temporaries"] == [str(stale)]
    assert stale.exists()  # check mode removes nothing
    result = run(args)
    assert result["changed"] is True and result["removed_temporaries"] == [str(stale)]
    assert sorted(os.listdir(dest)) == sorted(["sriov-network-node-policies.yaml"] + others)
    again = run(args)
    assert again["changed"] is False and again["removed_temporaries"] == []


def test_a_failed_clean_up_does_not_hide_the_write_error(tmp_path):
    dest = tmp_path / "out"
    dest.mkdir()
    real_fdopen = os.fdopen

    def full_disk(fd, *a, **kw):
        fh = real_fdopen(fd, *a, **kw)
        fh.write = mock.MagicMock(side_effect=OSError(28, "No space left on device"))
        return fh

    real_unlink = os.unlink
    with mock.patch("os.fdopen", side_effect=full_disk), mock.patch("os.unlink", side_effect=OSError(13, "Permission denied")):
        result = run({"dest": str(dest), "files": {"a.yaml": OBJECTS}})
    assert "No space left on device" in result["msg"]
    for name in os.listdir(dest):
        real_unlink(os.path.join(dest, name))


def _policy(i):
    """A SriovNetworkNodePolicy as the render makes it, with values that YAML must quote (on, a JSON text)."""
    return {"apiVersion": "sriovnetwork.openshift.io/v1", "kind": "SriovNetworkNodePolicy",
            "metadata": {"name": "roce-node%05d-rail%d" % (i // 8, i % 8), "namespace": "nvidia-network-operator",
                         "labels": {"app.kubernetes.io/managed-by": "gpufabric.roce", "trust": "on"}},
            "spec": {"resourceName": "roce_rail%d" % (i % 8), "numVfs": 8, "mtu": 9000, "isRdma": True, "priority": 99,
                     "nicSelector": {"pfNames": ["enp%ds0np0#0-7" % (i % 8)]}, "nodeSelector": {"kubernetes.io/hostname": "node%05d" % (i // 8)},
                     "ipam": '{"type": "nv-ipam", "poolName": "rail%d"}' % (i % 8), "empty": "", "none": None, "ratio": 0.5}}


def test_a_large_write_is_dumped_in_slices_side_by_side_and_joins_to_the_whole_dump_byte_for_byte(monkeypatch):
    """Before: 80,000 policies were dumped on one core (9.5 s of a 10,000-node render's 13 s write)."""
    monkeypatch.setattr(mf, "PARALLEL_DOCS", 100)
    monkeypatch.setattr(mf, "_SLICE_DOCS", 7)
    files = {"policies.yaml": [_policy(i) for i in range(60)], "small.yaml": [_policy(0)], "text.yaml": "kind: X\n", "one.yaml": {"a": 1},
             "networks.yaml": [dict(_policy(i), kind="SriovNetwork") for i in range(45)]}
    pools = []
    real = mf.multiprocessing.get_context

    class Context:
        def __init__(self, method):
            self.ctx = real(method)

        def Pool(self, processes):  # noqa: N802 - multiprocessing's name
            pools.append(processes)
            return self.ctx.Pool(processes)

    monkeypatch.setattr(mf.multiprocessing, "get_context", Context)
    side_by_side = mf.yaml_texts(files, workers=2)
    whole = {n: mf.to_yaml(c) for n, c in files.items()}
    assert side_by_side == whole
    assert side_by_side["policies.yaml"][1] == 60 and side_by_side["policies.yaml"][0].count("\n---") == 59
    # two worker processes; the shared documents are released after
    assert pools == [2] and mf._SHARED == {}
    # one core, or fewer documents: the whole dump, in this process
    assert mf.yaml_texts(files, workers=1) == whole
    monkeypatch.setattr(mf, "PARALLEL_DOCS", 1000)
    assert mf.yaml_texts(files, workers=2) == whole
    assert pools == [2]


def test_only_lists_of_mappings_are_sliced(monkeypatch):
    """A document that is not a mapping (a plain scalar at the root) leaves the stream open, and PyYAML's own emitter (the
    one used without libyaml) closes it with "...", which the whole dump does not have between documents: such a list
    is dumped whole, in this process."""
    assert yaml.dump_all(["a", "b"], Dumper=yaml.SafeDumper, explicit_start=True) == "--- a\n--- b\n...\n"
    monkeypatch.setattr(mf, "PARALLEL_DOCS", 10)
    monkeypatch.setattr(mf, "_SLICE_DOCS", 4)
    monkeypatch.setattr(mf.multiprocessing, "get_context", None)  # any pool would fail
    files = {"scalars.yaml": ["s%d" % i for i in range(12)], "mixed.yaml": [{"a": 1}] * 11 + ["s"]}
    assert mf.yaml_texts(files, workers=2) == {n: mf.to_yaml(c) for n, c in files.items()}
