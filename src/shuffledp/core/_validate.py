"""Argument checks for the public surface.

Every check raises ``ValueError`` whose message names the parameter, its allowed range and
the value received. Private kernels never re-check.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["real", "integer", "probability", "order", "orders"]


def _fail(name: str, rng: str, value) -> ValueError:
    return ValueError(f"{name} must be {rng}; got {value!r}")


def real(name: str, value, *, lo: float | None = None, hi: float | None = None,
         lo_open: bool = False, hi_open: bool = False, finite: bool = True) -> float:
    """A real number in a range; returns it as float."""
    left = "(" if (lo_open or lo is None) else "["
    right = ")" if (hi_open or hi is None) else "]"
    rng = f"a real number in {left}{'-inf' if lo is None else _fmt(lo)}, " \
          f"{'inf' if hi is None else _fmt(hi)}{right}"
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise _fail(name, rng, value)
    x = float(value)
    if math.isnan(x) or (finite and math.isinf(x)):
        raise _fail(name, rng, value)
    if lo is not None and (x < lo or (lo_open and x == lo)):
        raise _fail(name, rng, value)
    if hi is not None and (x > hi or (hi_open and x == hi)):
        raise _fail(name, rng, value)
    return x


def integer(name: str, value, *, lo: int | None = None, hi: int | None = None) -> int:
    """A whole number in [lo, hi]; floats with an integral value (1e6) are accepted."""
    rng = (f"an integer in {'(-inf' if lo is None else f'[{lo}'}, "
           f"{'inf)' if hi is None else f'{hi}]'}")
    if isinstance(value, bool):
        raise _fail(name, rng, value)
    if isinstance(value, (numbers.Integral, np.integer)):
        v = int(value)
    elif isinstance(value, (numbers.Real, np.floating)) and math.isfinite(float(value)) \
            and float(value).is_integer():
        v = int(value)
    else:
        raise _fail(name, rng, value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise _fail(name, rng, value)
    return v


def probability(name: str, value, *, open_lo: bool = True, open_hi: bool = True) -> float:
    """A probability in (0, 1) (or with closed ends as asked)."""
    return real(name, value, lo=0.0, hi=1.0, lo_open=open_lo, hi_open=open_hi)


def order(name: str, value) -> float:
    """A Rényi order λ > 1."""
    return real(name, value, lo=1.0, lo_open=True)


def orders(name: str, values) -> np.ndarray:
    """A non-empty sequence of Rényi orders, each > 1."""
    if isinstance(values, (numbers.Real, np.floating, np.integer)) and not isinstance(values, bool):
        values = [values]
    try:
        seq = list(values)
    except TypeError:
        raise _fail(name, "a non-empty sequence of Rényi orders > 1", values) from None
    if not seq:
        raise _fail(name, "a non-empty sequence of Rényi orders > 1", values)
    return np.array([order(f"{name}[{i}]", v) for i, v in enumerate(seq)], dtype=float)


def _fmt(x: float) -> str:
    return f"{x:g}"
