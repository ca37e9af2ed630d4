"""How rounds combine: a registry of composers, one module each.

A composer takes ``parts = [(views, count), ...]`` — the views of one round of each entry
(``shuffledp.views``) and how many adaptive rounds of it — and answers

* ``accepts(parts) -> reason | None`` (None: it can compose these parts),
* ``epsilon(parts, delta) -> Outcome`` and ``delta(parts, epsilon) -> Outcome``.

The order below is the order the accountant tries them. Adding a composer is one module
plus one line here.
"""

from ._registry import Composer, all_composers, get, ids, register
from . import none, rdp, kov15, pld  # noqa: F401  (registration side effects)

__all__ = ["Composer", "all_composers", "get", "ids", "register"]
