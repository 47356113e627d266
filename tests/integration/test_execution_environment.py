# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""execution-environment.yml through ansible-builder, as far as it goes without a container engine.

`ansible-builder create` writes the build context; the image is never built here. What is checked:
- every path a RUN or COPY of a stage uses that came from the build context was copied into THAT
  stage (or a stage it is FROM): the mistake where the final stage installed from /build, which
  only the galaxy stage has. The definition that had it is kept below and must be caught;
- the collection tarball reaches the galaxy stage's requirements and the context;
- ansible-builder's own introspection script (from the context) reads gpufabric.roce's
  meta/execution-environment.yml from an installed copy: ranges, no node-only packages;
- the helm step, run with file:// URLs standing in for get.helm.sh: it installs the binary when the
  sha256 matches and stops the build when it does not.
"""

import hashlib
import io
import os
import re
import shlex
import subprocess
import sys
import tarfile

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VENV_BIN = os.path.dirname(sys.executable)
TARBALL = "gpufabric-roce-0.1.0.tar.gz"

# The definition as it was (issue 12): the final stage installs from /build, which only the galaxy stage copied in.
BROKEN_DEFINITION = """
version: 3
images:
  base_image:
    name: quay.io/centos/centos:stream9
dependencies:
  ansible_core:
    package_pip: ansible-core==2.19.14
  ansible_runner:
    package_pip: ansible-runner==2.4.3
  python_interpreter:
    package_system: python3.11
    python_path: /usr/bin/python3.11
  galaxy:
    collections:
      - name: kubernetes.core
        version: ">=5.0.0"
additional_build_files:
  - src: gpufabric-roce-0.1.0.tar.gz
    dest: collections
additional_build_steps:
  append_final:
    - RUN ansible-galaxy collection install /build/collections/gpufabric-roce-0.1.0.tar.gz -p /usr/share/ansible/collections
"""


# ------------------------------------------------------------------------------ Containerfile model


def parse_containerfile(text):
    """[{name, parent, instrs: [(op, args)]}] in file order; line continuations joined, comments dropped."""
    logical, buf = [], ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        logical.append(buf + line)
        buf = ""
    stages, names = [], {}
    for line in logical:
        op, _sep, args = line.strip().partition(" ")
        op = op.upper()
        if op == "FROM":
            m = re.match(r"^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?\s*$", args, re.IGNORECASE)
            image, name = m.group(1), m.group(2) or str(len(stages))
            stage = {"name": name, "parent": names.get(image), "instrs": []}
            names[name] = stage
            stages.append(stage)
        elif stages:
            stages[-1]["instrs"].append((op, args.strip()))
    return stages


def _copy_parts(args):
    words = shlex.split(args)
    flags = {w.split("=", 1)[0][2:]: w.split("=", 1)[-1] for w in words if w.startswith("--")}
    paths = [w for w in words if not w.startswith("--")]
    return flags, paths[:-1], paths[-1]


def _under(path, root):
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root + "/")


def check_stage_paths(text, context_dir):
    """Problems: a path from the build context used by a stage that never copied it in, or a COPY source
    missing from the context / from the stage it is copied from."""
    stages = parse_containerfile(text)
    by_name = {s["name"]: s for s in stages}
    context_roots = set()  # where build-context content lands, in any stage
    for s in stages:
        workdir = "/"
        for op, args in s["instrs"]:
            if op == "WORKDIR":
                workdir = os.path.join(workdir, args)
            elif op in ("COPY", "ADD"):
                flags, _srcs, dest = _copy_parts(args)
                if "from" not in flags:
                    context_roots.add(os.path.normpath(os.path.join(workdir, dest)))
    provided = {}
    problems = []
    for s in stages:
        have = list(provided.get(s["parent"]["name"], [])) if s["parent"] else []
        workdir = "/"
        for op, args in s["instrs"]:
            if op == "WORKDIR":
                workdir = os.path.join(workdir, args)
            elif op in ("COPY", "ADD"):
                flags, srcs, dest = _copy_parts(args)
                src_stage = flags.get("from")
                for src in srcs:
                    if src_stage is None:
                        if not os.path.exists(os.path.join(context_dir, src)):
                            problems.append("stage %s: %s %s: %s is not in the build context" % (s["name"], op, args, src))
                    elif (
                        src_stage in by_name
                        and any(_under(src, r) for r in context_roots)
                        and not any(_under(src, p) for p in provided.get(src_stage, []))
                    ):
                        problems.append("stage %s: %s %s: stage %s never got %s" % (s["name"], op, args, src_stage, src))
                have.append(os.path.normpath(os.path.join(workdir, dest)))
            elif op == "RUN":
                for found in re.findall(r"(?<![\w$])(/[A-Za-z0-9_.\-/]+)", args):
                    token = os.path.normpath(found)
                    if any(_under(token, r) for r in context_roots) and not any(_under(token, p) for p in have):
                        problems.append("stage %s: RUN uses %s, which this stage never copied in (it has: %s)" % (s["name"], token, ", ".join(sorted(have))))
        provided[s["name"]] = have
    return problems


# ------------------------------------------------------------------------------------------ fixtures


def _run(cmd, cwd):
    # Run away from the checkout: its ansible.cfg (read from the working directory) would make
    # ansible-galaxy see the linked collection as installed already.
    env = dict(os.environ, PATH=VENV_BIN + os.pathsep + os.environ.get("PATH", ""), ANSIBLE_GALAXY_SERVER_LIST="")
    for var in ("ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_CONFIG"):
        env.pop(var, None)
    proc = subprocess.run(cmd, env=env, cwd=str(cwd), capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, "%s failed (rc %d):\n%s\n%s" % (" ".join(cmd), proc.returncode, proc.stdout[-4000:], proc.stderr[-4000:])
    return proc


def _create(tmp_path, definition_text):
    src = tmp_path / "src"
    src.mkdir()
    (src / "execution-environment.yml").write_text(definition_text)
    _run([os.path.join(VENV_BIN, "ansible-galaxy"), "collection", "build", REPO, "--output-path", str(src)], cwd=src)
    assert (src / TARBALL).is_file()
    context = tmp_path / "context"
    _run([os.path.join(VENV_BIN, "ansible-builder"), "create", "-f", str(src / "execution-environment.yml"), "-c", str(context),
          "--output-filename", "Containerfile"], cwd=src)
    return src, context, (context / "Containerfile").read_text()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    with open(os.path.join(REPO, "execution-environment.yml")) as f:
        return _create(tmp_path_factory.mktemp("ee"), f.read())


# ------------------------------------------------------------------------------------------- tests


def test_the_checker_catches_the_old_definition(tmp_path):
    _src, context, text = _create(tmp_path, BROKEN_DEFINITION)
    problems = check_stage_paths(text, str(context))
    assert any("stage final" in p and "/build/collections/gpufabric-roce-0.1.0.tar.gz" in p for p in problems), problems


def test_every_stage_has_the_paths_it_uses(built):
    _src, context, text = built
    assert check_stage_paths(text, str(context)) == []
    stages = [s["name"] for s in parse_containerfile(text)]
    assert stages == ["base", "galaxy", "builder", "final"]


def test_the_collection_is_installed_by_the_galaxy_stage(built):
    _src, context, text = built
    reqs = yaml.safe_load((context / "_build" / "requirements.yml").read_text())
    files = [c["name"] for c in reqs["collections"] if c.get("type") == "file"]
    assert files == ["/build/collections/" + TARBALL]
    # /build in the galaxy stage is the context's _build directory.
    assert (context / "_build" / "collections" / TARBALL).is_file()
    galaxy = next(s for s in parse_containerfile(text) if s["name"] == "galaxy")
    assert ("COPY", "_build /build") in galaxy["instrs"] and ("WORKDIR", "/build") in galaxy["instrs"]
    assert any(op == "RUN" and "collection install" in a and "-r requirements.yml" in a for op, a in galaxy["instrs"])
    assert "collection install /build" not in text.split("# Final build stage")[1]
    assert not any(c["name"].startswith("community.general") for c in reqs["collections"])


def test_builder_introspection_reads_the_collection_requirements(built, tmp_path):
    """What the builder stage computes from the installed collection, with ansible-builder's own script."""
    _src, context, _text = built
    dest = tmp_path / "collections"
    _run([os.path.join(VENV_BIN, "ansible-galaxy"), "collection", "install", "--no-deps", "--force", "-p", str(dest), str(_src / TARBALL)], cwd=tmp_path)
    pip_out, bindep_out = tmp_path / "requirements.txt", tmp_path / "bindep.txt"
    _run([sys.executable, str(context / "_build" / "scripts" / "introspect.py"), "introspect", str(dest),
          "--write-pip=%s" % pip_out, "--write-bindep=%s" % bindep_out], cwd=tmp_path)
    pip_lines = [line for line in pip_out.read_text().splitlines() if line.strip()]
    assert pip_lines == ["kubernetes>=24.2.0  # from collection gpufabric.roce"], pip_lines
    assert not any("==" in line for line in pip_lines), "exact pins would clash with other collections in the EE"
    bindep = bindep_out.read_text()
    assert "openssh-clients [platform:rpm]" in bindep
    # Node packages travel in the file under the "node" profile; the default profile the builder installs leaves them out.
    listed = subprocess.run([os.path.join(VENV_BIN, "bindep"), "-f", str(bindep_out), "-l", "newline"], capture_output=True, text=True, check=False)
    assert listed.returncode in (0, 1), listed.stderr
    assert "perftest" not in listed.stdout and "pyroute2" not in listed.stdout
    node = subprocess.run([os.path.join(VENV_BIN, "bindep"), "-f", str(bindep_out), "-l", "newline", "node"], capture_output=True, text=True, check=False)
    assert "perftest" in node.stdout and "rdma-core" in node.stdout


def _helm_step(text):
    final = text.split("# Final build stage")[1]
    runs = [line[4:] for line in final.splitlines() if line.startswith("RUN ") and "get.helm.sh" in line]
    assert len(runs) == 1, runs
    args = {m.group(1): m.group(2).strip('"') for m in re.finditer(r"^ARG (HELM_\w+)=(.*)$", final, re.MULTILINE)}
    return runs[0], args


def _fake_release(root, version, arch, publish_sha=None):
    payload = b"#!/bin/sh\necho " + version.encode() + b"+gfake\n"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("linux-%s/helm" % arch)
        info.size, info.mode = len(payload), 0o755
        tar.addfile(info, io.BytesIO(payload))
    name = "helm-%s-linux-%s.tar.gz" % (version, arch)
    (root / name).write_bytes(buf.getvalue())
    sha = publish_sha or hashlib.sha256(buf.getvalue()).hexdigest()
    (root / (name + ".sha256sum")).write_text("%s  %s\n" % (sha, name))
    return hashlib.sha256(buf.getvalue()).hexdigest()


def _run_helm_step(step, args, tmp_path, pinned=""):
    out = tmp_path / "bin" / "helm"
    out.parent.mkdir(exist_ok=True)
    cmd = step.replace("https://get.helm.sh/", (tmp_path / "mirror").as_uri() + "/").replace("/usr/local/bin/helm", str(out))
    env = dict(os.environ, PYCMD=sys.executable, HELM_VERSION=args["HELM_VERSION"], HELM_ARCH=args["HELM_ARCH"], HELM_SHA256=pinned)
    return subprocess.run(["/bin/sh", "-c", cmd], env=env, capture_output=True, text=True, timeout=120, check=False), out


def test_helm_step_installs_a_checked_pinned_release(built, tmp_path):
    step, args = _helm_step(built[2])
    assert re.match(r"^v3\.\d+\.\d+$", args["HELM_VERSION"]), args
    (tmp_path / "mirror").mkdir()
    sha = _fake_release(tmp_path / "mirror", args["HELM_VERSION"], args["HELM_ARCH"])
    proc, out = _run_helm_step(step, args, tmp_path, pinned=sha)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == args["HELM_VERSION"] + "+gfake"
    assert os.access(out, os.X_OK)


def test_helm_step_stops_the_build_on_a_sha256_mismatch(built, tmp_path):
    step, args = _helm_step(built[2])
    (tmp_path / "mirror").mkdir()
    _fake_release(tmp_path / "mirror", args["HELM_VERSION"], args["HELM_ARCH"], publish_sha="0" * 64)
    proc, out = _run_helm_step(step, args, tmp_path)
    assert proc.returncode != 0 and "has sha256" in proc.stderr, (proc.stdout, proc.stderr)
    assert not out.exists()
    # A wrong pin stops it too, even when the published checksum matches.
    _fake_release(tmp_path / "mirror", args["HELM_VERSION"], args["HELM_ARCH"])
    proc, out = _run_helm_step(step, args, tmp_path, pinned="f" * 64)
    assert proc.returncode != 0 and "pinned ffff" in proc.stderr
