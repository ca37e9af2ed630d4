"""``shuffledp.flower``: the public path of :mod:`shuffledp.interop.flower` (the same
module object, so ``from shuffledp.flower import ...`` and attribute patches reach
the implementation)."""

import sys

from .interop import flower as _impl

sys.modules[__name__] = _impl
