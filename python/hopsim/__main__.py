"""``python -m hopsim`` is the ``hopsim`` command."""

import sys

from .cli import main

sys.exit(main())
