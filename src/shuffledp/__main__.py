"""``python -m shuffledp``: the same as the ``shuffledp`` command."""

from .cli import main

raise SystemExit(main())
