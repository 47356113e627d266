"""The CRD location when neither GPUFABRIC_CRDS_DIR nor ../shared/crds is there: the pinned
upstream files, downloaded and sha256-checked by tests/crds/fetch_upstream_crds.py.

The download is exercised with file:// URLs over a tree laid out like the upstream repositories
(no network here); the real https URLs have not been fetched from this machine.
"""

import os
import shutil
import types

import k8s_crd_schema
import pytest


@pytest.fixture
def fetcher():
    return k8s_crd_schema._fetcher()


@pytest.fixture
def upstream(tmp_path, fetcher):
    """An upstream-shaped tree built from the CRD directory the other tests use; returns {directory: file:// base}."""
    src = k8s_crd_schema.crds_dir()
    bases = {}
    for directory, (_base, files) in fetcher.PINNED.items():
        root = tmp_path / "upstream" / directory
        for name, remote, _sha in files:
            dst = root / remote
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(os.path.join(src, directory, name), dst)
        bases[directory] = root.as_uri() + "/"
    return bases


def test_pins_match_the_reference_crds(fetcher):
    assert fetcher.is_complete(k8s_crd_schema.crds_dir()), "the sha256 pins of tests/crds/fetch_upstream_crds.py differ from %s" % k8s_crd_schema.crds_dir()
    # Every CRD file the schema loader reads is pinned.
    pinned = {(d, n) for d, n, _u, _s in fetcher.manifest()}
    for directory in fetcher.PINNED:
        on_disk = {(directory, n) for n in os.listdir(os.path.join(k8s_crd_schema.crds_dir(), directory)) if n.endswith((".yaml", ".yml"))}
        assert on_disk <= pinned, on_disk - pinned


def test_fetch_writes_the_pinned_files(tmp_path, fetcher, upstream):
    dest = tmp_path / "dest"
    fetcher.fetch(str(dest), bases=upstream)
    assert fetcher.is_complete(str(dest))
    crds = k8s_crd_schema.load_crds(str(dest))
    assert ("sriovnetwork.openshift.io/v1", "SriovNetworkNodePolicy") in crds
    assert ("mellanox.com/v1alpha1", "NicClusterPolicy") in crds


def test_fetch_refuses_a_changed_file_and_writes_nothing(tmp_path, fetcher, upstream):
    directory = "network-operator-" + fetcher.NETOP_TAG
    changed = tmp_path / "upstream" / directory / "crds" / "mellanox.com_nicclusterpolicies.yaml"
    changed.write_text(changed.read_text() + "# moved tag\n")
    dest = tmp_path / "dest"
    with pytest.raises(fetcher.FetchError) as info:
        fetcher.fetch(str(dest), bases=upstream)
    assert "mellanox.com_nicclusterpolicies.yaml" in str(info.value) and "sha256" in str(info.value)
    assert [p for p in dest.rglob("*") if p.is_file()] == []


def test_fallback_order_and_failed_download_message(monkeypatch, tmp_path):
    monkeypatch.delenv("GPUFABRIC_CRDS_DIR", raising=False)
    monkeypatch.setattr(k8s_crd_schema, "SHARED_DIR", str(tmp_path / "no-shared"))
    monkeypatch.setattr(k8s_crd_schema, "_fallback", {"dir": None, "error": None})
    cache = tmp_path / "cache"

    class FetchError(Exception):
        pass

    def fetch(dest):
        os.makedirs(dest, exist_ok=True)
        raise FetchError("download of https://example.invalid/x.yaml failed: no network")

    fake = types.SimpleNamespace(DEFAULT_DEST=str(cache), FetchError=FetchError, is_complete=lambda d: False, fetch=fetch)
    monkeypatch.setattr(k8s_crd_schema, "_fetcher", lambda: fake)
    assert k8s_crd_schema.crds_dir() == str(cache)
    with pytest.raises(k8s_crd_schema.CrdError) as info:
        k8s_crd_schema.load_crds()
    msg = str(info.value)
    assert "no network" in msg and "fetch_upstream_crds.py" in msg and "GPUFABRIC_CRDS_DIR" in msg

    # An empty variable counts as unset; an existing ../shared/crds wins over the download.
    monkeypatch.setenv("GPUFABRIC_CRDS_DIR", "")
    shared = tmp_path / "shared"
    shared.mkdir()
    monkeypatch.setattr(k8s_crd_schema, "SHARED_DIR", str(shared))
    assert k8s_crd_schema.crds_dir() == str(shared)
