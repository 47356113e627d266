"""Validate rendered Kubernetes custom resources against the openAPIV3Schema of their CRDs.

Used by the unit tests (test_k8s_crd_schema.py) and by molecule/k8s_render/verify.yml:

    python tests/unit/plugins/module_utils/k8s_crd_schema.py [--chart-version 26.7.1] <file-or-dir>...

against the CRDs of that chart version's line (CRD_LINES; default the default chart's, 26.7).

The CRD directory is ``$GPUFABRIC_CRDS_DIR``; when it is unset (or empty), ``<repo>/../shared/crds``
if that exists; otherwise ``<repo>/.cache/crds``, filled on first use by
``tests/crds/fetch_upstream_crds.py`` with the pinned upstream files (sha256-checked). A missing
directory, or a rendered kind without a CRD, is an error, never a skip. The schemas are made strict: objects that declare
``properties`` (and do not preserve unknown fields) reject unknown keys, as the API server's
strict field validation would instead of silently pruning them.
"""

import copy
import importlib.util
import os
import sys

import jsonschema
import yaml

REPO = os.path.realpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", ".."))
ENV_VAR = "GPUFABRIC_CRDS_DIR"
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"


class CrdError(Exception):
    pass


SHARED_DIR = os.path.normpath(os.path.join(REPO, "..", "shared", "crds"))
FETCH_SCRIPT = os.path.join(REPO, "tests", "crds", "fetch_upstream_crds.py")
_fallback = {"dir": None, "error": None}


def _fetcher():
    spec = importlib.util.spec_from_file_location("fetch_upstream_crds", FETCH_SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def crds_dir():
    """$GPUFABRIC_CRDS_DIR, else ../shared/crds when present, else the downloaded pinned CRDs."""
    env = os.environ.get(ENV_VAR)
    if env:
        return env
    if os.path.isdir(SHARED_DIR):
        return SHARED_DIR
    if _fallback["dir"] is None:
        fetcher = _fetcher()
        _fallback["dir"] = fetcher.DEFAULT_DEST
        if not fetcher.is_complete(fetcher.DEFAULT_DEST):
            try:
                fetcher.fetch(fetcher.DEFAULT_DEST)
            except fetcher.FetchError as exc:
                _fallback["error"] = str(exc)
    return _fallback["dir"]


def missing_dir_message(path):
    msg = (
        "CRD directory %s is missing or holds no CRDs. The schema tests need the sriov-network-operator and network-operator CRDs "
        "(openAPIV3Schema), and Flux and Argo CD's for render mode's GitOps roots (gitops/). "
        "Set %s to the directory holding them, e.g. %s=/work/shared/crds (default: <repo>/../shared/crds, "
        "then <repo>/.cache/crds downloaded by tests/crds/fetch_upstream_crds.py)." % (path, ENV_VAR, ENV_VAR)
    )
    if _fallback["error"] and path == _fallback["dir"]:
        msg += " The download failed: %s" % _fallback["error"]
    return msg


def _strict(node):
    """Convert an OpenAPI v3 (structural) schema node to a strict JSON schema."""
    if isinstance(node, list):
        return [_strict(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k in ("properties", "patternProperties"):
            out[k] = {name: _strict(sub) for name, sub in v.items()}
        elif k in ("items", "additionalProperties", "not") or k in ("allOf", "anyOf", "oneOf"):
            out[k] = _strict(v)
        elif k.startswith("x-kubernetes-") or k in ("description", "example", "externalDocs"):
            continue
        else:
            out[k] = copy.deepcopy(v)
    if out.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    out.pop("nullable", None)
    if "properties" in out and "additionalProperties" not in out and not node.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    return out


# The CRDs of each network-operator line, as directories of the CRD directory. The line's directories are the only ones
# read: two lines define the same kinds (NicClusterPolicy gained status.conditions in 26.7), and which one a walk of the
# whole directory met first used to depend on the file system's order. The default is the default chart's line
# (roles/network_operator/defaults/main.yml: 26.7.1; 26.7.0-rc.2 stands in for it, as no snapshot holds the GA tag).
CRD_LINES = {
    "26.4": ("sriov-network-operator-v1.6.0", "network-operator-v26.4.1", "nv-ipam-network-operator-v26.4.1",
             "nic-configuration-operator-network-operator-v26.4.1", "gitops"),
    "26.7": ("network-operator-v26.7.0-rc.2", "gitops"),
}
DEFAULT_LINE = "26.7"


def crd_line(chart_version):
    """The CRD line of a chart version: 26.7 for 26.7.x (and later), else 26.4 (the oldest line with CRDs here)."""
    parts = str(chart_version).lstrip("v").split(".")
    try:
        return "26.7" if (int(parts[0]), int(parts[1])) >= (26, 7) else "26.4"
    except (ValueError, IndexError):
        raise CrdError("%r is not a chart version (e.g. 26.7.1)" % (chart_version,)) from None


def _roots(path, line):
    """The directories to read: the line's under a CRD directory, or ``path`` itself when it is one operator's directory."""
    known = {d for dirs in CRD_LINES.values() for d in dirs}
    if not any(os.path.isdir(os.path.join(path, d)) for d in known):
        return [path]
    missing = [d for d in CRD_LINES[line] if not os.path.isdir(os.path.join(path, d))]
    if missing:
        raise CrdError("%s lacks %s, the CRDs of network-operator %s. %s" % (path, ", ".join(missing), line, missing_dir_message(path)))
    return [os.path.join(path, d) for d in CRD_LINES[line]]


# libyaml's loader where PyYAML has it: the CRDs are large, and the pure-Python loader was most of the schema tests' time.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Each directory and line read once per process: the schemas are only read, and every test of a run sees the same files.
_LOADED = {}


def load_crds(path=None, line=DEFAULT_LINE):
    """Return {(apiVersion, kind): {"schema", "scope", "file"}} for every served CRD version of network-operator ``line``
    (a key of CRD_LINES) under path, or under path itself when it holds one operator's CRDs. The entries are shared
    between calls: read them, never change them."""
    path = path or crds_dir()
    if not os.path.isdir(path):
        raise CrdError(missing_dir_message(path))
    if line not in CRD_LINES:
        raise CrdError("unknown network-operator line %r (known: %s)" % (line, ", ".join(sorted(CRD_LINES))))
    key = (os.path.realpath(path), line)
    if key not in _LOADED:
        _LOADED[key] = _read_crds(path, line)
    return dict(_LOADED[key])


def _read_crds(path, line):
    found = {}
    for root, dirs, files in (w for r in _roots(path, line) for w in os.walk(r)):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith((".yaml", ".yml")):
                continue
            full = os.path.join(root, name)
            with open(full) as fh:
                for doc in yaml.load_all(fh, Loader=_LOADER):  # noqa: S506 - a safe loader
                    if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                        continue
                    spec = doc["spec"]
                    for ver in spec.get("versions", []):
                        if not ver.get("served", True):
                            continue
                        schema = (ver.get("schema") or {}).get("openAPIV3Schema")
                        if not schema:
                            continue
                        key = ("%s/%s" % (spec["group"], ver["name"]), spec["names"]["kind"])
                        found.setdefault(key, {"schema": _strict(schema), "scope": spec.get("scope", "Namespaced"), "file": full})
    if not found:
        raise CrdError("no CustomResourceDefinition with an openAPIV3Schema under %s (%s)" % (path, missing_dir_message(path)))
    return found


def validate_object(obj, crds):
    """Return a list of problems (empty when valid). Raises CrdError when the kind has no CRD schema."""
    api, kind = obj.get("apiVersion"), obj.get("kind")
    entry = crds.get((api, kind))
    if entry is None:
        raise CrdError(
            "no CRD schema for %s %s in the CRD directory (%s); every rendered custom resource must be schema-checked: "
            "add its CRD there (%s) or stop rendering it" % (api, kind, crds_dir(), ENV_VAR)
        )
    label = "%s %s" % (kind, (obj.get("metadata") or {}).get("name"))
    problems = []
    validator = jsonschema.Draft7Validator(entry["schema"])
    for err in sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path)):
        problems.append("%s: %s: %s" % (label, "/".join(str(p) for p in err.absolute_path) or "<root>", err.message))
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if not isinstance(name, str) or not jsonschema.Draft7Validator({"type": "string", "pattern": DNS_SUBDOMAIN, "maxLength": 253}).is_valid(name):
        problems.append("%s: metadata.name %r is not a DNS-1123 subdomain" % (label, name))
    if entry["scope"] == "Namespaced" and not meta.get("namespace"):
        problems.append("%s: namespaced kind without metadata.namespace" % label)
    if entry["scope"] == "Cluster" and meta.get("namespace"):
        problems.append("%s: cluster-scoped kind must not set metadata.namespace" % label)
    return problems


# Render mode's GitOps files: a kustomization is a build file, not a cluster object (the real kubectl kustomize
# checks it, tests/k8s/test_gitops_render.py), and a Namespace and the NCCL ConfigMap are core (the server's dry run
# checks them). They are counted and named, never silently passed as schema-checked. Flux and Argo CD objects are
# checked against their CRDs (the gitops/ directory of the CRD directory).
NO_SCHEMA_HERE = ("kustomize.config.k8s.io/",)
CORE_KINDS = (("v1", "Namespace"), ("v1", "ConfigMap"))


def iter_documents(paths):
    for p in paths:
        files = [p] if os.path.isfile(p) else sorted(os.path.join(r, f) for r, _d, fs in os.walk(p) for f in fs if f.endswith((".yaml", ".yml")))
        for f in files:
            with open(f) as fh:
                for doc in yaml.safe_load_all(fh):
                    if doc is not None:
                        yield f, doc


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    line = DEFAULT_LINE
    if argv[:1] == ["--chart-version"] and len(argv) > 1:
        line, argv = crd_line(argv[1]), argv[2:]
    if not argv:
        print("usage: k8s_crd_schema.py [--chart-version <network-operator chart version>] <file-or-dir>...", file=sys.stderr)
        return 2
    try:
        crds = load_crds(line=line)
    except CrdError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    checked, other, problems, unchecked = 0, 0, [], []
    for f, doc in iter_documents(argv):
        if not (isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc):
            other += 1
            continue
        if str(doc["apiVersion"]).startswith(NO_SCHEMA_HERE) or (doc["apiVersion"], doc["kind"]) in CORE_KINDS:
            unchecked.append("%s %s" % (doc["kind"], (doc.get("metadata") or {}).get("name", "")))
            continue
        try:
            problems += ["%s: %s" % (f, p) for p in validate_object(doc, crds)]
        except CrdError as exc:
            problems.append("%s: %s" % (f, exc))
        checked += 1
    for p in problems:
        print(p, file=sys.stderr)
    print("schema-checked %d custom resources (%d non-resource documents), %d problems (network-operator %s CRDs)" % (
        checked, other, len(problems), line))
    if unchecked:
        print("not schema-checked (no schema available here): %s" % ", ".join(sorted(unchecked)))
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
