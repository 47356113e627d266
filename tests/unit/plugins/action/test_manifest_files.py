"""gpufabric.roce.manifest_files action plugin: writes YAML on the controller, idempotently."""

import io
import json
import os
import tarfile
from unittest import mock

import yaml
from ansible.plugins.action import ActionBase

from ansible_collections.gpufabric.roce.plugins.action import manifest_files as mf
from ansible_collections.gpufabric.roce.plugins.action.k8s_apply import with_labels
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


def test_labels_go_on_every_object_written_as_apply_mode_adds_them(tmp_path):
    """Issue 42: render mode wrote the objects without the fabric label apply mode adds, so a move from GitOps to apply
    adopted the rollout's own objects. The same labels, by the same helper (k8s_apply's), on objects and files alike."""
    labels = {"gpufabric.roce/fabric": "pool-a"}
    policies = [{"apiVersion": "v1", "kind": "P", "metadata": {"name": "p", "labels": {"app.kubernetes.io/managed-by": "gpufabric.roce"}}}]
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gpufabric-nccl"}, "data": {}}
    kustomization = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["p.yaml"]}
    dest = tmp_path / "out"
    result = run({"dest": str(dest), "objects": '{"policies": %s}' % json.dumps(policies), "object_files": {"p.yaml": "policies"},
                  "files": {"nccl.yaml": [configmap], "kustomization.yaml": kustomization, "notes.txt": "text\n"}, "labels": labels})
    assert not result.get("failed"), result
    assert list(yaml.safe_load_all((dest / "p.yaml").read_text())) == with_labels(policies, labels)
    assert list(yaml.safe_load_all((dest / "nccl.yaml").read_text())) == with_labels([configmap], labels)
    assert yaml.safe_load((dest / "kustomization.yaml").read_text()) == kustomization  # no metadata: not an object to label
    assert (dest / "notes.txt").read_text() == "text\n"
    assert "labels" not in configmap["metadata"]  # the objects given stay as they are
    assert run({"dest": str(dest), "files": {}, "labels": ["x"]})["failed"] is True


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


def _run_on_a_full_disk(args):
    """The action with every file write failing as on a full disk (ENOSPC)."""
    real_fdopen = os.fdopen

    def full_disk(fd, *a, **kw):
        fh = real_fdopen(fd, *a, **kw)
        fh.write = mock.MagicMock(side_effect=OSError(28, "No space left on device"))
        return fh

    with mock.patch("os.fdopen", side_effect=full_disk):
        return run(args)


def test_a_failed_write_leaves_no_temporary_file(tmp_path):
    """A full disk (ENOSPC) during render must not leave a 0-byte temporary behind."""
    dest = tmp_path / "out"
    dest.mkdir()
    result = _run_on_a_full_disk({"dest": str(dest), "files": {"a.yaml": OBJECTS}})
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

    with mock.patch("os.fdopen", side_effect=full_disk), mock.patch("os.unlink", side_effect=OSError(13, "Permission denied")):
        result = run({"dest": str(dest), "files": {"a.yaml": OBJECTS}})
    assert "No space left on device" in result["msg"]
    assert not (dest / "a.yaml").exists()


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


# ---- all or nothing: the staging area, commit and discard (plugin_utils/_render_stage.py) ----------------------------


def _tree(root):
    """Every path under root with its content (None for a directory) and mode: what 'byte for byte unchanged' compares."""
    out = {}
    for here, dirs, names in os.walk(root):
        for name in dirs + names:
            path, content = os.path.join(here, name), None
            if not os.path.isdir(path):
                with open(path, "rb") as fh:
                    content = fh.read()
            out[os.path.relpath(path, root)] = (content, os.stat(path).st_mode)
    return out


def _existing_tree(root):
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "x.yaml").write_text("old x\n")
    (root / "b" / "y.yaml").write_text("old y\n")
    (root / "b" / "gone.yaml").write_text("an earlier version's file\n")
    (root / "README.md").write_text("the user's\n")
    (root / "a" / "notes.yaml").write_text("the user's too\n")


def test_a_transaction_writes_nothing_until_its_commit_and_leaves_foreign_files_alone(tmp_path):
    root = tmp_path / "render-out"
    _existing_tree(root)
    before = _tree(root)
    assert run({"discard": str(root)})["changed"] is False
    first = run({"dest": str(root / "a"), "stage": str(root), "files": {"x.yaml": {"x": 2}}})
    second = run({"dest": str(root / "b"), "stage": str(root), "files": {"y.yaml": {"y": 2}}, "absent": ["gone.yaml"]})
    third = run({"dest": str(root / "c" / "d"), "stage": str(root), "files": {"new.yaml": {"n": 1}}})
    assert first["changed"] and second["changed"] and third["changed"]
    assert second["removed"] == [str(root / "b" / "gone.yaml")]
    assert {k: v for k, v in _tree(root).items() if not k.startswith(mf.rs.STAGE)} == before  # staged only
    done = run({"commit": str(root)})
    assert done["changed"] is True
    assert done["files"] == [str(root / "a" / "x.yaml"), str(root / "b" / "y.yaml"), str(root / "c" / "d" / "new.yaml")]
    assert done["removed"] == [str(root / "b" / "gone.yaml")]
    assert yaml.safe_load((root / "a" / "x.yaml").read_text()) == {"x": 2}
    assert not (root / "b" / "gone.yaml").exists()
    assert (root / "README.md").read_text() == "the user's\n" and (root / "a" / "notes.yaml").read_text() == "the user's too\n"
    assert oct(os.stat(root / "c").st_mode & 0o777) == "0o755"
    assert not (root / mf.rs.STAGE).exists()
    # A second run stages nothing, and its commit changes nothing.
    assert run({"dest": str(root / "a"), "stage": str(root), "files": {"x.yaml": {"x": 2}}})["changed"] is False
    assert not (root / mf.rs.STAGE).exists()
    assert run({"commit": str(root)})["changed"] is False


def test_a_swap_that_fails_half_way_puts_back_every_file_and_directory(tmp_path):
    root = tmp_path / "render-out"
    _existing_tree(root)
    before = _tree(root)
    for dest, name in (("a", "x.yaml"), ("b", "y.yaml"), ("new", "z.yaml")):
        run({"dest": str(root / dest), "stage": str(root), "files": {name: {"new": 1}}, "absent": ["gone.yaml"] if dest == "b" else []})
    real_replace = os.replace

    def full_disk_at_z(src, dst, *a, **kw):
        if str(dst).endswith("z.yaml"):
            raise OSError(28, "No space left on device", str(dst))
        return real_replace(src, dst, *a, **kw)

    with mock.patch("os.replace", side_effect=full_disk_at_z):
        result = run({"commit": str(root)})
    assert result["failed"] is True
    assert result["msg"].startswith("cannot write %s: No space left on device. Nothing was changed in %s" % (root / "new" / "z.yaml", root))
    assert _tree(root) == before  # byte for byte, the new directory gone, no staging area left


def test_a_file_that_cannot_be_put_back_is_named_and_kept(tmp_path):
    root = tmp_path / "render-out"
    _existing_tree(root)
    for dest, name in (("a", "x.yaml"), ("b", "y.yaml")):
        run({"dest": str(root / dest), "stage": str(root), "files": {name: {"new": 1}}})
    real_replace = os.replace

    def broken(src, dst, *a, **kw):
        if str(dst).endswith("y.yaml") or "%sbackup%s" % (os.sep, os.sep) in str(src):
            raise OSError(5, "Input/output error", str(dst))
        return real_replace(src, dst, *a, **kw)

    with mock.patch("os.replace", side_effect=broken):
        result = run({"commit": str(root)})
    assert result["failed"] is True
    kept = [p for p in os.listdir(root) if p.startswith(mf.rs.BACKUP)]
    assert len(kept) == 1, os.listdir(root)
    assert "these files could not be put back: %s (Input/output error)" % (root / "a" / "x.yaml") in result["msg"], result["msg"]
    assert (root / kept[0] / "backup" / "a" / "x.yaml").read_text() == "old x\n"


def test_a_failed_write_into_a_missing_directory_leaves_no_directory(tmp_path):
    dest = tmp_path / "new" / "render-out"
    result = _run_on_a_full_disk({"dest": str(dest), "files": {"a.yaml": OBJECTS}})
    assert result["failed"] is True and "Nothing was written into %s" % dest in result["msg"]
    assert os.listdir(tmp_path) == []


def test_a_path_in_the_way_stops_the_task_before_anything_is_staged(tmp_path):
    root = tmp_path / "render-out"
    root.mkdir()
    (root / "flux").write_text("a file where a directory goes")
    (root / "sriov").mkdir()
    (root / "sriov" / "policies.yaml").mkdir()
    result = run({"dest": str(root / "flux" / "release"), "stage": str(root), "files": {"a.yaml": {}}})
    assert result["failed"] is True
    assert result["msg"] == ("%s is not a directory: in the way of render mode; nothing was written or removed. Fix: move it away by hand"
                             % (root / "flux"))
    result = run({"dest": str(root / "sriov"), "files": {"policies.yaml": OBJECTS}})
    assert result["failed"] is True and result["msg"].startswith("%s is a directory: in the way" % (root / "sriov" / "policies.yaml"))
    assert sorted(os.listdir(root)) == ["flux", "sriov"]
    result = run({"dest": str(tmp_path / "elsewhere"), "stage": str(root), "files": {"a.yaml": {}}})
    assert result["failed"] is True and "must be inside stage" in result["msg"]


def test_discard_removes_a_killed_runs_staging_area_and_the_directories_made_for_it(tmp_path):
    root = tmp_path / "made" / "render-out"
    assert run({"dest": str(root / "a"), "stage": str(root), "files": {"x.yaml": {}}})["changed"] is True
    assert (root / mf.rs.STAGE).is_dir()
    assert run({"discard": str(root)})["changed"] is True
    assert os.listdir(tmp_path) == []
    # Check mode stages nothing, and commit and discard do nothing.
    assert run({"dest": str(root / "a"), "stage": str(root), "files": {"x.yaml": {}}}, check_mode=True)["changed"] is True
    assert not (tmp_path / "made").exists()
    assert run({"commit": str(root)}, check_mode=True)["changed"] is False
    # Something of that name that is not a directory is not ours.
    root.mkdir(parents=True)
    (root / mf.rs.STAGE).write_text("not ours")
    result = run({"discard": str(root)})
    assert result["failed"] is True and "in the way of render mode's staging area" in result["msg"]
    assert (root / mf.rs.STAGE).read_text() == "not ours"
    assert run({"commit": str(root), "dest": str(root)})["failed"] is True  # commit takes the root alone


def _chart(tmp_path):
    src = tmp_path / "src" / "network-operator"
    (src / "templates").mkdir(parents=True)
    (src / "Chart.yaml").write_text("name: network-operator\nversion: 26.4.1\n")
    (src / "templates" / "x.yaml").write_text("kind: X\n")
    os.chmod(src / "templates" / "x.yaml", 0o600)
    archive = tmp_path / "network-operator-26.4.1.tgz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(src, arcname="network-operator")
    return src, archive


def test_copy_from_unpacks_an_archive_or_copies_a_directory_with_the_modes_and_idempotently(tmp_path):
    src, archive = _chart(tmp_path)
    root = tmp_path / "render-out"
    first = run({"dest": str(root / "charts"), "files": {}, "copy_from": str(archive)})
    assert first["changed"] is True and [c["changed"] for c in first["copied"]] == [True, True]
    assert (root / "charts" / "network-operator" / "Chart.yaml").read_text() == "name: network-operator\nversion: 26.4.1\n"
    assert oct(os.stat(root / "charts" / "network-operator" / "templates" / "x.yaml").st_mode & 0o777) == "0o600"
    assert run({"dest": str(root / "charts"), "files": {}, "copy_from": str(archive)})["changed"] is False
    # The chart as a directory gives the same files under charts/<chart>.
    assert run({"dest": str(root / "charts" / "network-operator"), "files": {}, "copy_from": str(src)})["changed"] is False


def test_copy_from_refuses_an_archive_that_writes_outside_dest_or_holds_links(tmp_path):
    root = tmp_path / "render-out"
    for member, problem in (("../escape.yaml", "would be written outside the directory"), ("link", "is not a regular file")):
        archive = tmp_path / "bad.tgz"
        with tarfile.open(archive, "w:gz") as tf:
            info = tarfile.TarInfo(member)
            if member == "link":
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                tf.addfile(info)
            else:
                info.size = 2
                tf.addfile(info, io.BytesIO(b"x\n"))
        result = run({"dest": str(root / "charts"), "files": {}, "copy_from": str(archive)})
        assert result["failed"] is True and problem in result["msg"] and "Nothing was written" in result["msg"], result["msg"]
    (tmp_path / "not-a-chart.txt").write_text("hello")
    result = run({"dest": str(root / "charts"), "files": {}, "copy_from": str(tmp_path / "not-a-chart.txt")})
    assert result["failed"] is True and "neither a directory nor a readable tar archive" in result["msg"]
    assert not root.exists()
