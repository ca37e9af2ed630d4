r"""The one generic clone pair, as a ``Pair`` (``pairs/base.py``).

Every clone-reduction bound in the product is a post-processing statement about one pair
of distributions on N²:

* n users; each of the other n − 1 is a 0-clone w.p. p/2, a 1-clone w.p. p/2 and
  uninformative otherwise, so C ~ Bin(n − 1, p) clones and A | C ~ Bin(C, ½) 0-clones;
* the victim is type 0 w.p. a, type 1 w.p. b, uninformative w.p. g = 1 − a − b under X0
  (a and b swap under X1);
* P = (A + 1[victim 0], C − A + 1[victim 1]); Q is the same under X1.

Instances (``instances.py``): FMT20 (Feldman, McMillan, Talwar, "Hiding among the
clones", arXiv:2012.12803, Thm 3.1 / Lemma 3.3 — valid for every adaptive ε0-LDP
randomizer), FMT23 ("Stronger privacy amplification by shuffling", arXiv:2208.04591v3,
Thm 3.1 with the errata: restricted class S(ε0)), the randomizer-specific pair with
p = p_R, and the k-RR marginal pair with g > 0.

**g > 0 is not a reduction** (brute force): the value of the g > 0 pair is a *lower*
bound on one k-RR instance, never an upper bound. The kernels compute it exactly, but
only functions named ``*_lower`` accept it, and the upper-bound kernels (``pair_delta``,
``pair_epsilon``, ``pair_rdp``, and so the ``Pair`` methods below) refuse a pair with g > 0.

Structure used: swapping the coordinates maps P to Q (one direction suffices);
conditioned on the slice S = C + 1 the pair is a mixture α·Bin(c, ½)(x − 1) +
β·Bin(c, ½)(x) against the swapped mixture, with a monotone likelihood ratio; every
divergence of a slice is non-increasing in c, so the tails of C are charged rigorously
with the value at the window edge (upper tail) or at c = 0 (lower tail). The kernels live
by concern: ``slices.py`` (the slice law), ``hockey.py`` (δ(ε), ε(δ)), ``renyi.py``
with ``rdp_points.py`` and ``rdp_series.py`` (RDP), ``atoms.py`` (PLD atoms).

The ``ClonePair`` constructor validates; the kernels assume valid input (scipy.stats'
"public validates, private computes").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core import _validate as v
from ..law import Bias
from ...core._memo import memo
from .atoms import pair_pld_atoms, pair_pld_tail_floor
from .hockey import pair_delta, pair_epsilon
from .renyi import pair_rdp

#: Largest RDP order offered: the windows grow like √(λ ε0) standard deviations; past
#: 1e5 orders the slices are coarse and the curve only gets looser (still valid).
MAX_ORDER = 100_000


@dataclass(frozen=True)
class ClonePair:
    """The generic clone pair (its definition is in docs/trimmed-clone.md, "Setting").

    Parameters
    ----------
    n : int ≥ 1 — users (the victim and n − 1 others).
    p : float in (0, 1] — clone probability of each other user.
    a, b : floats with a ≥ b > 0 and a + b ≤ 1 — victim type probabilities under X0.
        g = 1 − a − b is the uninformative probability (values within 1e-12 of 0 are 0).
    log_odds : float, optional — log(a/b) when it is known exactly (ε0 for the clone pairs
        of an ε0-LDP randomizer). At large ε0, a = e^ε0/(1 + e^ε0) rounds to 1 and only b
        carries the information; everything here uses b (and β = b/(a + b)) directly and
        never 1 − a, and the largest loss is taken from this exact value.
    """

    n: int
    p: float
    a: float
    b: float
    log_odds: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "n", v.integer("n", self.n, lo=1))
        object.__setattr__(self, "p", v.real("p", self.p, lo=0.0, hi=1.0, lo_open=True))
        a = v.real("a", self.a, lo=0.0, hi=1.0, lo_open=True)
        b = v.real("b", self.b, lo=0.0, hi=1.0, lo_open=True)
        if b > a:
            raise ValueError(f"b must be a real number in (0, a={a!r}]; got {b!r}")
        if a + b > 1.0 + 1e-12:
            raise ValueError(f"a + b must be <= 1 (g = 1 - a - b >= 0); got a + b = {a + b!r}")
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        if self.log_odds is not None:
            lo = v.real("log_odds", self.log_odds, lo=0.0)
            # It must agree with the floats a, b (up to their rounding) or the pair is not
            # the one described: a wrong log-odds would move the δ(ε) = 0 cut-off.
            direct = math.log(a) - math.log(b)
            if abs(lo - direct) > 1e-12 * max(1.0, lo):
                raise ValueError(f"log_odds must equal log(a/b) = {direct!r}; got {lo!r}")
            object.__setattr__(self, "log_odds", lo)

    @property
    def g(self) -> float:
        """Uninformative victim probability; 0 when a + b is 1 up to rounding."""
        g = 1.0 - self.a - self.b
        return 0.0 if g <= 1e-12 else g

    @property
    def alpha(self) -> float:
        """a / (a + b): the victim's bias within an informative slice (g = 0 pairs)."""
        return self.a / (self.a + self.b)

    @property
    def beta(self) -> float:
        """b / (a + b) = 1 − α, computed from b (1 − α rounds to 0 for ε0 ≳ 36.7)."""
        return self.b / (self.a + self.b)

    @property
    def log_alpha(self) -> float:
        return math.log(self.a) - math.log(self.a + self.b)

    @property
    def log_beta(self) -> float:
        return math.log(self.b) - math.log(self.a + self.b)

    @property
    def gamma(self) -> float:
        """α − β = (a − b)/(a + b) = tanh(log(a/b)/2): from the exact log-odds when known
        (at small ε0, a and b both round to ½ and a − b to 0)."""
        if self.log_odds is not None:
            return Bias(self.log_odds).gamma
        return (self.a - self.b) / (self.a + self.b)

    @property
    def log_ratio(self) -> float:
        """log(a/b): the largest privacy loss of the pair (δ(ε) = 0 for ε ≥ it)."""
        if self.log_odds is not None:
            return self.log_odds
        return math.log(self.a) - math.log(self.b)

    # ----- the Pair protocol (pairs/base.py): upper bounds, natural log (nats) ----------
    #: Clone pairs are symmetric (swapping the victim's two types maps P to Q): a PLD
    #: composes one direction.
    pld_symmetric = True

    def delta(self, eps: float) -> float:
        """δ(ε) = H_{e^ε}(P ‖ Q), an upper bound (g = 0 pairs only; ``pair_delta``)."""
        return pair_delta(self, float(eps))

    def epsilon(self, delta: float) -> float:
        """Smallest certified ε with δ(ε) ≤ delta (g = 0 pairs only; ``pair_epsilon``)."""
        return pair_epsilon(self, float(delta))

    def rdp(self, orders) -> np.ndarray:
        """D_λ(P ‖ Q) at integer orders ≥ 2, rounded up (g = 0 only; ``pair_rdp``)."""
        return pair_rdp(self, orders)

    def eps_hi(self) -> float:
        """log(a/b): δ(ε) = 0 from there on."""
        return self.log_ratio

    def max_order(self) -> int:
        return MAX_ORDER

    def pld_atoms(self):
        """(log P, log Q, tail mass) of a pair dominating this one (``pair_pld_atoms``).
        Memoised (the last two pairs; arrays read-only)."""
        return _pld_atoms(self)

    def pld_tail_floor(self) -> float:
        """A lower bound on the tail mass ``pld_atoms`` returns, without its atoms
        (``pair_pld_tail_floor``; g = 0 pairs only)."""
        return pair_pld_tail_floor(self)


@memo(maxsize=2)
def _pld_atoms(pair):
    """``pair_pld_atoms(pair)``, kept for the next questions on the same pair: a sweep asks
    one protocol at several round counts and δ, and its PLD route rebuilt these atoms
    (0.4 s at n = 1e6) every time. Two entries of at most ``PLD_MAX_ATOMS`` atoms (~25 MB
    each) keep memory flat in the number of protocols. Read-only: the arrays are shared."""
    logp, logq, tail = pair_pld_atoms(pair)
    logp.setflags(write=False)
    logq.setflags(write=False)
    return logp, logq, tail
