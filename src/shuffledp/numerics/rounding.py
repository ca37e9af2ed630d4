"""Floating-point slack shared by every certified value: ``REL_SLACK`` and ``round_up``
(upper bounds), ``U`` (the unit roundoff 2^-53 every rounding allowance is written in)."""

from __future__ import annotations

import numpy as np

__all__ = ["REL_SLACK", "U", "round_up"]

#: Relative slack added to every upper bound before it leaves a bound module. It covers
#: accumulated floating-point error (sums of up to ~1e7 terms, log/exp round trips) with
#: a wide margin; it is far below every tolerance users care about.
REL_SLACK = 1e-12

#: Unit roundoff of IEEE double precision.
U = 2.0 ** -53


def round_up(x):
    """Add the floating-point slack of an upper bound (works on scalars and arrays)."""
    return np.asarray(x, dtype=float) * (1.0 + REL_SLACK) if np.ndim(x) else float(x) * (1.0 + REL_SLACK)
