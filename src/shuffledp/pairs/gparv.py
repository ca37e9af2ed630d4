r"""Privacy-blanket atoms of concrete randomizers (the GPARV tables), derived per mechanism.

For a randomizer R (inputs x, outputs y) the blanket is γω(y) = min_u R(u)(y),
γ = Σ_y γω(y) (Balle, Bell, Gascón, Nissim, CRYPTO 2019, arXiv:1903.02837). For an ordered
victim pair (x, x') the generalized privacy-amplification random variable of Su, Cheng,
Wang (IEEE S&P 2026, arXiv:2504.07414) is G = A − e^ε B on a blanket draw Y ~ ω (probability
γ) and 0 otherwise, with A = R(x)(Y)/(γω(Y)), B = R(x')(Y)/(γω(Y)). A ``BlanketPair``
lists the distinct (A, B) values with their masses γω summed over outputs, and the mass
1 − γ of the zero atom computed without cancellation.

The closed forms below are derived from the definitions in ``mechanisms`` (derivations in
docs/bounds.md, "privacy blanket"); each record's ``matrix()`` builds the full matrix at
small d so the tests can compare them with the generic column-wise construction
(``pairs_from_matrix``).
Every named mechanism here is symmetric under relabelling the inputs, so one ordered pair
(x, x') = (0, 1) represents them all (its swap has the same atoms with A and B exchanged,
which is the same multiset after relabelling).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from ..core import mechanisms as M

__all__ = ["BlanketPair", "pairs_of", "has_pairs", "pairs_from_matrix", "with_checkin",
           "krr_pairs", "oue_pairs", "rappor_pairs", "hadamard_pairs", "hashing_pairs"]


@dataclass(frozen=True)
class BlanketPair:
    """Atoms of G for one ordered victim pair: G = a − e^ε b w.p. w, and 0 w.p. w0."""

    label: str
    a: np.ndarray
    b: np.ndarray
    w: np.ndarray
    w0: float

    @property
    def gamma(self) -> float:
        return float(np.sum(self.w))

    def atoms(self, eps: float):
        """(values, probs, value errors) of G at ε, the zero atom last."""
        vals, probs, err = self.atoms_at([math.exp(eps)])
        return vals[0], probs, err[0]

    def atoms_at(self, ts, excess: bool = False):
        """(values, probs, value errors) at e^ε = t for every t in ``ts`` at once: one row
        of values and errors per t (the zero atom last in each), the probabilities shared.
        Values a − t·b (G), or t·b − a (``excess``: the summand of H − (1 − e^ε), ε ≤ 0,
        without subtracting nearly equal numbers); errors 8u·(a + t·b) either way. The one
        home of the formula (``atoms``, the blanket's excess atoms and its curve batches)."""
        t = np.asarray(ts, dtype=float)[:, None]
        m = self.a.size
        tb = t * self.b
        vals = np.zeros((t.shape[0], m + 1))
        err = np.zeros((t.shape[0], m + 1))
        if excess:
            np.subtract(tb, self.a, out=vals[:, :m])
        else:
            np.subtract(self.a, tb, out=vals[:, :m])
        np.multiply(8.0 * 2.0 ** -53, self.a + tb, out=err[:, :m])
        return vals, np.append(self.w, self.w0), err

    def max_log_ratio(self) -> float:
        """Largest |log(A/B)| over the atoms: the pair's privacy loss lies within it."""
        return float(np.max(np.abs(np.log(self.a) - np.log(self.b)))) if self.a.size else 0.0


def _pair(label, rows, w0):
    a = np.array([r[0] for r in rows], dtype=float)
    b = np.array([r[1] for r in rows], dtype=float)
    w = np.array([r[2] for r in rows], dtype=float)
    keep = w > 0
    return BlanketPair(label, a[keep], b[keep], w[keep], float(w0))


def krr_pairs(m):
    E = math.exp(m.eps0)
    D = E + m.k - 1
    rows = [(E, 1.0, 1.0 / D), (1.0, E, 1.0 / D), (1.0, 1.0, (m.k - 2) / D)]
    return [_pair("victim 0 vs 1 (all pairs are equivalent)", rows, math.expm1(m.eps0) / D)]


def oue_pairs(m):
    E, d = math.exp(m.eps0), m.d
    top = math.exp((1 - d) * math.log1p(E))          # (E + 1)^{1−d}: the all-ones output
    rows = [(E, E, 1.0 / (2 * E * (E + 1)) * -math.expm1((2 - d) * math.log1p(E))),
            (E, 1.0, 1.0 / (2 * (E + 1))), (1.0, E, 1.0 / (2 * (E + 1))),
            (1.0, 1.0, E / (2 * (E + 1)) + top / 2)]
    w0 = -math.expm1(-m.eps0) / 2 * -math.expm1((1 - d) * math.log1p(E))
    return [_pair("victim 0 vs 1 (all pairs are equivalent)", rows, w0)]


def rappor_pairs(m):
    s, d = math.exp(m.eps0 / 2), m.d
    l1s = math.log1p(s)
    rows = [(s * s, s * s, 1.0 / (s * (s + 1) ** 2) * -math.expm1((2 - d) * l1s)),
            (s * s, 1.0, 1.0 / (s + 1) ** 2), (1.0, s * s, 1.0 / (s + 1) ** 2),
            (1.0, 1.0, s / (s + 1) ** 2 + s * math.exp(-d * l1s))]
    w0 = -math.expm1(-m.eps0 / 2) * -math.expm1((1 - d) * l1s)
    return [_pair("victim 0 vs 1 (all pairs are equivalent)", rows, w0)]


def hadamard_pairs(m):
    E, K = math.exp(m.eps0), m.K
    rows = [(E, E, (0.5 - 2.0 / K) / (E + 1)), (E, 1.0, 0.5 / (E + 1)), (1.0, E, 0.5 / (E + 1)),
            (1.0, 1.0, 0.5 / (E + 1) + 2 * E / (K * (E + 1)))]
    w0 = math.tanh(m.eps0 / 2) * (1.0 - 2.0 / K)
    return [_pair("victim 0 vs 1 (all pairs are equivalent)", rows, w0)]


def hashing_pairs(m):
    E, d = math.exp(m.eps0), m.d
    c = 2.0 ** (1 - d)                                 # P(h is constant)
    rows = [(E, E, (0.5 - c) / (E + 1)), (E, 1.0, 0.5 / (E + 1)), (1.0, E, 0.5 / (E + 1)),
            (1.0, 1.0, (0.5 - c) / (E + 1) + c)]
    w0 = math.tanh(m.eps0 / 2) * (1.0 - c)
    return [_pair("victim 0 vs 1 (all pairs are equivalent)", rows, w0)]


def pairs_from_matrix(mat, max_pairs: int | None = None) -> list[BlanketPair]:
    """Column-wise blanket of a finite matrix and one ``BlanketPair`` per ordered input pair
    (x, x'), x ≠ x' (pairs with identical atoms listed once).

    Columns that are zero for every input are dropped; an ε0-LDP matrix has no column that
    is zero for some inputs only, so no victim mass falls outside the blanket's support.
    """
    m = np.asarray(mat, dtype=float)
    m = m[:, m.max(axis=0) > 0]
    g = m.min(axis=0)
    if np.any(g <= 0):
        raise ValueError("the matrix has an output with probability 0 under some inputs only: "
                         "it is not eps0-LDP and has no blanket there")
    # 1 − γ = Σ_y (R(x0)(y) − min_u R(u)(y)): a sum of non-negative terms, no cancellation.
    w0 = float(np.sum(m[0] - g))
    out, seen = [], set()
    k = m.shape[0]
    for x in range(k):
        for xp in range(k):
            if x == xp:
                continue
            a, b = m[x] / g, m[xp] / g
            key = tuple(sorted(zip(np.round(a, 12), np.round(b, 12), np.round(g, 15))))
            if key in seen:
                continue
            seen.add(key)
            out.append(BlanketPair(f"victim {x} vs {xp}", a, b, g.copy(), w0))
    return out


#: The blanket atoms of each concrete randomizer record (records carry no maths: a new
#: randomizer is its record in ``mechanisms`` plus its atom function and one line here).
_ATOMS = {
    M.RandomizedResponse: krr_pairs,
    M.Randomizer: lambda m: pairs_from_matrix(m.array),
    M.OUE: oue_pairs,
    M.RAPPOR: rappor_pairs,
    M.HadamardResponse: hadamard_pairs,
    M.LocalHashing: hashing_pairs,
}


def has_pairs(mech) -> bool:
    """True when the blanket atoms of ``mech`` are known (a concrete randomizer)."""
    return type(mech) in _ATOMS


def pairs_of(mech) -> list[BlanketPair]:
    """The blanket pairs of a concrete randomizer (one ordered victim pair per distinct
    (A, B) table; every named mechanism needs one, a matrix one per ordered input pair)."""
    fn = _ATOMS.get(type(mech))
    if fn is None:
        raise ValueError(f"mechanism must be a concrete randomizer (RandomizedResponse, "
                         f"Randomizer, OUE, RAPPOR, HadamardResponse, LocalHashing); got {mech!r}")
    return fn(mech)


def with_checkin(pair: BlanketPair, rate: float) -> BlanketPair:
    """The pair of R_γ = γR + (1 − γ)⊥: ⊥ is an output every input emits w.p. 1 − γ, so it
    joins the blanket with A = B = 1; the other atoms keep A, B with masses scaled by γ."""
    if rate >= 1.0:
        return pair
    return BlanketPair(pair.label + f", check-in rate {rate:g}", np.append(pair.a, 1.0),
                       np.append(pair.b, 1.0), np.append(rate * pair.w, 1.0 - rate),
                       rate * pair.w0)
