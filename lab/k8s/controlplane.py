#!/usr/bin/env python
# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real Kubernetes control plane on 127.0.0.1, with stand-ins for what would write status.

    controlplane.py start [--hardware hw.yml] [--node N ...] [--label k=v ...] [--standin-delay S]
    controlplane.py status [--json]
    controlplane.py env
    controlplane.py stop

`start` runs etcd, kube-apiserver, kube-controller-manager and kube-scheduler from
$KUBEBUILDER_ASSETS (default: ../shared/envtest's tarball, unpacked once into .build/envtest),
registers the Nodes, starts the stand-ins (lab/k8s/standins) and returns once the nodes are Ready
and schedulable. `stop` ends exactly the processes `start` recorded and removes the state directory.
Everything listens on 127.0.0.1 only. See lab/k8s/README.md.
"""

import argparse
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from standins import _kube, hardware, kubelet  # noqa: E402

ENVTEST_TARBALL = "envtest-v1.36.2-linux-amd64.tar.xz"
BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "helm")
# Stopped in this order: whatever talks to the API server first, etcd last.
PROCESSES = ("standins", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd")
SERVICE_CIDR = "10.96.0.0/16"


class ControlPlaneError(Exception):
    """Something the user can fix; the message says what and how."""


# ---- locations --------------------------------------------------------------------------------
def shared_dir():
    return Path(os.environ.get("GPUFABRIC_SHARED_DIR") or REPO.parent / "shared")


def default_state_dir():
    return Path(os.environ.get("GPUFABRIC_K8S_STATE_DIR") or REPO / ".build" / "k8s-run")


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _unpack_envtest(tarball, sums, dest):
    """Unpack the tarball into dest/envtest once, checked against SHA256SUMS; returns the directory.

    A lock file serialises concurrent starts (two state directories, one unpack).
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest.parent / (dest.name + ".lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _unpack_envtest_locked(tarball, sums, dest)


def _plain_members(tar, tarball):
    """The members when every one is a plain file or directory inside the archive: what filter="data" would pass here.
    Extraction filters came with Python 3.11.4; Debian bookworm's python3, which make deps builds the venv on, is 3.11.2.
    The envtest archive holds only files and directories (their digests are checked after extraction, below)."""
    members = tar.getmembers()
    for m in members:
        if m.name.startswith("/") or ".." in m.name.split("/") or not (m.isfile() or m.isdir()):
            raise SystemExit("controlplane: %s holds %r (%s), which is not a plain file or directory inside the archive; "
                             "not unpacking it. Fix: use the envtest archive of ../shared/envtest as it was delivered"
                             % (tarball, m.name, "link" if m.issym() or m.islnk() else "absolute or outside" if m.isfile() or m.isdir() else "special file"))
    return members


def _unpack_envtest_locked(tarball, sums, dest):
    stamp = dest / "envtest" / ".verified"
    marker = "%s %d %d" % (tarball, tarball.stat().st_size, int(tarball.stat().st_mtime))
    if stamp.exists() and stamp.read_text(encoding="utf-8") == marker:
        return dest / "envtest"
    print("controlplane: unpacking %s into %s (once)" % (tarball, dest), flush=True)
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(tmp, filter="data")
        else:
            tar.extractall(tmp, members=_plain_members(tar, tarball))
    expected = {}
    for line in sums.read_text(encoding="utf-8").splitlines():
        if line.strip():
            digest, name = line.split()
            expected[name.lstrip("*")] = digest
    for name, digest in expected.items():
        got = _sha256(tmp / "envtest" / name)
        if got != digest:
            shutil.rmtree(tmp, ignore_errors=True)
            raise ControlPlaneError("%s: %s has sha256 %s, SHA256SUMS says %s; the tarball is damaged, fetch it again" % (tarball, name, got, digest))
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    (dest / "envtest" / ".verified").write_text(marker, encoding="utf-8")
    return dest / "envtest"


def resolve_assets():
    """The directory of binaries: $KUBEBUILDER_ASSETS, else the shared tarball unpacked under .build."""
    unpacked = REPO / ".build" / "envtest" / "envtest"
    # KUBEBUILDER_ASSETS naming the default unpack directory (as molecule/k8s exports it) means "the shared tarball".
    if os.environ.get("KUBEBUILDER_ASSETS") and Path(os.environ["KUBEBUILDER_ASSETS"]).resolve() != unpacked:
        assets = Path(os.environ["KUBEBUILDER_ASSETS"])
        source = "KUBEBUILDER_ASSETS=%s" % assets
        if not assets.is_dir():
            raise ControlPlaneError("%s is not a directory: point it at the directory holding %s, or unset it to use %s"
                                    % (source, ", ".join(BINARIES), shared_dir() / "envtest" / ENVTEST_TARBALL))
    else:
        envtest = shared_dir() / "envtest"
        tarball, sums = envtest / ENVTEST_TARBALL, envtest / "SHA256SUMS"
        if not tarball.is_file() or not sums.is_file():
            raise ControlPlaneError(
                "no Kubernetes binaries: KUBEBUILDER_ASSETS is not set and %s (with SHA256SUMS next to it) does not exist. "
                "Set KUBEBUILDER_ASSETS to a directory holding %s, or GPUFABRIC_SHARED_DIR to the directory that has envtest/%s"
                % (tarball, ", ".join(BINARIES), ENVTEST_TARBALL))
        assets = _unpack_envtest(tarball, sums, unpacked.parent)
        source = "%s unpacked in %s" % (tarball, assets)
    missing = [b for b in BINARIES if not os.access(assets / b, os.X_OK)]
    if missing:
        raise ControlPlaneError(
            "%s lacks %s. It needs all of %s (setup-envtest ships only etcd, kube-apiserver and kubectl: add kube-controller-manager "
            "and kube-scheduler of the same version and helm v3), or unset KUBEBUILDER_ASSETS to use %s"
            % (source, ", ".join(missing), ", ".join(BINARIES), shared_dir() / "envtest" / ENVTEST_TARBALL))
    return assets


# ---- processes --------------------------------------------------------------------------------
def _proc_start_time(pid):
    """Field 22 of /proc/<pid>/stat; with the pid it identifies a process even after pid reuse."""
    try:
        stat = Path("/proc/%d/stat" % pid).read_text(encoding="utf-8")
    except OSError:
        return None, None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0], fields[19]  # state, starttime


def alive(record):
    state, start = _proc_start_time(record["pid"])
    return state is not None and state != "Z" and start == record["starttime"]


def _spawn(state_dir, name, argv, env=None, cwd=None):
    log = open(state_dir / ("%s.log" % name), "ab")  # noqa: SIM115 - handed to the child, closed below
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,  # noqa: S603
                                start_new_session=True, env=env, cwd=cwd)
    finally:
        log.close()
    record = {"pid": proc.pid, "starttime": _proc_start_time(proc.pid)[1], "argv0": argv[0]}
    (state_dir / ("%s.pid" % name)).write_text(json.dumps(record), encoding="utf-8")
    return record


STATE_FILES = {"bin", "etcd-data", "certs", "sa.key", "sa.pub", "tokens.csv", "kubeconfig", "hardware.json", "cluster.json",
               "standins.status.json", "standins.status.tmp", "standins-device-plugin.json"}


def _remove_state(state_dir, keep_logs=False):
    """Remove what start wrote, refusing a directory that holds anything else (a mistyped --state-dir)."""
    if not state_dir.exists():
        return
    foreign = [f.name for f in state_dir.iterdir() if f.name not in STATE_FILES and f.suffix not in (".log", ".pid")]
    if foreign:
        raise ControlPlaneError("%s holds files the control plane did not write (%s); not removing it. Pass a dedicated --state-dir"
                                % (state_dir, ", ".join(sorted(foreign)[:5])))
    if not keep_logs:
        shutil.rmtree(state_dir)
        return
    for f in state_dir.iterdir():
        if f.is_dir():
            shutil.rmtree(f)
        elif f.suffix != ".log":
            f.unlink()


def _records(state_dir):
    out = {}
    for name in PROCESSES:
        f = state_dir / ("%s.pid" % name)
        if f.exists():
            out[name] = json.loads(f.read_text(encoding="utf-8"))
    return out


def _log_tail(state_dir, name, lines=25):
    try:
        return "\n".join((state_dir / ("%s.log" % name)).read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(what, check, timeout, state_dir, watch=()):
    """Poll check() until true; fail early, with the log, when a watched process died."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for name in watch:
            rec = _records(state_dir).get(name)
            if rec and not alive(rec):
                raise ControlPlaneError("%s exited while waiting for %s; last lines of %s:\n%s"
                                        % (name, what, state_dir / (name + ".log"), _log_tail(state_dir, name)))
        try:
            if check():
                return
        except (OSError, _kube.KubeError, ValueError):
            pass
        time.sleep(0.5)
    raise ControlPlaneError("timed out after %ds waiting for %s (logs in %s)" % (timeout, what, state_dir))


# ---- start ------------------------------------------------------------------------------------
def _write_credentials(state_dir, port):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (state_dir / "sa.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                                         serialization.NoEncryption()))
    (state_dir / "sa.pub").write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    token = secrets.token_hex(24)
    for name, text in (
        ("tokens.csv", "%s,admin,admin-uid,system:masters\n" % token),
        ("kubeconfig", json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "gpufabric",
            "clusters": [{"name": "gpufabric", "cluster": {
                "server": "https://127.0.0.1:%d" % port, "certificate-authority": str(state_dir / "certs" / "apiserver.crt")}}],
            "users": [{"name": "admin", "user": {"token": token}}],
            "contexts": [{"name": "gpufabric", "context": {"cluster": "gpufabric", "user": "admin", "namespace": "default"}}],
        }, indent=2)),
    ):
        path = state_dir / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
    for name in ("sa.key", "tokens.csv", "kubeconfig"):
        os.chmod(state_dir / name, 0o600)
    return token


def _readyz(port, ca, token):
    ctx = ssl.create_default_context(cafile=str(ca))
    req = urllib.request.Request("https://127.0.0.1:%d/readyz" % port, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, context=ctx, timeout=5) as resp:  # noqa: S310 - https on 127.0.0.1 only
        return resp.status == 200


# _free_port() gives a port that is free when asked; another process (an outgoing connection's ephemeral port, the other
# half's control plane) may take it before etcd or kube-apiserver binds it. Then both start again on new ports.
PORT_ATTEMPTS = 3


def _log_sizes(state_dir, names):
    return {n: (state_dir / ("%s.log" % n)).stat().st_size if (state_dir / ("%s.log" % n)).exists() else 0 for n in names}


def port_taken(state_dir, offsets):
    """Whether a process of ``offsets`` (name -> its log's size when it was started) stopped because its port was taken."""
    for name, offset in offsets.items():
        try:
            with open(state_dir / ("%s.log" % name), "rb") as fh:
                fh.seek(offset)
                if b"address already in use" in fh.read():
                    return True
        except OSError:
            continue
    return False


def _start_etcd_and_apiserver(state_dir, assets):
    etcd_port, peer_port, api_port = _free_port(), _free_port(), _free_port()
    token = _write_credentials(state_dir, api_port)
    _spawn(state_dir, "etcd", [
        str(assets / "etcd"), "--name", "gpufabric", "--data-dir", str(state_dir / "etcd-data"),
        "--listen-client-urls", "http://127.0.0.1:%d" % etcd_port, "--advertise-client-urls", "http://127.0.0.1:%d" % etcd_port,
        "--listen-peer-urls", "http://127.0.0.1:%d" % peer_port, "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % peer_port,
        "--initial-cluster", "gpufabric=http://127.0.0.1:%d" % peer_port])
    _spawn(state_dir, "kube-apiserver", [
        str(assets / "kube-apiserver"), "--etcd-servers=http://127.0.0.1:%d" % etcd_port,
        "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port=%d" % api_port,
        "--cert-dir=%s" % (state_dir / "certs"), "--endpoint-reconciler-type=none",
        "--token-auth-file=%s" % (state_dir / "tokens.csv"), "--authorization-mode=RBAC",
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        "--service-account-key-file=%s" % (state_dir / "sa.pub"), "--service-account-signing-key-file=%s" % (state_dir / "sa.key"),
        "--service-cluster-ip-range=%s" % SERVICE_CIDR, "--allow-privileged=true"])
    return {"etcd": etcd_port, "etcd_peer": peer_port, "apiserver": api_port}, token


def _start_controllers(state_dir, assets):
    kubeconfig = str(state_dir / "kubeconfig")
    _spawn(state_dir, "kube-controller-manager", [
        str(assets / "kube-controller-manager"), "--kubeconfig=%s" % kubeconfig, "--bind-address=127.0.0.1", "--secure-port=0",
        "--leader-elect=false", "--service-account-private-key-file=%s" % (state_dir / "sa.key"),
        "--root-ca-file=%s" % (state_dir / "certs" / "apiserver.crt"), "--use-service-account-credentials=false"])
    _spawn(state_dir, "kube-scheduler", [
        str(assets / "kube-scheduler"), "--kubeconfig=%s" % kubeconfig, "--bind-address=127.0.0.1", "--secure-port=0", "--leader-elect=false"])


def _start_standins(state_dir, args):
    argv = [sys.executable, "-m", "standins", "--kubeconfig", str(state_dir / "kubeconfig"), "--hardware", str(state_dir / "hardware.json"),
            "--namespace", args.operator_namespace, "--resource-prefix", args.resource_prefix, "--state-dir", str(state_dir)]
    if args.standin_delay is not None:
        argv += ["--sync-delay", str(args.standin_delay)]
    if args.standin_apply_delay is not None:
        argv += ["--apply-delay", str(args.standin_apply_delay)]
    env = dict(os.environ, PYTHONPATH=str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""), PYTHONUNBUFFERED="1")
    env.pop("KUBECONFIG", None)
    _spawn(state_dir, "standins", argv, env=env, cwd=str(HERE))


def _nodes_schedulable(kube, names):
    nodes = {n["metadata"]["name"]: n for n in kube.items(_kube.path("", "v1", "nodes"))}
    for name in names:
        node = nodes.get(name)
        if node is None:
            return False
        ready = [c for c in (node.get("status") or {}).get("conditions") or [] if c["type"] == "Ready"]
        if not ready or ready[0]["status"] != "True" or (node.get("spec") or {}).get("taints"):
            return False
    return True


def start(args):
    state_dir = Path(args.state_dir)
    running = {n: r for n, r in _records(state_dir).items() if alive(r)}
    if running:
        raise ControlPlaneError("a control plane is already running from %s (%s); run: %s stop --state-dir %s"
                                % (state_dir, ", ".join(running), sys.argv[0], state_dir))
    nodes = hardware.load(args.hardware, args.node, dict(kv.split("=", 1) for kv in args.label))
    t0 = time.time()
    assets = resolve_assets()
    timings = {"assets": round(time.time() - t0, 1)}
    _remove_state(state_dir)
    state_dir.mkdir(parents=True)
    os.chmod(state_dir, 0o700)
    (state_dir / "hardware.json").write_text(json.dumps(nodes, indent=2), encoding="utf-8")
    # <state>/bin is a fixed place for helm and kubectl, whatever KUBEBUILDER_ASSETS was (molecule/k8s puts it on PATH).
    (state_dir / "bin").mkdir()
    for name in BINARIES:
        (state_dir / "bin" / name).symlink_to(assets / name)
    try:
        t1 = time.time()
        ca = state_dir / "certs" / "apiserver.crt"
        for attempt in range(1, PORT_ATTEMPTS + 1):
            offsets = _log_sizes(state_dir, ("etcd", "kube-apiserver"))
            ports, token = _start_etcd_and_apiserver(state_dir, assets)
            try:
                _wait("kube-apiserver /readyz", lambda port=ports["apiserver"], token=token: ca.exists() and _readyz(port, ca, token),
                      args.timeout, state_dir, watch=("etcd", "kube-apiserver"))
                break
            except ControlPlaneError:
                if attempt == PORT_ATTEMPTS or not port_taken(state_dir, offsets):
                    raise
                stop_processes(state_dir, quiet=True)
                shutil.rmtree(state_dir / "etcd-data", ignore_errors=True)  # it holds the peer URL of the first ports
                print("controlplane: another process took a port before etcd or kube-apiserver bound it; starting both again on "
                      "new ports (attempt %d of %d)" % (attempt + 1, PORT_ATTEMPTS), flush=True)
        timings["apiserver_ready"] = round(time.time() - t1, 1)
        print("controlplane: kube-apiserver ready on https://127.0.0.1:%d after %.1fs" % (ports["apiserver"], timings["apiserver_ready"]), flush=True)
        t2 = time.time()
        _start_controllers(state_dir, assets)
        kube = _kube.Kube(state_dir / "kubeconfig")
        # The serviceaccount controller creates default/default: kube-controller-manager is working.
        _wait("kube-controller-manager (ServiceAccount default/default)",
              lambda: kube.get_or_none(_kube.path("", "v1", "serviceaccounts", namespace="default", name="default")) is not None,
              args.timeout, state_dir, watch=("kube-apiserver", "kube-controller-manager", "kube-scheduler"))
        kubelet.register_nodes(kube, nodes)
        _start_standins(state_dir, args)
        _wait("nodes %s Ready and untainted" % ", ".join(sorted(nodes)), lambda: _nodes_schedulable(kube, nodes), args.timeout, state_dir,
              watch=PROCESSES)
        timings["nodes_ready"] = round(time.time() - t2, 1)
        kube.close()
    except BaseException:
        stop_processes(state_dir, quiet=True)
        raise
    timings["total"] = round(time.time() - t0, 1)
    info = {"server": "https://127.0.0.1:%d" % ports["apiserver"], "ports": ports, "assets": str(assets), "state_dir": str(state_dir),
            "kubeconfig": str(state_dir / "kubeconfig"), "nodes": sorted(nodes), "started": t0, "timings_seconds": timings,
            "operator_namespace": args.operator_namespace, "resource_prefix": args.resource_prefix}
    (state_dir / "cluster.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    print("controlplane: up in %.1fs (apiserver %.1fs, controllers+nodes %.1fs); nodes %s Ready"
          % (timings["total"], timings["apiserver_ready"], timings["nodes_ready"], ", ".join(sorted(nodes))), flush=True)
    print(env_lines(state_dir, assets), flush=True)
    return 0


# ---- stop / status / env ----------------------------------------------------------------------
def stop_processes(state_dir, quiet=False):
    """TERM, wait, KILL exactly the recorded processes; returns the names still alive (should be none)."""
    records = _records(state_dir)
    for name in PROCESSES:
        rec = records.get(name)
        if not rec or not alive(rec):
            continue
        os.kill(rec["pid"], signal.SIGTERM)
        deadline = time.time() + 15
        while alive(rec) and time.time() < deadline:
            time.sleep(0.1)
        if alive(rec):
            os.kill(rec["pid"], signal.SIGKILL)
            deadline = time.time() + 5
            while alive(rec) and time.time() < deadline:
                time.sleep(0.1)
        if not quiet:
            print("controlplane: stopped %s (pid %d)" % (name, rec["pid"]), flush=True)
    return [name for name, rec in records.items() if alive(rec)]


def stop(args):
    state_dir = Path(args.state_dir)
    left = stop_processes(state_dir)
    if left:
        raise ControlPlaneError("still running after SIGKILL: %s (pid files in %s)" % (", ".join(left), state_dir))
    _remove_state(state_dir, keep_logs=args.keep_logs)
    print("controlplane: stopped; nothing left running from %s" % state_dir, flush=True)
    return 0


def status(args):
    state_dir = Path(args.state_dir)
    records = _records(state_dir)
    info = json.loads((state_dir / "cluster.json").read_text(encoding="utf-8")) if (state_dir / "cluster.json").exists() else {}
    report = {"state_dir": str(state_dir), "processes": {n: {"pid": r["pid"], "alive": alive(r)} for n, r in records.items()},
              "server": info.get("server"), "nodes": {}}
    ok = bool(records) and all(p["alive"] for p in report["processes"].values())
    if ok and info:
        try:
            kube = _kube.Kube(state_dir / "kubeconfig", timeout=10)
            for node in kube.items(_kube.path("", "v1", "nodes")):
                ready = [c["status"] for c in node["status"].get("conditions", []) if c["type"] == "Ready"]
                report["nodes"][node["metadata"]["name"]] = {"ready": ready == ["True"], "taints": node["spec"].get("taints") or []}
            kube.close()
        except (OSError, _kube.KubeError) as err:
            report["error"] = str(err)
            ok = False
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for name, proc in report["processes"].items():
            print("%-24s pid %-8d %s" % (name, proc["pid"], "running" if proc["alive"] else "NOT RUNNING"))
        for name, node in report["nodes"].items():
            print("node %-19s %s%s" % (name, "Ready" if node["ready"] else "NotReady", " taints=%s" % node["taints"] if node["taints"] else ""))
        if not records:
            print("no control plane recorded in %s" % state_dir)
    return 0 if ok else 1


def env_lines(state_dir, assets):
    kubeconfig = state_dir / "kubeconfig"
    return "export KUBECONFIG=%s K8S_AUTH_KUBECONFIG=%s KUBEBUILDER_ASSETS=%s PATH=%s:$PATH" % (kubeconfig, kubeconfig, assets, assets)


def env(args):
    state_dir = Path(args.state_dir)
    info_file = state_dir / "cluster.json"
    if not info_file.exists():
        raise ControlPlaneError("no control plane in %s: run %s start first" % (state_dir, sys.argv[0]))
    print(env_lines(state_dir, Path(json.loads(info_file.read_text(encoding="utf-8"))["assets"])))
    return 0


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--state-dir", default=str(default_state_dir()), help="default $GPUFABRIC_K8S_STATE_DIR or <repo>/.build/k8s-run")
    sub = ap.add_subparsers(dest="command", required=True)
    st = sub.add_parser("start", help="start the control plane, register the nodes, start the stand-ins")
    st.add_argument("--hardware", help="fake hardware file, JSON or YAML (lab/k8s/README.md)")
    st.add_argument("--node", action="append", default=[], help="a node without PFs (repeatable)")
    st.add_argument("--label", action="append", default=[], help="key=value label for every node (repeatable)")
    st.add_argument("--standin-delay", type=float, default=None, help="seconds before a policy spec reaches a node state (default 5)")
    st.add_argument("--standin-apply-delay", type=float, default=None, help="seconds a node state stays InProgress (default 2)")
    st.add_argument("--operator-namespace", default="nvidia-network-operator", help="namespace the SR-IOV stand-in watches")
    st.add_argument("--resource-prefix", default="nvidia.com", help="device plugin resource prefix (chart: sriov-network-operator.operator.resourcePrefix)")
    st.add_argument("--timeout", type=int, default=120, help="seconds for each readiness wait (default 120)")
    sp = sub.add_parser("stop", help="stop every recorded process and remove the state directory")
    sp.add_argument("--keep-logs", action="store_true", help="keep the *.log files")
    ss = sub.add_parser("status", help="processes and nodes; exit 1 unless all is running")
    ss.add_argument("--json", action="store_true")
    sub.add_parser("env", help="print the export line for KUBECONFIG, KUBEBUILDER_ASSETS and PATH")
    args = ap.parse_args(argv)
    for kv in getattr(args, "label", []):
        if "=" not in kv:
            ap.error("--label %r: write key=value" % kv)
    if args.command == "start" and not args.hardware and not args.node:
        ap.error("start: give --hardware <file> and/or --node <name>")
    return args


def main(argv=None):
    args = parse_args(argv)
    try:
        return {"start": start, "stop": stop, "status": status, "env": env}[args.command](args)
    except (ControlPlaneError, hardware.HardwareError) as err:
        print("controlplane: error: %s" % err, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
