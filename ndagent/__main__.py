"""``python -m ndagent VERB ...``: the same as ``ndagent VERB ...``."""

import sys

from ndagent.cli import main

sys.exit(main())
