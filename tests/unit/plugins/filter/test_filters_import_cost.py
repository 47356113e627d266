# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Loading the collection's filters must not import pyroute2.

Every forked worker that templates a task with one of these filters loads the plugin afresh, and pyroute2's
package imports all of its ~340 modules: at 300 nodes x 8 rails that was about a fifth of the per-node cost of the
host phase's "This node's rails" task (benchmarks/README.md). Checked in a fresh interpreter, since other unit
tests import the modules' logic, and pyroute2 with it."""

import os
import subprocess
import sys

FILTERS = sorted(f[:-3] for f in os.listdir(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins", "filter"))
                 if f.endswith(".py") and not f.startswith("_"))


def test_no_filter_imports_pyroute2():
    code = ("import sys\n"
            "for name in %r:\n"
            "    __import__('ansible_collections.gpufabric.roce.plugins.filter.' + name)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pyroute2')[:5])\n" % FILTERS)
    # The unit tests' sys.path (tests/unit/conftest.py puts the collections root on it).
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout  # noqa: S603
    assert len(FILTERS) >= 8, FILTERS
    assert out.strip() == "[]", "loading the filters imported %s" % out
