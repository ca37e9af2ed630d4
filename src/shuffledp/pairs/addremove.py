r"""The add/remove clone pair of a check-in round (docs/relations.md).

Setting: ``Shuffle(R, n, sampling=CheckIn(γ))`` under add/remove neighbours: D′ is D plus
the victim (input x); n is the size of D′, so n − 1 = N others are present in both. Each
user checks in independently with probability γ; the server sees the multiset of the
participants' reports (hence their number), not who took part.

Clone decomposition (Feldman, McMillan, Talwar, arXiv:2012.12803, Lemma 3.3, with one
victim distribution instead of two): for ε0-LDP R and every other user j,
R(u_j) ≥ e^−ε0·R(x) pointwise, so R(u_j) = e^−ε0·R(x) + (1 − e^−ε0)·W_j. Each other
user outputs nothing (1 − γ), a clone — a fresh draw of R(x) — (p = γe^−ε0), or a draw of
W_j (w = γ(1 − e^−ε0)). With (C, K) ~ Mult(N; p, w, 1 − γ) and B ~ Bern(γ) independent,

    P̃ = law of (C + B, K)   (victim present),      Q̃ = law of (C, K)   (absent)

is a dominating pair in both directions (the release is a post-processing of (C, K) or
(C + B, K): C fresh draws of R(x) plus the K W-draws, shuffled).

Reduction (proved in docs/relations.md). K has the same law Bin(N, w) under P̃ and Q̃, and
given K = k the count C is Bin(m, q) with m = N − k others left and
q = p/(p + 1 − γ) = γe^−ε0/(1 − γ + γe^−ε0); B is independent of (C, K). So

    H_{e^ε}(P̃‖Q̃) = Σ_k Bin(N, w)(k) · H_{e^ε}(A_m ‖ B_m),  A_m = Bin(m, q) ∗ Bern(γ),
                                                           B_m = Bin(m, q),

and the same for Q̃‖P̃. A_{m+1}, B_{m+1} are A_m, B_m each convolved with the same
Bern(q): a post-processing, so every divergence of (A_m, B_m) is non-increasing in m.
Hence K values may be grouped into blocks, each charged at its smallest m (the grouped
pair dominates the exact one for δ(ε) and for composition: the finer m is obtained from
the coarser by adding an independent Bin(m − m_j, q) on both sides).

A_m puts γq^m on m + 1, where B_m is 0: the pair (and the mechanism: all n users report
with probability γ^n, impossible without the victim) has infinite privacy loss with
positive probability, so its Rényi divergences D_λ(P̃‖Q̃) are infinite. δ(ε) and PLD
composition are finite.

Numerics: each (A_m, B_m) on the window of Bin(m, q) (12 sd + 12), the mass outside
charged in full (``binom_tail_mass``); K outside its window charged in full; losses are
evaluated at ε − ``_LOSS_SLACK`` (covering the absolute error of every computed loss) and
masses multiplied by 1 + ``_MASS_SLACK``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core import _validate as v
from ..core._memo import memo
from ..numerics import (binom_logpmf, binom_tail_mass, binom_window, falling_log_root,
                       hockey_stick, round_up)

__all__ = ["AddRemovePair", "addremove_pair", "ar_delta", "ar_delta_directions", "ar_epsilon",
           "ar_eps_hi", "ar_pld_atoms",
           "ar_atoms", "MAX_N"]

#: Users the pair is built for at most; beyond, the bound at MAX_N holds (post-processing:
#: the extra users' reports, made from data both datasets share, can be simulated).
MAX_N = 10**8
#: K windows up to this many values are evaluated value by value (the exact pair).
EXACT_K = 256
#: Atom budget: K is grouped into blocks so that the atoms stay under it.
ATOM_BUDGET = 2_000_000
_SDS, _EXTRA = 12.0, 12
#: Absolute error allowed on every computed privacy loss (log-pmfs ~1e-12 relative, logs
#: of size ≤ 1e3 add ≤ 1e-12): losses are compared with ε − this.
_LOSS_SLACK = 1e-10
#: Relative error allowed on every computed mass (weights, sums of up to 1e7 terms).
_MASS_SLACK = 1e-9


@dataclass(frozen=True)
class AddRemovePair:
    """N = n − 1 others, check-in rate γ < 1, clone probability e^−ε0·(1 − bad).

    ``bad``: the trimmed victim's left-out mass (0 for pure ε0-LDP; (n − 1)·δ0 for an
    (ε0, δ0)-LDP randomizer trimmed against the others, docs/relations.md "The Gaussian"):
    the victim, when it checks in, draws the common distribution V w.p. 1 − bad (a clone
    count of +1) and something else w.p. bad — an atom of infinite loss, mass γ·bad.
    """

    n_others: int
    rate: float
    eps0: float
    bad: float = 0.0

    @property
    def p(self) -> float:
        """A participating other is a clone: γe^−ε0(1 − bad)."""
        return self.rate * math.exp(-self.eps0) * (1.0 - self.bad)

    @property
    def w(self) -> float:
        """An other is a W-draw: γ(1 − e^−ε0(1 − bad)) = γ((1 − e^−ε0) + e^−ε0·bad), formed
        as a sum of non-negative terms (no cancellation)."""
        return self.rate * (-math.expm1(-self.eps0) + math.exp(-self.eps0) * self.bad)

    @property
    def not_w(self) -> float:
        """1 − w = 1 − γ + γe^−ε0 (a sum of non-negative terms)."""
        return (1.0 - self.rate) + self.p

    @property
    def q(self) -> float:
        """Clone probability of an other that is not a W-draw: p/(p + 1 − γ)."""
        return self.p / self.not_w

    @property
    def not_q(self) -> float:
        return (1.0 - self.rate) / self.not_w

    # ----- the Pair protocol (pairs/base.py): upper bounds, nats; no RDP (the count of
    # reports reveals the victim with positive probability: infinite loss) -------------
    #: Adding and removing the victim differ: a PLD composes both directions.
    pld_symmetric = False

    def delta(self, eps: float) -> float:
        """``ar_delta``: the larger of the two directions' δ(ε)."""
        return ar_delta(self, float(eps))

    def epsilon(self, delta: float) -> float:
        return ar_epsilon(self, float(delta))

    def eps_hi(self) -> float:
        return ar_eps_hi(self)

    def pure_epsilon(self):
        """None: infinite loss has positive probability (the count of reports)."""
        return None

    def pld_atoms(self):
        return ar_pld_atoms(self)


def addremove_pair(n: int, rate: float, eps0: float, bad: float = 0.0) -> AddRemovePair:
    """The pair of n users (the victim included), check-in rate γ ∈ (0, 1), ε0 ≥ 0, and
    the trimmed victim's left-out mass ``bad`` ∈ [0, 1) (0: pure ε0-LDP)."""
    n = v.integer("n", n, lo=1)
    rate = v.real("rate", rate, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    eps0 = v.real("eps0", eps0, lo=0.0)
    bad = v.real("bad", bad, lo=0.0, hi=1.0, hi_open=True)
    return AddRemovePair(int(min(n, MAX_N)) - 1, rate, eps0, bad)


def _one_m(m: int, hp: AddRemovePair):
    """(log A_m, log B_m, tail) over the window of Bin(m, q) and the point above it."""
    q, nq = hp.q, hp.not_q
    if m == 0 or q == 0.0:
        lo, hi = 0, 0 if q == 0.0 else m
    elif m <= 2 * EXACT_K:
        lo, hi = 0, m
    else:
        lo, hi = binom_window(m, q, _SDS, _EXTRA)
    tail = binom_tail_mass(m, q, lo, hi) if (lo > 0 or hi < m) and q > 0.0 else 0.0
    v = np.arange(lo - 1, hi + 2)               # b(v − 1) for v = lo … hi + 1
    if q == 0.0:
        lb = np.where(v == 0, 0.0, -np.inf)
    else:
        lb = binom_logpmf(v, m, q, nq)
    lb_v, lb_vm1 = lb[1:], lb[:-1]
    g = hp.rate
    with np.errstate(divide="ignore"):
        log_a = np.logaddexp(math.log1p(-g) + lb_v, math.log(g) + math.log1p(-hp.bad) + lb_vm1)
    return log_a, lb_v, tail


def _blocks(hp: AddRemovePair, budget: int):
    """[(m_j, log W_j)] and the K tail mass: K = N − m grouped into blocks, each charged at
    its smallest m (its largest k)."""
    N, w = hp.n_others, hp.w
    if N == 0 or w == 0.0:
        return [(N, 0.0)], 0.0
    if N <= EXACT_K:
        klo, khi = 0, N
    else:
        klo, khi = binom_window(N, w, _SDS, _EXTRA)
    ktail = binom_tail_mass(N, w, klo, khi) if (klo > 0 or khi < N) else 0.0
    k = np.arange(klo, khi + 1)
    lk = binom_logpmf(k, N, w, hp.not_w)
    m_mid = max(N - int(round(N * w)), 1)
    per = 2.0 * (_SDS * math.sqrt(m_mid * hp.q * hp.not_q) + _EXTRA) + 3.0
    nblocks = int(max(1, min(k.size, EXACT_K, budget // max(int(per), 1))))
    width = int(math.ceil(k.size / nblocks))
    out = []
    for s in range(0, k.size, width):
        e = min(s + width, k.size)
        lw = float(np.logaddexp.reduce(lk[s:e]))
        out.append((N - int(k[e - 1]), lw))
    return out, ktail


@memo(maxsize=4)
def ar_atoms(hp: AddRemovePair, budget: int = ATOM_BUDGET):
    """(log P̃, log Q̃, tail): a finite dominating pair (blocks of K, windows of C); the
    tail (mass left out, under P̃ and under Q̃ alike) is charged at infinite loss."""
    blocks, tail = _blocks(hp, budget)
    lps, lqs = [], []
    for m, lw in blocks:
        la, lb, t = _one_m(m, hp)
        lps.append(la + lw)
        lqs.append(lb + lw)
        tail += math.exp(lw) * t
    if hp.bad > 0.0:
        # the trimmed victim's other draws: never seen under Q̃ (charged at infinite loss)
        lps.append(np.array([math.log(hp.rate * hp.bad)]))
        lqs.append(np.array([-math.inf]))
    logp = np.concatenate(lps)
    logq = np.concatenate(lqs)
    keep = np.isfinite(logp) | np.isfinite(logq)
    return logp[keep], logq[keep], float(tail) * (1.0 + _MASS_SLACK) + 1e-300


def ar_delta(hp: AddRemovePair, eps: float, budget: int = ATOM_BUDGET) -> float:
    """max(H_{e^ε}(P̃‖Q̃), H_{e^ε}(Q̃‖P̃)): a certified upper bound on the round's δ(ε)
    under add/remove neighbours (both directions: adding and removing the victim)."""
    logp, logq, tail = ar_atoms(hp, budget)
    e = float(eps) - _LOSS_SLACK
    h = max(hockey_stick(logp, logq, e), hockey_stick(logq, logp, e))
    return float(min(1.0, round_up(h * (1.0 + _MASS_SLACK) + tail)))


def ar_delta_directions(hp: AddRemovePair, eps: float, budget: int = ATOM_BUDGET):
    """(remove: H(P̃‖Q̃), add: H(Q̃‖P̃)) with the same slack as ``ar_delta`` (tests)."""
    logp, logq, tail = ar_atoms(hp, budget)
    e = float(eps) - _LOSS_SLACK
    return tuple(float(round_up(h * (1.0 + _MASS_SLACK) + tail))
                 for h in (hockey_stick(logp, logq, e), hockey_stick(logq, logp, e)))


def ar_eps_hi(hp: AddRemovePair) -> float:
    """An ε above every finite privacy loss of the pair (both directions): δ(ε) there is
    the infinite-loss mass alone."""
    logp, logq, _ = ar_atoms(hp)
    fin = np.isfinite(logp) & np.isfinite(logq)
    top = float(np.max(np.abs(logp[fin] - logq[fin]))) if np.any(fin) else 0.0
    return top + 1e-6 + 2 * _LOSS_SLACK


def ar_epsilon(hp: AddRemovePair, delta: float) -> float:
    """Smallest certified ε with ``ar_delta(hp, ε) ≤ delta``; inf when the infinite-loss
    mass (the count of reports revealing the victim, plus the charged tails) exceeds δ."""
    hi = ar_eps_hi(hp)
    if ar_delta(hp, hi) > delta:
        return math.inf
    if ar_delta(hp, 0.0) <= delta:
        return 0.0
    return float(falling_log_root(lambda e: ar_delta(hp, e), delta, 0.0, hi, xtol=1e-12,
                                  rtol=1e-8))


def ar_pld_atoms(hp: AddRemovePair):
    """(log P̃, log Q̃, tail) for PLD composition (both directions are composed)."""
    return ar_atoms(hp)
