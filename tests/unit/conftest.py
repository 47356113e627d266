"""Make ``ansible_collections.gpufabric.roce`` importable for the unit tests.

Uses an existing ansible_collections tree above the checkout when there is one (installed collection,
ansible-test), otherwise links the checkout as .build/collections/ansible_collections/gpufabric/roce
(the same link the Makefile creates) and puts .build/collections on sys.path.
"""

import contextlib
import os
import sys

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _collections_root():
    parts = _REPO.split(os.sep)
    if len(parts) >= 3 and parts[-3] == "ansible_collections":
        return os.sep.join(parts[:-3])
    root = os.path.join(_REPO, ".build", "collections")
    link = os.path.join(root, "ansible_collections", "gpufabric", "roce")
    if not os.path.exists(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.symlink(_REPO, link)
    return root


_ROOT = _collections_root()
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
