"""Floating-point slack shared by every certified value: ``REL_SLACK`` and ``round_up``
(upper bounds), ``U`` (the unit roundoff 2^-53 every rounding allowance is written in),
``product_error`` (the exact rounding error of a product), and ``pairwise_combine`` /
``pairwise_leaves`` (numpy's order of additions in a sum, for kernels that sum in blocks
and must keep ``np.sum``'s float)."""

from __future__ import annotations

import numpy as np

__all__ = ["REL_SLACK", "U", "round_up", "product_error", "NUMPY_PAIRWISE_LEAF",
           "pairwise_combine", "pairwise_leaves"]

#: Relative slack added to every upper bound before it leaves a bound module. It covers
#: accumulated floating-point error (sums of up to ~1e7 terms, log/exp round trips) with
#: a wide margin; it is far below every tolerance users care about.
REL_SLACK = 1e-12

#: Unit roundoff of IEEE double precision.
U = 2.0 ** -53


def round_up(x):
    """Add the floating-point slack of an upper bound (works on scalars and arrays)."""
    return np.asarray(x, dtype=float) * (1.0 + REL_SLACK) if np.ndim(x) else float(x) * (1.0 + REL_SLACK)


#: Veltkamp's splitting constant 2^27 + 1 (``product_error``).
_SPLIT = 134217729.0


def product_error(x, f: float):
    """x·f − fl(x·f) exactly, elementwise: Dekker's TwoProduct (T. J. Dekker, "A
    floating-point technique for extending the available precision", Numer. Math. 18,
    1971, §5), each factor split into two 26-bit halves by Veltkamp's constant, so the
    partial products are exact and the error term is summed exactly.

    The error of a product of two doubles is itself a double (Dekker, Thm 5.1) unless it
    underflows, so the result equals the rounded rational ``Fraction(x)·Fraction(f) −
    Fraction(fl(x·f))`` bit for bit. Returns None when that is not guaranteed for every
    entry: a non-finite product, a factor above 2^900 (the splitting could overflow), or a
    product of non-zero factors below 2^-900 in magnitude (the low partial product, at
    least 2^-104 of it, could underflow; so could the product itself)."""
    x = np.asarray(x, dtype=float)
    f = float(f)
    prod = x * f
    with np.errstate(all="ignore"):
        ok = (bool(np.all(np.isfinite(prod))) and abs(f) < 2.0 ** 900
              and bool(np.all(np.abs(x) < 2.0 ** 900))
              and bool(np.all((x == 0.0) | (f == 0.0) | (np.abs(prod) > 2.0 ** -900))))
    if not ok:
        return None
    c = _SPLIT * x
    xh = c - (c - x)
    xl = x - xh
    c = _SPLIT * f
    fh = c - (c - f)
    fl = f - fh
    return ((xh * fh - prod) + xh * fl + xl * fh) + xl * fl


#: numpy sums a contiguous float64 array pairwise (``pairwise_sum`` in its umath loops): a
#: length above this is split into halves at ⌊n/2⌋ rounded down to a multiple of 8, and at
#: most this many values are summed by its unrolled loop (eight running sums).
NUMPY_PAIRWISE_LEAF = 128


def pairwise_combine(leaf, s: int, e: int, block: int = NUMPY_PAIRWISE_LEAF):
    """numpy's pairwise tree over the values s..e − 1, cut at blocks of at most ``block``
    values: ``leaf(s', e')`` gives a block's sum (a float, or an array of sums side by side)
    and the halves' results are added as numpy adds them. With ``leaf`` = ``np.sum`` of
    the block and ``block`` ≥ ``NUMPY_PAIRWISE_LEAF`` it is ``np.sum`` of the whole, bit for
    bit (numpy recurses the same way below the cut). The leaves are visited in order.

    A module-level function, not a closure calling itself: such a closure is a reference
    cycle, and through ``leaf`` it kept a PLD pair's atom arrays (~35 MB a question) alive
    until the cyclic garbage collector ran (a 300-point sweep reached 0.5 GB)."""
    m = e - s
    if m <= block:
        return leaf(s, e)
    h = m // 2
    h -= h % 8
    return pairwise_combine(leaf, s, s + h, block) + pairwise_combine(leaf, s + h, e, block)


def pairwise_leaves(n: int, block: int = NUMPY_PAIRWISE_LEAF) -> list:
    """The blocks [s, e) at which ``pairwise_combine`` cuts the tree over n values, in
    order."""
    out: list = []
    pairwise_combine(lambda s, e: out.append((s, e)) or 0.0, 0, n, block)
    return out
