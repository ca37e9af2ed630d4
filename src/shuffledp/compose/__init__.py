"""How rounds combine: a registry of composers, one module each.

A composer takes ``parts = [(views, count), ...]`` — the views of one round of each entry
(``shuffledp.core.views``) and how many adaptive rounds of it — and answers

* ``accepts(parts) -> reason | None`` (None: it can compose these parts),
* ``epsilon(parts, delta) -> Outcome`` and ``delta(parts, epsilon) -> Outcome``.

Options arrive as keywords (a composer ignores those it does not use): ``beat`` (one
entry, from a bound's search: the value the answer must beat to matter; the rdp composer
skips orders that provably cannot), ``discretization`` (the ledger's PLD grid).

Each of them first merges repeated views (``merge_parts``): the same view listed as T1 and
T2 rounds is composed as T1 + T2 rounds (the contract tests check it for every composer).

The order below is the order the accountant tries them. Adding a composer is one module
plus one line here.
"""

from ._registry import Composer, all_composers, get, ids, merge_parts, register
from . import none, rdp, kov15, pld  # noqa: F401  (registration side effects)

__all__ = ["Composer", "all_composers", "get", "ids", "merge_parts", "register"]
