# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of gpufabric.roce.manifest_files: write YAML files on the controller in one step, all or nothing
(plugin_utils/_render_stage.py)."""

import contextlib
import json
import multiprocessing
import os
import re

import yaml

from ansible.plugins.action import ActionBase
from ansible_collections.gpufabric.roce.plugins.module_utils._common.core import plain
from ansible_collections.gpufabric.roce.plugins.module_utils._k8s.fabric import with_labels
from ansible_collections.gpufabric.roce.plugins.plugin_utils import _render_stage as rs

try:
    _Dumper = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - libyaml missing
    _Dumper = yaml.SafeDumper


def _dump(docs):
    return yaml.dump_all([plain(d) for d in docs], Dumper=_Dumper, explicit_start=True, default_flow_style=False, sort_keys=False, width=4096)


def to_yaml(content):
    if isinstance(content, str):
        return content, 1
    docs = [content] if isinstance(content, dict) else list(content or [])
    return _dump(docs), len(docs)


# A render of tens of thousands of objects (10,000 nodes x 8 rails: 80,000 policies) spends most of its write in PyYAML's
# representer, which is Python, on one core. From this many documents on, the controller's cores each dump a slice of a
# file's documents and the slices' texts are joined in order. Each document is emitted on its own ("---", its mapping)
# and nothing carries from one to the next, so the joined text is the whole dump's, byte for byte. What could carry is an
# open stream, which PyYAML closes with "...": it follows a plain scalar at a document's root or a block scalar that
# keeps its trailing newlines, and the safe dumper writes no block scalar; so only lists of mappings are sliced.
PARALLEL_DOCS = 20000
_SLICE_DOCS = 2500
# The files' documents, for the forked workers to slice: set just before the fork, so nothing is pickled to them.
_SHARED = {}


def _dump_slice(task):
    name, start, stop = task
    return _dump(_SHARED[name][start:stop])


def _workers():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def yaml_texts(files, workers=None):
    """``{name: (text, documents)}`` for ``files`` (name to a YAML text, one object or a list of objects), as
    ``to_yaml`` gives each; with at least PARALLEL_DOCS documents in lists and more than one core, dumped in slices
    side by side."""
    lists = {n: c for n, c in files.items() if isinstance(c, list) and len(c) > _SLICE_DOCS and all(isinstance(d, dict) for d in c)}
    workers = _workers() if workers is None else workers
    if workers < 2 or sum(len(c) for c in lists.values()) < PARALLEL_DOCS:
        return {n: to_yaml(c) for n, c in files.items()}
    tasks = [(n, i, i + _SLICE_DOCS) for n, c in lists.items() for i in range(0, len(c), _SLICE_DOCS)]
    _SHARED.update(lists)
    try:
        with multiprocessing.get_context("fork").Pool(min(workers, len(tasks))) as pool:
            texts = pool.map(_dump_slice, tasks, chunksize=1)
    finally:
        _SHARED.clear()
    out = {n: to_yaml(c) for n, c in files.items() if n not in lists}
    for name, content in lists.items():
        out[name] = ("".join(text for task, text in zip(tasks, texts) if task[0] == name), len(content))
    return out


def stale_temporaries(dest, names):
    """Temporaries of this plugin's own naming (``.<file>.XXXXXXXX``, tempfile.mkstemp's 8 characters) for the files
    ``names`` in ``dest``, left by a run that was killed mid-write: nothing else in the directory matches."""
    patterns = [re.compile(re.escape(rs.tmp_prefix(n)) + r"[a-z0-9_]{8}\Z") for n in names]
    try:
        entries = os.listdir(dest)
    except OSError:
        return []
    return sorted(os.path.join(dest, e) for e in entries if any(p.match(e) for p in patterns) and os.path.isfile(os.path.join(dest, e)))


def with_objects(files, objects, object_files):
    """``files`` with, for each name of ``object_files``, the list its key names in ``objects`` (a JSON text, as
    gpufabric.roce.sriov_render returns it). (files, None), or (None, the problem)."""
    if not object_files:
        return files, None
    if not isinstance(object_files, dict) or not isinstance(objects, str):
        return None, "object_files (a mapping of file name to a key of objects) needs objects (a JSON text of a mapping of lists)"
    try:
        parsed = json.loads(objects)
    except ValueError as exc:
        return None, "objects is not JSON text (%s); give the objects of gpufabric.roce.sriov_render as they are" % exc
    missing = sorted("%s" % k for k in object_files.values() if not isinstance(parsed, dict) or k not in parsed)
    if missing:
        return None, "object_files names keys that objects does not have: %s" % ", ".join(missing)
    both = sorted(set(object_files) & set(files))
    if both:
        return None, "these file names are in both files and object_files: %s" % ", ".join(both)
    return dict(files, **{name: parsed[key] for name, key in object_files.items()}), None


def _is_object(doc):
    return isinstance(doc, dict) and isinstance(doc.get("metadata"), dict)


def labelled(files, labels):
    """``files`` with ``labels`` added to every Kubernetes object in them (a mapping with metadata: not a Kustomization, nor
    text), as apply mode adds them (``_k8s.fabric.with_labels``): a tree applied by a GitOps tool carries what an apply would."""
    if not labels:
        return files
    out = dict(files)
    for name, content in files.items():
        if _is_object(content):
            out[name] = with_labels([content], labels)[0]
        elif isinstance(content, list):
            out[name] = [with_labels([d], labels)[0] if _is_object(d) else d for d in content]
    return out


def _read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _mode_differs(path, perm):
    return (os.stat(path).st_mode & 0o7777) != perm


def _inside(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("dest", "files", "mode", "absent", "objects", "object_files", "labels", "copy_from", "stage", "commit", "discard"))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        check = bool(self._task.check_mode)
        ops = [k for k in ("commit", "discard") if args.get(k)]
        if ops:
            return self._transaction(result, args, ops, check)
        return self._write(result, args, check)

    @staticmethod
    def _transaction(result, args, ops, check):
        others = sorted(k for k in args if k not in ("commit", "discard") and args.get(k) not in (None, "", [], {}))
        if len(ops) > 1 or others:
            result.update(failed=True, msg="commit and discard each take the root of the rendered tree alone, got %s" % ", ".join(ops + others))
            return result
        op = ops[0]
        root = os.path.abspath(os.path.expanduser(str(args[op])))
        # Check mode stages nothing (the writes only report), so there is nothing to swap in or remove.
        if check:
            result.update(changed=False, files=[], removed=[])
            return result
        try:
            if op == "commit":
                written, removed = rs.commit(root)
                result.update(changed=bool(written or removed), files=written, removed=removed)
            else:
                result.update(changed=rs.discard(root), files=[], removed=[])
        except rs.StageError as exc:
            result.update(failed=True, msg=str(exc))
        except OSError as exc:
            # Before the swap (reading the staging area) or removing it: nothing of the tree was changed.
            result.update(failed=True, msg="cannot %s the staging area %s: %s. Nothing was changed in %s. Fix: make it readable and "
                          "writable, or remove it by hand" % ("read" if op == "commit" else "remove", rs.stage_path(root), exc.strerror or exc, root))
        return result

    def _write(self, result, args, check):
        dest, files, mode = args.get("dest"), args.get("files"), str(args.get("mode", "0644"))
        absent = args.get("absent") or []
        if not dest or not isinstance(files, dict):
            result.update(failed=True, msg="dest (a directory) and files (a mapping of file name to content) are required")
            return result
        try:
            perm = int(mode, 8)
        except ValueError:
            result.update(failed=True, msg="mode must be an octal string such as '0644', got %r" % mode)
            return result
        files, problem = with_objects(files, args.get("objects"), args.get("object_files"))
        if problem:
            result.update(failed=True, msg=problem)
            return result
        labels = args.get("labels") or {}
        if not isinstance(labels, dict):
            result.update(failed=True, msg="labels must be a mapping of label to value, got %r" % (labels,))
            return result
        files = labelled(files, labels)
        if not isinstance(absent, list):
            result.update(failed=True, msg="absent must be a list of file names, got %r" % (absent,))
            return result
        bad = [n for n in list(files) + absent if not isinstance(n, str) or not n or os.sep in n or n in (".", "..")]
        if bad:
            result.update(failed=True, msg="file names must be plain names without a directory part: %s" % ", ".join(map(str, bad)))
            return result
        dest = os.path.abspath(os.path.expanduser(str(dest)))
        # Without stage the task is a transaction of its own, its staging area in dest.
        staged_by_caller = bool(args.get("stage"))
        root = os.path.abspath(os.path.expanduser(str(args["stage"]))) if staged_by_caller else dest
        sub = os.path.relpath(dest, root) if _inside(dest, root) else None
        if sub is None or sub.split(os.sep)[0] == rs.STAGE:
            result.update(failed=True, msg="dest %s must be inside stage %s (the root of the rendered tree), outside its staging area %s"
                          % (dest, root, rs.STAGE))
            return result
        sub = "" if sub == "." else sub
        copies = {}
        if args.get("copy_from"):
            try:
                copies = rs.read_tree(os.path.abspath(os.path.expanduser(str(args["copy_from"]))))
            except rs.StageError as exc:
                result.update(failed=True, msg="copy_from=%s. Nothing was written. Fix: give a chart archive (.tgz, as helm package "
                              "writes it) or a chart directory" % exc)
                return result
            both = sorted(set(files) & set(copies))
            if both:
                result.update(failed=True, msg="these file names are in both files and copy_from: %s" % ", ".join(both))
                return result

        # Everything that could stop the write is checked before anything is staged.
        problems = rs.in_the_way(root, [os.path.join(sub, n) for n in list(files) + list(copies)])
        removed = [os.path.join(dest, n) for n in sorted(set(absent) - set(files)) if os.path.lexists(os.path.join(dest, n))]
        problems += ["%s is not a regular file" % p for p in removed if os.path.islink(p) or not os.path.isfile(p)]
        if problems:
            result.update(failed=True, msg="%s: in the way of render mode; nothing was written or removed. Fix: move it away by hand"
                          % "; ".join(problems))
            return result
        # A run killed mid-write (or an earlier version's failed one) left its temporaries: they go too.
        stale = stale_temporaries(dest, files)

        texts = yaml_texts(files)
        out, copied, diffs, staged = [], [], [], []
        for name in sorted(files):
            text, count = texts[name]
            path, new = os.path.join(dest, name), text.encode("utf-8")
            old = _read(path)
            file_changed = old != new or _mode_differs(path, perm)
            if old != new:
                diffs.append({"before_header": path if old is not None else "%s (absent)" % path, "after_header": path,
                              "before": (old or b"").decode("utf-8", "replace"), "after": text})
            if file_changed:
                staged.append((path, new, perm))
            out.append({"path": path, "documents": count, "changed": file_changed})
        for rel in sorted(copies):
            content, file_perm = copies[rel]
            path = os.path.join(dest, rel)
            file_changed = _read(path) != content or _mode_differs(path, file_perm)
            if file_changed:
                staged.append((path, content, file_perm))
            copied.append({"path": path, "changed": file_changed})
        for path in removed:
            diffs.append({"before_header": path, "after_header": "%s (absent)" % path, "before": (_read(path) or b"").decode("utf-8", "replace"),
                          "after": ""})
        result.update(changed=bool(staged or removed or stale), files=out, removed=removed, removed_temporaries=stale)
        if args.get("copy_from"):
            result["copied"] = copied
        if self._task.diff and diffs:
            result["diff"] = diffs
        if check or not (staged or removed or stale):
            return result

        path = root
        try:
            if not staged_by_caller:
                rs.discard(root)  # what a killed run left staged
            stage = rs.open_stage(root, rs.dir_mode(perm))
            for path, content, file_perm in staged:
                rs.stage_file(stage, os.path.relpath(path, root), content, file_perm, rs.dir_mode(perm))
            for path in removed + stale:
                rs.stage_removal(stage, os.path.relpath(path, root))
            if not staged_by_caller:
                rs.commit(root)
        except (OSError, rs.StageError) as exc:
            if not staged_by_caller:
                with contextlib.suppress(OSError, rs.StageError):
                    rs.discard(root)
            if isinstance(exc, rs.StageError):
                result.update(failed=True, msg=str(exc))
            else:
                # The write's own error is the one to report, not a failed clean-up of the staging area.
                result.update(failed=True, msg="cannot write %s: %s. Nothing was written into %s: a run's files are swapped in only "
                              "when every one is written. Fix: free space or choose a writable directory with roce_render_dir"
                              % (path, exc.strerror or exc, root))
        return result
