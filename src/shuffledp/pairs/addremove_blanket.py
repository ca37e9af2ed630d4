r"""The privacy blanket under add/remove neighbours, with Poisson check-in (docs/relations.md,
"The blanket under add/remove").

Setting: ``Shuffle(R, n, sampling=CheckIn(γ))``, γ < 1, R a concrete randomizer; D′ is D plus
the victim (input x); the server sees the participants' shuffled reports (so their number).
Write ⊥ for "did not check in": every user's round is R_γ(u) = (1 − γ)·⊥ + γ·R(u), and the
victim's absence from D is the same release as a victim whose round is ⊥ with probability 1.

Blanket (Balle, Bell, Gascón, Nissim, CRYPTO 2019, arXiv:1903.02837): the floor
m(y) = min_u R_γ(u)(y) is common to every user's round — m(⊥) = 1 − γ and
m(y) = γ·min_u R(u)(y) on the reports. The GPARV identity (Su, Cheng, Wang, IEEE S&P 2026,
arXiv:2504.07414) needs only that the victim's two distributions live under the floor, not
that they are rows of R: with P0 = R_γ(x), P1 = ⊥ and G = A − e^ε B on one draw of the
floor (A = P0/m, B = P1/m, G = 0 on the non-floor remainder),

    H_{e^ε}(M(D′) ‖ M(D)) ≤ E[(G_1 + … + G_n)_+] / n,

and the swapped pair (P0 = ⊥, P1 = R_γ(x)) bounds the other direction. Here A = 1 and
B = 1/(1 − γ) on ⊥, A = R(x)(y)/min_u R(u)(y) and B = 0 on a report y. B vanishes on every
report: with probability γ^n-ish no ⊥ is drawn and the loss is infinite (the count of
reports reveals the victim), so the pair has no Rényi view.

The atoms are those of the replace-one blanket (``shuffledp.pairs.gparv``), read for the victim
input only; δ(ε) is ``pairs.blanket``'s certified maximum over victim inputs and directions.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from . import gparv
from ..numerics import falling_log_root, round_up
from ..core._parallel import pmap
from .blanket import PLD_TAIL, _gauss_mu, _hull_masses, _max_over_pairs

__all__ = ["AddRemoveBlanket", "addremove_blanket_pairs", "curve_pair", "MAX_N"]

#: Users the pair is evaluated for at most; the bound at fewer users holds for more (the
#: extra users' rounds, made from data both datasets share, can be simulated and shuffled
#: in: a post-processing). The certified i.i.d. sums stay accurate up to here.
MAX_N = 10**8
#: Absolute slack on ε in the search bracket above the largest finite loss.
_EPS_SLACK = 1e-9
#: Points per sign of ε on the certified curve behind the PLD view.
CURVE_POINTS = 100


def _rate_tag(rate: float) -> str:
    return f", check-in rate {rate:g}, add/remove"


@functools.lru_cache(maxsize=64)
def addremove_blanket_pairs(mech, rate: float) -> tuple:
    """(remove, add) ``gparv.BlanketPair`` per distinct victim input.

    Remove (D′ ‖ D): A = R(x)/floor on the reports, 1 on ⊥; B = 0 on the reports, 1/(1 − γ)
    on ⊥. Add (D ‖ D′): A and B exchanged. Weights: γ·floor on the reports, 1 − γ on ⊥,
    γ·(1 − blanket mass) on the zero atom (the replace-one pair's w0, formed without
    cancellation). Every victim input is the first input of some replace-one ordered pair
    (named mechanisms: one pair represents every input by symmetry)."""
    g = float(rate)
    out, seen = [], set()
    for p in gparv.pairs_of(mech):
        key = tuple(sorted(zip(np.round(p.a, 12), np.round(p.w, 15))))
        if key in seen:
            continue
        seen.add(key)
        a = np.append(p.a, 1.0)
        b = np.append(np.zeros_like(p.a), 1.0 / (1.0 - g))
        w = np.append(g * p.w, 1.0 - g)
        label = p.label.split(" vs ")[0].replace(" (all pairs are equivalent)", "")
        out.append(gparv.BlanketPair(label + ", removed" + _rate_tag(g), a, b, w, g * p.w0))
        out.append(gparv.BlanketPair(label + ", added" + _rate_tag(g), b, a, w.copy(),
                                     g * p.w0))
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def _delta_cached(mech, n, rate, eps, which=None):
    """(δ, label, details); ``which`` 0: removing only, 1: adding only (tests)."""
    pairs = addremove_blanket_pairs(mech, rate)
    if which is not None:
        pairs = pairs[which::2]
    # G = A − e^ε B at ε ≥ 0; B = 0 atoms make log(A/B) infinite, so the atoms are formed
    # here rather than through the replace-one helper (which would compare ε with it).
    atoms = [p.atoms(eps) for p in pairs]
    val, i, det = _max_over_pairs(list(pairs), n, eps, atoms=atoms)
    return min(1.0, float(round_up(val))), pairs[i].label, det


def _excess_atoms(pair, eps):
    """Atoms of t·B − A (t = e^ε ≤ 1): E[(Σ)_+]/n = H_t(P̂‖Q̂) − (1 − t), formed directly."""
    t = math.exp(eps)
    vals = np.append(t * pair.b - pair.a, 0.0)
    probs = np.append(pair.w, pair.w0)
    err = np.append(8.0 * 2.0 ** -53 * (pair.a + t * pair.b), 0.0)
    return vals, probs, err


@functools.lru_cache(maxsize=32)
def _curve_cached(mech, n, rate, points):
    """(grid of ε, stored values): R(t) = H_t − (1 − t) at ε < 0, H_t at ε ≥ 0, for the
    maximum over victim inputs of the REMOVE pairs (P̂, Q̂) — the add direction is the same
    pair read at −ε (H_t(Q̂‖P̂) = 1 − t + t·H_{1/t}(P̂‖Q̂)).

    Ends: ε_lo just below log(1 − γ), where R is exactly 0 (the loss log(ΣA/ΣB) =
    log((1 − γ)(1 + Σρ/n_⊥)) is never below log(1 − γ)); ε_hi above every finite loss,
    where H is the infinite-loss mass."""
    pairs = addremove_blanket_pairs(mech, rate)[::2]
    hp = AddRemoveBlanket(mech, n, rate)
    top = hp.eps_hi()
    bot = -math.log1p(-rate) + 1e-9
    mu = max(_gauss_mu(pairs, n), 1e-12)

    def side(end):
        c = min(mu / 3.0, end / 4.0)
        u = np.linspace(0.0, math.asinh(end / c), points + 1)
        pos = c * np.sinh(u)
        pos[-1] = end
        return pos

    grid = np.unique(np.concatenate([-side(bot)[::-1], side(top)]))

    def point(e):
        e = float(e)
        if e < 0.0:
            atoms = [_excess_atoms(p, e) for p in pairs]
        else:
            atoms = [p.atoms(e) for p in pairs]
        if all(np.max(a[0]) <= 0.0 for a in atoms):
            return 0.0
        return _max_over_pairs(list(pairs), n, e, atoms=atoms)[0]

    small = np.array(pmap(point, list(grid)), dtype=float)
    return grid, small


def curve_pair(mech, n, rate, points: int = CURVE_POINTS):
    """(losses, log P, log Q, P-mass at infinite loss) of a finite pair whose hockey-stick
    curve is the lower convex hull of the certified points (``pairs.blanket._hull_masses``),
    plus a P-only atom carrying the certified H at the top of the grid. The true curve is
    convex and below every certified point, so below the hull: the pair dominates every
    victim input's pair in both directions (and, by Blackwell, under composition)."""
    grid, small = _curve_cached(mech, n, rate, int(points))
    g, q = _hull_masses(grid, small)
    live = q > 0
    g, q = g[live], q[live]
    with np.errstate(divide="ignore"):
        lq = np.log(q)
    return g, lq + g, lq, float(small[-1])


@dataclass(frozen=True)
class AddRemoveBlanket:
    """The add/remove blanket pair of one check-in round, as a ``Pair`` (upper bounds, nats).

    ``n`` the users of D′ (the victim included), evaluated at min(n, ``MAX_N``)."""

    mech: object
    n: int
    rate: float

    @classmethod
    def of(cls, proto) -> "AddRemoveBlanket":
        return cls(proto.mechanism, int(min(int(proto.n), MAX_N)), float(proto.sampling.rate))

    @property
    def pairs(self) -> tuple:
        return addremove_blanket_pairs(self.mech, self.rate)

    def delta(self, eps: float) -> float:
        """max over victim inputs and directions of E[(ΣG_i)_+]/n, certified (ε ≥ 0)."""
        return _delta_cached(self.mech, self.n, self.rate, self._clamp(eps))[0]

    def _clamp(self, eps: float) -> float:
        # δ(ε) is constant (the infinite-loss mass) from eps_hi on, and e^ε·0 must stay 0.
        return min(max(float(eps), 0.0), self.eps_hi())

    def delta_directions(self, eps: float) -> tuple[float, float]:
        """(removing the victim: H(M(D′)‖M(D)), adding it: H(M(D)‖M(D′))), each certified."""
        e = self._clamp(eps)
        return tuple(_delta_cached(self.mech, self.n, self.rate, e, w)[0] for w in (0, 1))

    def delta_details(self, eps: float) -> dict:
        _, which, det = _delta_cached(self.mech, self.n, self.rate, self._clamp(eps))
        return {"victim_pair": which,
                "certified_relative_error": det.get("certified_relative_error", 0.0)}

    @functools.cached_property
    def _eps_hi(self) -> float:
        rho = max(float(np.max(p.a[:-1])) if p.a.size > 1 else 1.0
                  for p in self.pairs[::2])
        g = self.rate
        rem = math.log1p(-g) + math.log1p((self.n - 1) * rho)
        add = -math.log1p(-g)
        return max(rem, add, 0.0) * (1.0 + 1e-9) + _EPS_SLACK

    def eps_hi(self) -> float:
        """An ε above every finite privacy loss, both directions. Removing: the loss is
        log(ΣA/ΣB) with ΣB = n_⊥/(1 − γ) and ΣA = n_⊥ + Σ ratios ≤ n_⊥ + (n − 1)·ρ_max, so at
        most log((1 − γ)(1 + (n − 1)ρ_max)) when n_⊥ ≥ 1; adding: log(ΣB/ΣA) ≤ −log(1 − γ).
        Above it δ(ε) is the infinite-loss mass alone."""
        return self._eps_hi

    def epsilon(self, delta: float) -> float:
        """Smallest certified ε with δ(ε) ≤ delta; inf when the infinite-loss mass (the
        count of reports revealing the victim) exceeds delta."""
        delta = float(delta)
        hi = self.eps_hi()
        if self.delta(hi) > delta:
            return math.inf
        if self.delta(0.0) <= delta:
            return 0.0
        return float(falling_log_root(self.delta, delta, 0.0, hi, xtol=1e-12, rtol=2e-6))

    def pure_epsilon(self):
        """None: infinite loss has positive probability."""
        return None

    #: Adding and removing the victim differ: a PLD composes both directions.
    pld_symmetric = False

    def pld_atoms(self):
        """(log P, log Q, charged mass) of the curve's dominating pair (``curve_pair``): the
        infinite-loss mass as a P-only atom (log Q = −inf); the atoms of the far tails (each
        side at most ``PLD_TAIL``) dropped and charged at infinite loss in every round."""
        g, lp, lq, p_inf = curve_pair(self.mech, self.n, self.rate)
        p, q = np.exp(lp), np.exp(lq)
        order = np.argsort(g)
        p_above = np.cumsum(p[order][::-1])[::-1] - p[order]
        q_below = np.cumsum(q[order]) - q[order]
        keep = np.zeros(g.size, dtype=bool)
        keep[order] = (p_above + p[order] > PLD_TAIL) & (q_below + q[order] > PLD_TAIL)
        dropped = max(float(np.sum(p[~keep])), float(np.sum(q[~keep])))
        lp, lq = lp[keep], lq[keep]
        if p_inf > 0.0:
            # The infinite-loss mass as a P-only atom (as fmt20-addremove's pair lists it): the
            # composition then treats it as the mass it is, not as a per-round extra charge.
            lp = np.append(lp, math.log(p_inf))
            lq = np.append(lq, -math.inf)
        return lp, lq, float(round_up(dropped)) if dropped > 0.0 else 0.0
