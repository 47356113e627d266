# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller matrix: ansible-core releases that the pinned .venv (Debian 12, Python 3.11) cannot run, each in a
venv inside a Debian 13 root filesystem that this script makes, and the collection's checks run on each.

  build [CELL...]              the root filesystem and each cell's venv (cached in .build/controllers)
  run [CELL...] [-- PYTEST..]  build, then the checks on each cell, one after the other; a failure names the cell
  sanity [CELL]                tests/sanity/run.sh (ansible-test sanity --venv) on a cell (default: the newest)
  shell CELL [-- COMMAND...]   a command (default: bash) inside a cell, the checkout at the same path

A cell is a requirements file .ci/controllers/ansible-core-<cell>.txt (its ansible-core and, through
requirements-common.txt, the test tools). Needs root: mmdebstrap --mode=root, and each command runs under chroot in
its own mount namespace (unshare), where the checkout, the shared test data and, for pip, the machine's pip
configuration are bind-mounted at their own paths; nothing is left mounted when it ends.

Cached: the root filesystem is keyed on the suite, its package list and the code that makes it (rebuilt when one
changes, the old one removed); each venv on that key, its requirements files, the collections it is given (COLLECTIONS) and the
code that makes it. The root filesystem comes from the Debian archive this machine's apt already uses
(CONTROLLER_MIRROR wins), pip inside it uses the machine's pip configuration (config files, PIP_* variables and the
files and directories they name, such as the CA bundle): it works wherever make test does.
"""

import argparse
import fcntl
import glob
import inspect
import os
import shlex
import shutil
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "lab"))
import debian_archive  # noqa: E402  (the mirror and the cache key, shared with lab/rebootlab.py)

CELLS_DIR = os.path.join(REPO, ".ci", "controllers")
CACHE = os.path.join(REPO, ".build", "controllers")
SUITE = "trixie"
APT_DIR = "/etc/apt"
# git: ansible-test lists a collection's files through git (tests/sanity/run.sh).
PACKAGES = ("python3", "python3-venv", "python3-pip", "ca-certificates", "git")
# Where the venvs live inside the root filesystem.
VENVS = "/opt/gpufabric"
# The checks each cell runs (pytest arguments, from the checkout): the unit tests, the render goldens byte for byte and
# site.yml's validation (the SR-IOV render whatever the limit, unknown variables, bad input refused before phase 1).
CHECKS = (
    "tests/unit",
    "tests/integration/test_multirail_render.py",
    "tests/integration/test_site_validation.py",
    "tests/integration/test_site_bad_input.py",
)
# pip's configuration files, in the order pip reads them (site config, inside a venv, is the venv's own).
PIP_CONFIGS = ("/etc/xdg/pip/pip.conf", "/etc/pip.conf", "~/.pip/pip.conf", "~/.config/pip/pip.conf")
PIP_ENV_PREFIXES = ("PIP_",)
PIP_ENV = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "http_proxy", "https_proxy", "no_proxy",
           "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")


def log(msg):
    print("controller-matrix: %s" % msg, flush=True)


def die(msg):
    log("error: %s" % msg)
    sys.exit(2)


def run(cmd, **kwargs):
    return subprocess.run(cmd, check=True, **kwargs)  # noqa: S603


def host_suite():
    with open("/etc/os-release") as f:
        fields = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
    return fields.get("VERSION_CODENAME", "").strip('"')


def apt_mirror(suite=None):
    """The Debian archive this machine's apt uses for its own suite (as lab/rebootlab.py finds it for the reboot
    lab's image): Debian 13 comes from the same place as the host's packages, and no mirror is written down here."""
    if os.environ.get("CONTROLLER_MIRROR"):
        return os.environ["CONTROLLER_MIRROR"]
    entries = debian_archive.apt_sources(suite or host_suite(), APT_DIR)
    if not entries:
        die("no apt source for Debian %s on this machine; set CONTROLLER_MIRROR to a Debian archive URL" % suite)
    return entries[0]


def cells():
    """Every cell: the <cell> of each .ci/controllers/ansible-core-<cell>.txt, oldest first."""
    names = [os.path.basename(p)[len("ansible-core-"):-len(".txt")] for p in glob.glob(os.path.join(CELLS_DIR, "ansible-core-*.txt"))]
    return sorted(names, key=lambda n: [int(x) if x.isdigit() else x for x in n.split(".")])


def requirement_files(path, seen=None):
    """``path`` and every file it includes with -r / -c, each once."""
    seen = [] if seen is None else seen
    path = os.path.abspath(path)
    if path in seen:
        return seen
    seen.append(path)
    with open(path) as f:
        for line in f:
            words = line.split()
            if len(words) >= 2 and words[0] in ("-r", "-c", "--requirement", "--constraint"):
                requirement_files(os.path.join(os.path.dirname(path), words[1]), seen)
    return seen


# The collections every controller gets from the venv running this script (the ansible package of requirements.txt):
# the playbooks name kubernetes.core's modules, and a unit test reads awx.awx's module options. The same ones on every
# cell, so that a difference is ansible-core's.
COLLECTIONS = ("kubernetes.core", "awx.awx")


def collection_dir(name):
    for p in sys.path:
        candidate = os.path.join(p, "ansible_collections", *name.split("."))
        if os.path.isfile(os.path.join(candidate, "MANIFEST.json")):
            return candidate
    die("%s not found beside %s; run this with the .venv's python (make deps)" % (name, sys.executable))
    return None


# ---- the mount namespace ------------------------------------------------------------------------------------------


def pip_binds():
    """The machine's pip configuration: its config files, the PIP_* (and CA) variables, and every existing file or
    directory they name (the CA bundle, a constraints file, a local index or wheel directory), bound read-only at their
    own paths; the variables are passed on."""
    env = {k: v for k, v in os.environ.items() if k.startswith(PIP_ENV_PREFIXES) or k in PIP_ENV}
    configs = [os.path.expanduser(p) for p in PIP_CONFIGS]
    if os.environ.get("PIP_CONFIG_FILE"):
        configs.append(os.environ["PIP_CONFIG_FILE"])
    configs = [p for p in configs if os.path.isfile(p)]
    words = []
    for path in configs:
        with open(path) as f:
            for line in f:
                if "=" in line and not line.lstrip().startswith(("#", ";")):
                    words += line.split("=", 1)[1].split()
    words += [w for v in env.values() for w in v.split()]
    paths = list(configs)
    for w in words:
        p = w[len("file://"):] if w.startswith("file://") else w
        p = p.rstrip("/")
        if os.path.isabs(p):
            # A local index names .../simple: bind its parent (its files/ beside it).
            if p.endswith("/simple") and os.path.isdir(p):
                p = os.path.dirname(p)
            if os.path.exists(p) and p not in paths:
                paths.append(p)
    # The DNS and host names the machine uses, for pip's downloads.
    paths += [p for p in ("/etc/resolv.conf", "/etc/hosts") if os.path.exists(p)]
    return paths, env


def in_root(root, argv, env, *, binds=(), rw_binds=(), cwd="/"):
    """Run ``argv`` under chroot ``root`` in a new mount namespace (private: no mount reaches the host, all are gone when
    it ends) with /proc, /dev, /sys and ``binds`` (read-only) and ``rw_binds`` at their own paths; ``env`` only."""
    q = shlex.quote
    # /sys too: unit tests read the kernel's (lo's DCB and pause answers), as they do on the .venv.
    lines = ["set -e", "R=%s" % q(root), 'mount -t proc proc "$R/proc"', 'mount --rbind /dev "$R/dev"', 'mount --rbind /sys "$R/sys"']
    for path, ro in [(p, True) for p in binds] + [(p, False) for p in rw_binds]:
        target = '"$R"%s' % q(path)
        make = "mkdir -p %s" % target if os.path.isdir(path) else "mkdir -p \"$(dirname %s)\"; [ -e %s ] || : > %s" % (target, target, target)
        lines += [make, "mount --bind %s %s" % (q(path), target)]
        if ro:
            lines.append("mount -o remount,bind,ro %s" % target)
    command = ["/usr/bin/env", "-i"] + ["%s=%s" % kv for kv in sorted(env.items())] + ["sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", cwd] + list(argv)
    lines.append("exec chroot \"$R\" %s" % " ".join(q(a) for a in command))
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "--fork", "--", "sh", "-c", "\n".join(lines)], check=False).returncode  # noqa: S603,S607


# ---- the root filesystem and the venvs ----------------------------------------------------------------------------


def rootfs_key():
    return debian_archive.digest(["mmdebstrap", SUITE] + sorted(PACKAGES) + [inspect.getsource(build_rootfs)])


def rootfs_path():
    return os.path.join(CACHE, "rootfs-%s" % rootfs_key())


def build_rootfs():
    done = rootfs_path()
    if os.path.isdir(done):
        log("root filesystem cached: %s" % done)
        return done
    if not shutil.which("mmdebstrap"):
        die("mmdebstrap not found; run 'make deps' (lab/install-system-deps.sh installs it)")
    tmp = done + ".tmp"
    if os.path.exists(tmp):
        run(["rm", "-rf", "--one-file-system", tmp])
    os.makedirs(CACHE, exist_ok=True)
    mirror = apt_mirror()
    log("mmdebstrap %s (%s) from %s into %s" % (SUITE, ",".join(PACKAGES), mirror, tmp))
    started = time.time()
    # As the reboot lab's image (lab/rebootlab.py): minbase, merged /usr by the hook, apt's lists and cache left out.
    # Its output (and the hook's) goes to a log, shown when it fails.
    with open(os.path.join(CACHE, "mmdebstrap.log"), "w+") as out:
        rc = subprocess.run(["mmdebstrap", "--quiet", "--mode=root", "--variant=minbase", "--include=" + ",".join(PACKAGES),  # noqa: S607
                             "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr", SUITE, tmp, mirror],
                            stdout=out, stderr=subprocess.STDOUT, check=False).returncode
        if rc != 0:
            out.seek(0)
            print(out.read()[-6000:])
            die("mmdebstrap failed (exit %d); its output is in %s" % (rc, out.name))
    os.rename(tmp, done)
    log("root filesystem built in %.0fs: %s" % (time.time() - started, done))
    for path in glob.glob(os.path.join(CACHE, "rootfs-*")):
        if path != done:
            log("removing the root filesystem of other inputs: %s" % path)
            run(["rm", "-rf", "--one-file-system", path])
    return done


# ansible-test's sanity requirements that name a GitHub archive, which this machine's network does not reach (only the
# package registries): pinned to PyPI's release instead. ansible-test 2.22.0rc1 takes dill from a commit for Python
# 3.15; PyPI's dill 0.4.1 supports 3.13, the cells' Python. A new archive requirement without a pin stops the build.
SANITY_PINS = {"dill": "dill==0.4.1"}


def pin_sanity_requirements(site):
    """Rewrite the cell's ansible-test sanity requirements that name a GitHub archive to SANITY_PINS."""
    for path in glob.glob(os.path.join(site, "ansible_test", "_data", "requirements", "sanity.*.txt")):
        with open(path) as f:
            lines = f.read().splitlines(keepends=True)
        changed = False
        for i, line in enumerate(lines):
            words = line.split()
            if len(words) >= 3 and words[1] == "@" and "://github.com/" in words[2]:
                if words[0] not in SANITY_PINS:
                    die("%s asks for %s from GitHub, which is not reachable here; pin it in SANITY_PINS" % (path, words[0]))
                lines[i], changed = SANITY_PINS[words[0]] + "\n", True
        if changed:
            with open(path, "w") as f:
                f.writelines(lines)


def venv_key(root, cell):
    python = host_python(cell)
    parts = ["host " + python if python else os.path.basename(root), inspect.getsource(build_venv), repr(sorted(SANITY_PINS.items()))]
    for path in requirement_files(os.path.join(CELLS_DIR, "ansible-core-%s.txt" % cell)):
        with open(path, "rb") as f:
            parts += [os.path.relpath(path, REPO), f.read()]
    for name in COLLECTIONS:
        with open(os.path.join(collection_dir(name), "MANIFEST.json"), "rb") as f:
            parts.append(f.read())
    return debian_archive.digest(parts)


def host_python(cell):
    """The interpreter on this machine that a cell names with a line ``# python: <path>`` (the floor, ansible-core 2.16,
    does not run on Debian 13's Python 3.13), or None: the cell is in the root filesystem."""
    with open(os.path.join(CELLS_DIR, "ansible-core-%s.txt" % cell)) as f:
        for line in f:
            if line.startswith("# python:"):
                return line.split(":", 1)[1].strip()
    return None


def venv_dir(cell):
    """The cell's venv as the cell sees it: inside the root filesystem, or on this machine for a host_python cell."""
    if host_python(cell):
        return os.path.join(CACHE, "host", "ansible-core-%s" % cell)
    return "%s/ansible-core-%s" % (VENVS, cell)


def on_host(root, cell):
    """The cell's venv as this machine sees it."""
    return venv_dir(cell) if host_python(cell) else os.path.join(root, venv_dir(cell).lstrip("/"))


def in_cell(root, cell, argv, env, *, binds=(), rw_binds=(), cwd="/"):
    """``argv`` in the cell: in_root, or on this machine for a host_python cell (``binds`` are its own paths there)."""
    if host_python(cell):
        return subprocess.run(list(argv), env=env, cwd=cwd, check=False).returncode  # noqa: S603
    return in_root(root, argv, env, binds=binds, rw_binds=rw_binds, cwd=cwd)


def venv_stamp(root, cell):
    """The file in the cell's venv that holds the venv_key it was made for."""
    return os.path.join(on_host(root, cell), ".gpufabric-stamp")


def venv_cached(root, cell):
    stamp = venv_stamp(root, cell)
    if not os.path.isfile(stamp):
        return False
    with open(stamp) as f:
        return f.read().strip() == venv_key(root, cell)


def build_venv(root, cell):
    """The cell's venv inside ``root`` (Debian's python3) or on this machine (host_python), its requirements file, and
    COLLECTIONS as the .venv has them."""
    venv = venv_dir(cell)
    host_venv = on_host(root, cell)
    if venv_cached(root, cell):
        log("venv of ansible-core %s cached: %s" % (cell, venv))
        return
    started = time.time()
    if os.path.exists(host_venv):
        run(["rm", "-rf", "--one-file-system", host_venv])
    binds, pip_env = pip_binds()
    env = dict(pip_env, PATH="/usr/sbin:/usr/bin:/sbin:/bin", HOME=os.environ.get("HOME", "/root") if host_python(cell) else "/root", LANG="C.UTF-8")
    reqs = os.path.join(CELLS_DIR, "ansible-core-%s.txt" % cell)
    # pip's output goes to a log (the machine's extra indexes may warn for every package they lack), shown on failure.
    logfile = os.path.join(CACHE, "pip-%s.log" % cell)
    script = "{p} -m venv {v} && {v}/bin/pip install --no-input -r {r} > {log} 2>&1".format(
        p=shlex.quote(host_python(cell) or "python3"), v=shlex.quote(venv), r=shlex.quote(reqs), log=shlex.quote(logfile))
    log("venv of ansible-core %s: %s" % (cell, venv))
    rc = in_cell(root, cell, ["sh", "-c", script], env, binds=binds + [CELLS_DIR], rw_binds=[CACHE])
    if rc != 0:
        with open(logfile) as f:
            print(f.read()[-6000:])
        die("pip could not make the venv of ansible-core %s (exit %d); its output is in %s" % (cell, rc, logfile))
    site = glob.glob(os.path.join(host_venv, "lib", "python3*", "site-packages"))
    if len(site) != 1:
        die("no single site-packages in %s: %s" % (host_venv, site))
    pin_sanity_requirements(site[0])
    for name in COLLECTIONS:
        dest = os.path.join(site[0], "ansible_collections", *name.split("."))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copytree(collection_dir(name), dest, ignore=shutil.ignore_patterns("__pycache__"))
    with open(venv_stamp(root, cell), "w") as f:
        f.write(venv_key(root, cell) + "\n")
    log("venv of ansible-core %s made in %.0fs" % (cell, time.time() - started))


def needs_rootfs(selected):
    return any(not host_python(c) for c in selected)


def cached(selected):
    """Whether the root filesystem and every selected cell's venv are built for their current inputs."""
    root = rootfs_path() if needs_rootfs(selected) else None
    if root and not os.path.isdir(root):
        return False
    return all(venv_cached(root, cell) for cell in selected)


def build(selected):
    if os.geteuid() != 0:
        die("the controller matrix needs root (mmdebstrap, chroot, mount namespaces)")
    root = build_rootfs() if needs_rootfs(selected) else None
    for cell in selected:
        build_venv(root, cell)
    return root


# ---- the checks ---------------------------------------------------------------------------------------------------


def check_env(cell):
    venv = venv_dir(cell)
    env = {
        "PATH": "%s/bin:/usr/sbin:/usr/bin:/sbin:/bin" % venv,
        "HOME": os.environ.get("HOME", "/root") if host_python(cell) else "/root",
        "LANG": "C.UTF-8",
        "ANSIBLE_CONFIG": os.path.join(REPO, "ansible.cfg"),
        "ANSIBLE_COLLECTIONS_PATH": os.path.join(REPO, ".build", "collections"),
        "ANSIBLE_GALAXY_SERVER_LIST": "",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    for name in ("GPUFABRIC_SHARED_DIR", "GPUFABRIC_CRDS_DIR"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


def shared_binds():
    paths = []
    for p in (os.environ.get("GPUFABRIC_SHARED_DIR"), os.environ.get("GPUFABRIC_CRDS_DIR")):
        if p and os.path.isdir(p) and p not in paths:
            paths.append(p)
    return paths


def git_binds():
    """The checkout's git directories when they lie outside it (a worktree's are in its main checkout's .git), for
    tests/sanity/run.sh's git ls-files."""
    out = subprocess.run(["git", "-C", REPO, "rev-parse", "--absolute-git-dir", "--git-common-dir"],  # noqa: S607
                         capture_output=True, text=True, check=False).stdout.split()
    dirs = []
    for name in out:
        d = os.path.realpath(os.path.join(REPO, name))
        if os.path.isdir(d) and not (d + "/").startswith(REPO + "/") and d not in dirs:
            dirs.append(d)
    return dirs


def link_collection():
    link = os.path.join(REPO, ".build", "collections", "ansible_collections", "gpufabric", "roce")
    if os.path.realpath(link) != REPO:
        die("%s does not point at this checkout; run make link" % link)


def run_checks(root, selected, pytest_args):
    link_collection()
    results = []
    for cell in selected:
        version = subprocess.run(["sh", "-c", "grep -h '^ansible-core==' %s" % shlex.quote(os.path.join(CELLS_DIR, "ansible-core-%s.txt" % cell))],
                                 capture_output=True, text=True, check=False).stdout.strip()
        python = host_python(cell)
        where = "this machine's %s" % python if python else "Python of Debian %s" % SUITE
        log("== ansible-core %s (%s, %s): pytest %s" % (cell, version, where, " ".join(pytest_args)))
        started = time.time()
        basetemp = os.path.join(CACHE, "host", "pytest-%s" % cell) if python else "/tmp/pytest-matrix"
        argv = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp=" + basetemp] + list(pytest_args)
        rc = in_cell(root, cell, argv, check_env(cell), binds=shared_binds(), rw_binds=[REPO], cwd=REPO)
        took = time.time() - started
        results.append((cell, version, rc, took))
        log("ansible-core %s: %s in %.0fs" % (cell, "passed" if rc == 0 else "FAILED (exit %d)" % rc, took))
    log("== summary")
    for cell, version, rc, took in results:
        log("  ansible-core %-6s %-24s %-7s %5.0fs" % (cell, version, "passed" if rc == 0 else "FAILED", took))
    failed = [r[0] for r in results if r[2] != 0]
    if failed:
        log("failed on ansible-core %s" % ", ".join(failed))
        return 1
    return 0


def run_sanity(root, selected, extra):
    """tests/sanity/run.sh with the cell's ansible-test: its --venv venvs get their tools from pip, configured as this
    machine's pip is (as in build_venv)."""
    binds, pip_env = pip_binds()
    rc = 0
    for cell in selected:
        log("== ansible-test sanity of ansible-core %s" % cell)
        started = time.time()
        env = dict(check_env(cell), **pip_env)
        env["PYTHON"] = "%s/bin/python" % venv_dir(cell)
        one = in_cell(root, cell, ["tests/sanity/run.sh"] + list(extra), env, binds=binds + shared_binds() + git_binds(), rw_binds=[REPO], cwd=REPO)
        log("ansible-test sanity of ansible-core %s: %s in %.0fs" % (cell, "passed" if one == 0 else "FAILED (exit %d)" % one, time.time() - started))
        rc = rc or one
    return rc


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("build", "run", "sanity", "shell"))
    parser.add_argument("cells", nargs="*", help="cells (default: all): %s" % ", ".join(cells()))
    args = parser.parse_args(argv)
    known = cells()
    selected = args.cells or (known[-1:] if args.action == "sanity" else known)
    unknown = [c for c in selected if c not in known]
    if unknown:
        die("no cell %s (.ci/controllers/ansible-core-<cell>.txt): %s" % (", ".join(unknown), ", ".join(known)))
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, "lock"), "w") as lock:
        # A build is exclusive; runs on a built cache share it (make test's matrix and matrix-sanity stages run side by
        # side), and a build that is needed waits for them.
        started = time.time()
        fcntl.flock(lock, fcntl.LOCK_SH)
        if not cached(selected):
            fcntl.flock(lock, fcntl.LOCK_UN)
            fcntl.flock(lock, fcntl.LOCK_EX)
        root = build(selected)
        fcntl.flock(lock, fcntl.LOCK_SH)
        log("controllers ready in %.0fs" % (time.time() - started))
        if args.action == "build":
            return 0
        if args.action == "shell":
            if len(selected) != 1:
                die("shell takes one cell")
            return in_root(root, extra or ["bash"], dict(check_env(selected[0]), TERM=os.environ.get("TERM", "dumb")),
                           binds=shared_binds(), rw_binds=[REPO], cwd=REPO)
        if args.action == "sanity":
            return run_sanity(root, selected, extra)
        return run_checks(root, selected, extra or list(CHECKS))


if __name__ == "__main__":
    sys.exit(main())
