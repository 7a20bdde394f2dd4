"""``python -m benchcast``: the command line (:mod:`benchcast.cli`)."""

import sys

from benchcast.cli import main

sys.exit(main())
