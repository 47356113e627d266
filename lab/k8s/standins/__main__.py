# Copyright: (c) 2026, gpufabric.roce maintainers
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""python -m standins: run the stand-ins until SIGTERM."""

import sys

from standins.run import main

sys.exit(main())
