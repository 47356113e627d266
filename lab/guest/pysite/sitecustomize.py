# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lab guests only: keep the bytecode that Ansible's module payloads compile.

node-init.sh puts this directory on the PYTHONPATH of the guest's SSH sessions (sshd's SetEnv), so every module run
of the lab imports it at start-up. An AnsiballZ payload is a new zip file for every module run, and Python's zipimport
compiles every module it imports from a zip from its source, every time, and caches nothing: Ansible's
module_utils.basic and the collection's module_utils, compiled afresh by each module run. Natively that is a tenth of
a second; in a TCG guest it is seconds, and the lab runs hundreds of modules.

Here the code zipimport compiles is kept in guest memory (/run), keyed by its source's hash and the interpreter's
bytecode magic, and given the path of the payload that asked for it, so a traceback names this run's file. A changed
source compiles afresh. Nothing else changes: the same source, compiled by the same interpreter, run the same way.
"""

import _imp
import importlib.machinery
import importlib.util
import marshal
import os
import sys
import zipimport

# Built into the interpreter; hashlib would load OpenSSL's library at every module run for one digest.
try:
    from _sha2 import sha256  # Python 3.12 and later
except ImportError:
    from _sha256 import sha256

_CACHE = "/run/lab-pycache"
_compile = zipimport._compile_source


def _compile_source(pathname, source):
    key = sha256(importlib.util.MAGIC_NUMBER + source).hexdigest()
    path = os.path.join(_CACHE, key)
    try:
        with open(path, "rb") as f:
            code = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError):
        code = None
    if code is not None:
        _imp._fix_co_filename(code, pathname)
        return code
    code = _compile(pathname, source)
    try:
        os.makedirs(_CACHE, mode=0o700, exist_ok=True)
        tmp = "%s.%d" % (path, os.getpid())
        with open(tmp, "wb") as f:
            marshal.dump(code, f)
        os.replace(tmp, path)
    except OSError:
        pass
    return code


zipimport._compile_source = _compile_source


def _chain():
    """Run the interpreter's own sitecustomize (Debian's, under /usr/lib/python3.X), which this one shadows."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", [p for p in sys.path if os.path.abspath(p or ".") != here])
    if spec is not None and spec.loader is not None:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


_chain()
