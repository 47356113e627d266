"""The ansible.cfg settings the collection ships for users (docs/ansible.cfg.recommended; the tarball leaves out the
checkout's ansible.cfg) are the ones the checkout's tests and benchmarks run with."""

import configparser
import fnmatch
import os

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _read(path):
    parser = configparser.ConfigParser(interpolation=None)
    with open(os.path.join(REPO, path)) as f:
        parser.read_file(f)
    return parser


def test_every_recommended_setting_is_the_checkouts_own():
    shipped, checkout = _read("docs/ansible.cfg.recommended"), _read("ansible.cfg")
    settings = [(s, k) for s in shipped.sections() for k in shipped[s]]
    assert len(settings) >= 6
    assert {(s, k): shipped[s][k] for s, k in settings} == {(s, k): checkout.get(s, k, fallback=None) for s, k in settings}


def test_the_tarball_carries_it_and_not_the_checkouts():
    with open(os.path.join(REPO, "galaxy.yml")) as f:
        ignored = yaml.safe_load(f)["build_ignore"]

    def left_out(path):
        return any(fnmatch.fnmatch(path, p) or path.startswith(p.rstrip("/") + "/") for p in ignored)
    assert left_out("ansible.cfg") and not left_out("docs/ansible.cfg.recommended")
