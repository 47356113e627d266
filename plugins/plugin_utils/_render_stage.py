# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render mode's writes, all or nothing (gpufabric.roce.manifest_files): a run's files are first written into a staging
area inside the rendered tree's root (roce_render_dir), then swapped in at once; a failure on the way leaves the tree as
it was. Only the files a task stages are swapped in or removed: the other files of the tree (a user's, another tool's)
are never touched.

The staging area, ``<root>/.gpufabric-roce-stage`` (inside the root: the same file system, so a file is swapped in by a
rename, which needs no space and cannot be half done):

- ``files/<path>``: the new content of ``<root>/<path>``, with its mode;
- ``remove/<path>``: an empty marker, ``<root>/<path>`` goes;
- ``backup/<path>``: while swapping in, the file replaced or removed, put back when a later step fails;
- ``created``: the directories made to hold the staging area (the root and its missing parents), removed again with the
  staging area when nothing was swapped in.
"""

import contextlib
import errno
import json
import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import time
import zlib

STAGE = ".gpufabric-roce-stage"
# Where the replaced files are kept when a failed swap could not put every one back.
BACKUP = ".gpufabric-roce-backup"


class StageError(Exception):
    """A problem for the user: its message names the path and the fix."""


def stage_path(root):
    return os.path.join(root, STAGE)


def tmp_prefix(name):
    """The prefix of this collection's temporaries beside a file of the tree (``.<file>.XXXXXXXX``)."""
    return "." + name + "."


def dir_mode(perm):
    """The mode of a directory that holds files of mode ``perm``: the execute bit added for each read bit."""
    return perm | ((perm & 0o444) >> 2)


def _walk(top):
    """The paths, relative to ``top``, of everything under it that is not a directory; sorted."""
    out = []
    for here, dirs, names in os.walk(top):
        dirs.sort()
        out.extend(os.path.relpath(os.path.join(here, n), top) for n in names)
    return sorted(out)


def _makedirs(path, mode, created):
    """``os.makedirs``, appending each directory it makes to ``created`` (outermost first)."""
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for d in reversed(missing):
        os.mkdir(d, mode)
        created.append(d)


def in_the_way(root, paths):
    """The paths of the tree that stop the files ``paths`` (relative to ``root``) from being written: a file (or a link)
    where a directory is needed, a directory where a file is. One line each, naming the path."""
    problems, checked = [], set()
    for rel in [""] + sorted(paths):
        parts = rel.split(os.sep) if rel else []
        path, blocked = root, False
        for part in [None] + parts[:-1]:
            path = path if part is None else os.path.join(path, part)
            if path in checked:
                continue
            checked.add(path)
            if os.path.lexists(path) and not os.path.isdir(path):
                problems.append("%s is not a directory" % path)
                blocked = True
                break
        target = os.path.join(root, rel)
        if rel and not blocked and os.path.isdir(target):
            problems.append("%s is a directory" % target)
    return problems


def _own(stage):
    if os.path.islink(stage) or not os.path.isdir(stage):
        raise StageError("%s: in the way of render mode's staging area, and not a directory of its own; nothing was written. "
                         "Fix: move it away by hand" % stage)


def open_stage(root, mode):
    """The staging area of ``root``, made when missing (with the root and its missing parents, directories of ``mode``)."""
    stage = stage_path(root)
    if os.path.lexists(stage):
        _own(stage)
        return stage
    created = []
    _makedirs(root, mode, created)
    os.mkdir(stage, 0o700)
    with open(os.path.join(stage, "created"), "w") as fh:
        json.dump(created, fh)
    return stage


def stage_file(stage, rel, content, perm, mode):
    """Stage ``content`` (bytes) as the new ``<root>/<rel>`` of mode ``perm``; the directories on the way get ``mode``."""
    path = os.path.join(stage, "files", rel)
    _makedirs(os.path.dirname(path), mode, [])
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(content)
    os.chmod(path, perm)


def stage_removal(stage, rel):
    """Stage the removal of ``<root>/<rel>``."""
    path = os.path.join(stage, "remove", rel)
    _makedirs(os.path.dirname(path), 0o700, [])
    with open(path, "w"):
        pass


def discard(root):
    """Remove the staging area of ``root`` and what was staged in it, then the directories made for it when they are
    empty. Returns whether there was one."""
    stage = stage_path(root)
    if not os.path.lexists(stage):
        return False
    _own(stage)
    try:
        with open(os.path.join(stage, "created")) as fh:
            created = json.load(fh)
    except (OSError, ValueError):
        created = []
    shutil.rmtree(stage)
    for d in reversed(created if isinstance(created, list) else []):
        try:
            os.rmdir(d)
        except OSError:
            break
    return True


def _copy_into_place(src, target):
    """``src`` copied to a temporary beside ``target`` and renamed over it: for a directory of the tree on another file
    system than the staging area (a mount point inside roce_render_dir)."""
    fd, tmp = tempfile.mkstemp(prefix=tmp_prefix(os.path.basename(target)), dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "wb") as out, open(src, "rb") as fh:
            shutil.copyfileobj(fh, out)
        os.chmod(tmp, stat.S_IMODE(os.stat(src).st_mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        os.unlink(src)


def _move(src, target):
    try:
        os.replace(src, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV or os.path.islink(src):
            raise
        _copy_into_place(src, target)


def _keep(stage, rel, target, move):
    """Keep ``target`` as ``backup/<rel>`` of the staging area: a second link to it (the target is then replaced in one
    rename), or the file itself (``move``: it is to go)."""
    backup = os.path.join(stage, "backup", rel)
    _makedirs(os.path.dirname(backup), 0o700, [])
    if move:
        try:
            os.replace(target, backup)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            shutil.copy2(target, backup, follow_symlinks=False)
            os.unlink(target)
        return backup
    try:
        os.link(target, backup, follow_symlinks=False)
    except OSError:
        shutil.copy2(target, backup, follow_symlinks=False)
    return backup


def commit(root):
    """Swap everything staged for ``root`` into it, all or nothing, then remove the staging area. Returns
    ``(written, removed)``, the paths of the tree. On a failure every file swapped in so far is put back (the tree is as
    it was) and StageError says what failed; a file that could not be put back is named, and kept in BACKUP."""
    stage = stage_path(root)
    if not os.path.lexists(stage):
        return [], []
    _own(stage)
    files = _walk(os.path.join(stage, "files"))
    removals = sorted(set(_walk(os.path.join(stage, "remove"))) - set(files))
    # The tree may have changed since the files were staged.
    problems = in_the_way(root, files)
    if problems:
        raise StageError("%s: in the way of render mode; nothing was written or removed. Fix: move it away by hand" % "; ".join(problems))
    done, created, written, removed = [], [], [], []
    try:
        for rel in files:
            target, staged = os.path.join(root, rel), os.path.join(stage, "files", rel)
            _makedirs(os.path.dirname(target), stat.S_IMODE(os.stat(os.path.dirname(staged)).st_mode), created)
            backup = _keep(stage, rel, target, move=False) if os.path.lexists(target) else None
            _move(staged, target)
            done.append((target, backup))
            written.append(target)
        for rel in removals:
            target = os.path.join(root, rel)
            if os.path.lexists(target):
                done.append((target, _keep(stage, rel, target, move=True)))
                removed.append(target)
    except OSError as exc:
        lost = _put_back(done, created)
        what = "cannot write %s: %s" % (exc.filename or root, exc.strerror or exc)
        if lost:
            kept = os.path.join(root, "%s.%s" % (BACKUP, time.strftime("%Y%m%dT%H%M%S")))
            with contextlib.suppress(OSError):
                os.replace(stage, kept)
            raise StageError("%s, and these files could not be put back: %s; their earlier content is in %s. Fix: restore them "
                             "from there, then the cause above" % (what, "; ".join(lost), kept)) from exc
        with contextlib.suppress(OSError, StageError):
            discard(root)
        raise StageError("%s. Nothing was changed in %s: the files swapped in before it were put back. Fix: free space, or "
                         "make roce_render_dir writable (or choose another one)" % (what, root)) from exc
    shutil.rmtree(stage, ignore_errors=True)
    return written, removed


def _put_back(done, created):
    lost = []
    for target, backup in reversed(done):
        try:
            if backup is None:
                os.unlink(target)
            else:
                _move(backup, target)
        except OSError as exc:
            lost.append("%s (%s)" % (target, exc.strerror or exc))
    for d in reversed(created):
        with contextlib.suppress(OSError):
            os.rmdir(d)
    return lost


def read_tree(src):
    """``{relative path: (content, mode)}`` of the regular files of ``src``: a directory (links followed, as
    ansible.builtin.copy does), or a tar archive of any compression (its paths as they are: a chart package's top
    directory is kept). Raises StageError naming ``src`` and what is wrong."""
    if os.path.isdir(src):
        out = {}
        for here, dirs, names in os.walk(src, followlinks=True):
            dirs.sort()
            for name in names:
                path = os.path.join(here, name)
                try:
                    with open(path, "rb") as fh:
                        out[os.path.relpath(path, src)] = (fh.read(), stat.S_IMODE(os.stat(path).st_mode))
                except OSError as exc:
                    raise StageError("%s: cannot read %s (%s)" % (src, path, exc.strerror or exc)) from exc
        return out
    try:
        with tarfile.open(src, "r:*") as archive:
            out = {}
            for member in archive.getmembers():
                name = posixpath.normpath(member.name)
                if member.isdir():
                    continue
                if name.startswith("/") or name == ".." or name.startswith("../"):
                    raise StageError("%s: the archive's member %s would be written outside the directory it is unpacked into" % (src, member.name))
                if not member.isfile():
                    raise StageError("%s: the archive's member %s is not a regular file (a link or a device); a chart archive, "
                                     "as helm package writes it, holds files only" % (src, member.name))
                out[name.replace("/", os.sep)] = (archive.extractfile(member).read(), (member.mode & 0o777) or 0o644)
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise StageError("%s: neither a directory nor a readable tar archive (%s)" % (src, exc)) from exc
    if not out:
        raise StageError("%s: the archive holds no file" % src)
    return out
