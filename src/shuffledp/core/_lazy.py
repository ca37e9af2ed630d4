"""Deferred imports: ``import shuffledp`` must not pay for scipy until a number is asked for.

``special`` and ``optimize`` stand in for ``scipy.special`` / ``scipy.optimize``: the real
module is imported on the first attribute access (~0.3 s on an idle machine, several
seconds on a loaded one), then every access is a plain attribute lookup.
"""

from __future__ import annotations

import importlib

__all__ = ["LazyModule", "special", "optimize"]


class LazyModule:
    __slots__ = ("_name", "_mod")

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_mod", None)

    def __getattr__(self, attr):
        mod = self._mod
        if mod is None:
            mod = importlib.import_module(self._name)
            object.__setattr__(self, "_mod", mod)
        return getattr(mod, attr)

    def __repr__(self):
        return f"<lazy module {self._name!r}>"


special = LazyModule("scipy.special")
optimize = LazyModule("scipy.optimize")
