# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the root filesystems made with mmdebstrap share (lab/rebootlab.py's node image, .ci/controller_matrix.py's
controllers): the Debian archive this machine's apt already uses, so no mirror is written down in the repository, and
the cache key of what was built."""

import glob
import hashlib
import os


def apt_sources(suite, apt_dir="/etc/apt"):
    """The archive URIs this machine's apt lists for ``suite``, in the order apt reads them: deb822 stanzas (bookworm's
    default) first, then one-line ``deb URI SUITE ...`` entries."""
    entries = []
    for path in sorted(glob.glob(os.path.join(apt_dir, "sources.list.d", "*.sources"))):
        with open(path) as f:
            for stanza in f.read().split("\n\n"):
                fields = dict(line.split(":", 1) for line in stanza.splitlines() if ":" in line and not line.startswith("#"))
                uris = fields.get("URIs", "").split()
                if uris and suite in fields.get("Suites", "").split() and "deb" in fields.get("Types", "").split():
                    entries.append(uris[0].strip())
    for path in [os.path.join(apt_dir, "sources.list")] + sorted(glob.glob(os.path.join(apt_dir, "sources.list.d", "*.list"))):
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    words = [w for w in line.split() if not w.startswith("[")]
                    if len(words) >= 3 and words[0] == "deb" and words[2] == suite:
                        entries.append(words[1])
    return entries


def digest(parts):
    """A short cache key of ``parts`` (strings or bytes)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
        h.update(b"\0")
    return h.hexdigest()[:12]
