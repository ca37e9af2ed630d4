"""Every bound, one module each; importing this package fills the registry.

``shuffledp.bounds.get(id)`` returns a bound, ``all_bounds()`` lists them in the order the
accountant tries them.
"""

from .base import Bound, Outcome, all_bounds, get, ids, register
from . import trivial, girgis, clones, gaussian, trimmed_clone, sampled  # noqa: F401  (registration side effects)
from . import blanket  # noqa: F401,E402
from . import addremove  # noqa: F401,E402

__all__ = ["Bound", "Outcome", "all_bounds", "get", "ids", "register"]
