"""``python -m shuffledp``: the same as the ``shuffledp`` command."""

from .apps.cli import main

raise SystemExit(main())
