"""``python -m benchcast.cli``."""

import sys

from benchcast.cli import main

sys.exit(main())
