"""``python -m watcher`` runs the ``watcher`` command."""

from __future__ import annotations

import sys

from watcher._console import main

sys.exit(main())
