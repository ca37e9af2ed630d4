"""``shuffledp.opacus``: the public path of :mod:`shuffledp.interop.opacus` (the same
module object, so ``from shuffledp.opacus import ...`` and attribute patches reach
the implementation)."""

import sys

from .interop import opacus as _impl

sys.modules[__name__] = _impl
