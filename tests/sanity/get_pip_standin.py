# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline stand-in for ansible-test's get-pip bootstrap script.

ansible-test sanity --venv bootstraps pip in each fresh venv with a get-pip script it
downloads from a host that air-gapped machines (and this project's CI) cannot reach. It
looks for a cached copy first, at ~/.ansible/test/cache/get_pip_<version>.py. This file is
installed there by tests/sanity/run.sh: it takes pip from the interpreter's own ensurepip
and then lets that pip install what ansible-test asked for, from the machine's configured
package index.
"""

import ensurepip
import os
import subprocess
import sys


def main():
    ensurepip.bootstrap(upgrade=True)
    # ensurepip points PIP_CONFIG_FILE at /dev/null, which would hide the machine's pip.conf
    # (its index and mirrors) from the install below.
    os.environ.pop("PIP_CONFIG_FILE", None)
    # get-pip.py's own switches; pip itself does not know them.
    args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
    sys.exit(subprocess.call([sys.executable, "-m", "pip", "install"] + args))


if __name__ == "__main__":
    main()
