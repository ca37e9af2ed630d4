"""One registry of the library's memo caches; ``shuffledp.clear_caches()`` empties them all.

Pair constructions, kernels and point sets are memoised per process (the same protocol is
usually asked about many times: several δ, rounds, calibration steps). A cache is
registered where it is defined: ``@memo(maxsize=N)`` instead of
``@functools.lru_cache(maxsize=N)``, ``register(name, the_dict)`` for a hand-kept dict.
``caches()`` also finds every ``functools.lru_cache`` of a loaded ``shuffledp`` module,
so a cache written with the plain decorator is not missed, and the hand-kept dicts listed
in ``_BY_NAME`` of modules that do not register theirs yet.

Clearing changes no answer, only the time of the next call: benchmarks use it to time cold
questions, tests to force a recomputation.
"""

from __future__ import annotations

import functools
import sys

__all__ = ["memo", "register", "caches", "clear_caches"]

_NAMED: dict[str, object] = {}

#: Hand-kept dict caches of modules that do not register them yet: module -> names.
_BY_NAME: dict[str, tuple] = {}


def memo(maxsize: int | None = 128):
    """``functools.lru_cache(maxsize)``, registered under ``module.qualname``."""
    def deco(fn):
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        _NAMED[f"{fn.__module__}.{fn.__qualname__}"] = cached
        return cached
    return deco


def register(name: str, cache):
    """Register a cache (a dict, or anything with ``cache_clear()`` or ``clear()``) under
    ``name``; returns it."""
    if not (hasattr(cache, "cache_clear") or hasattr(cache, "clear")):
        raise TypeError(f"cache {name!r} has neither cache_clear() nor clear(): {cache!r}")
    _NAMED[name] = cache
    return cache


def _is_lru(obj) -> bool:
    return callable(obj) and hasattr(obj, "cache_clear") and hasattr(obj, "cache_info")


def caches() -> dict[str, object]:
    """Every memo cache of the loaded ``shuffledp`` modules: {name: cache}."""
    out = dict(_NAMED)
    for modname, mod in list(sys.modules.items()):
        if mod is None or not (modname == "shuffledp" or modname.startswith("shuffledp.")):
            continue
        for obj in list(vars(mod).values()):
            if _is_lru(obj) and getattr(obj, "__module__", None) == modname:
                out.setdefault(f"{modname}.{obj.__qualname__}", obj)
        for attr in _BY_NAME.get(modname, ()):
            obj = getattr(mod, attr, None)
            if obj is not None:
                out.setdefault(f"{modname}.{attr}", obj)
    return out


def clear_caches() -> None:
    """Empty every memo cache of the library.

    Answers are unchanged; the next questions recompute what they need (pair
    constructions, kernels, point sets). Benchmarks use it to time cold questions.

    Examples
    --------
    >>> import shuffledp as sd
    >>> sd.clear_caches()
    """
    for cache in caches().values():
        clear = getattr(cache, "cache_clear", None) or getattr(cache, "clear")
        clear()
