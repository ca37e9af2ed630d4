"""Brute-force oracle: the exact shuffled output distribution for tiny n.

For a finite randomizer R[x, y] and a concrete dataset, the shuffler's output is the
histogram of the n reports; its law is the convolution of the users' categorical laws over
count vectors. Everything is computed in mpmath at 50 digits from the matrix entries, so
the oracle shares no code with the library (spec/validation.md "Oracles" 1).

Reusable by every bound's tests:

* ``shuffled(R, data)``          -> {counts: prob}
* ``hockey(P, Q, eps)``          -> H_{e^eps}(P || Q)
* ``renyi(P, Q, order)``         -> D_order(P || Q)  (integer or real order > 1)
* ``product(P, Q)``              -> law of two independent rounds (for composition tests)
* ``worst_delta(R, n, eps)``     -> max over all neighbouring datasets (victim = user 0)
* ``worst_renyi(R, n, order)``   -> the same for Rényi divergence
* ``neighbours(k, n)``           -> every (X0, X1) pair differing in user 0, others as a multiset
* ``clone_pair_law(n, p, a)``     -> the generic clone pair (clones.md §1, g = 0)
* ``clone_pair_slices(n, p, a, sds)`` -> the same pair slice by slice, within ±sds sd of C (large n)
* ``checkin_pair_law(n, p, a, γ, c)`` -> the hidden-⊥ check-in pair, trimmed by c (sampling.md §1)
"""

from __future__ import annotations

import itertools
from typing import Iterable

import mpmath as mp

mp.mp.dps = 50


def _matrix(R) -> list[list]:
    rows = [[mp.mpf(repr(float(v))) for v in row] for row in R]
    for row in rows:
        s = mp.fsum(row)
        for j in range(len(row)):
            row[j] = row[j] / s
    return rows


def shuffled(R, data: Iterable[int]) -> dict:
    """Exact law of the histogram of reports when user i holds data[i]."""
    M = _matrix(R)
    B = len(M[0])
    dist = {tuple([0] * B): mp.mpf(1)}
    for x in data:
        row = M[x]
        nxt: dict = {}
        for counts, pr in dist.items():
            for y in range(B):
                if row[y] == 0:
                    continue
                c = list(counts)
                c[y] += 1
                c = tuple(c)
                nxt[c] = nxt.get(c, mp.mpf(0)) + pr * row[y]
        dist = nxt
    return dist


def hockey(P: dict, Q: dict, eps) -> mp.mpf:
    e = mp.e ** mp.mpf(eps)
    total = mp.mpf(0)
    for k, p in P.items():
        d = p - e * Q.get(k, mp.mpf(0))
        if d > 0:
            total += d
    return total


def renyi(P: dict, Q: dict, order) -> mp.mpf:
    lam = mp.mpf(order)
    total = mp.mpf(0)
    for k, p in P.items():
        if p == 0:
            continue
        q = Q.get(k, mp.mpf(0))
        if q == 0:
            return mp.inf
        total += p ** lam * q ** (1 - lam)
    return mp.log(total) / (lam - 1)


def product_hockey(P, Q, T: int, eps) -> mp.mpf:
    """δ_{P‖Q}(ε) of the T-fold product of a small atom pair (lists of mpf masses, atom i
    in both), by enumerating every T-tuple: Σ (ΠP − e^ε ΠQ)_+."""
    e = mp.e ** mp.mpf(eps)
    tot = mp.mpf(0)
    for tup in itertools.product(range(len(P)), repeat=T):
        a = mp.fprod(P[i] for i in tup)
        b = mp.fprod(Q[i] for i in tup)
        if a > e * b:
            tot += a - e * b
    return tot


def product(P: dict, Q: dict) -> dict:
    return {(a, b): pa * qb for a, pa in P.items() for b, qb in Q.items()}


def neighbours(k: int, n: int):
    """Every neighbouring pair with the victim first; the others as a sorted multiset."""
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        for x0 in range(k):
            for x1 in range(k):
                if x0 != x1:
                    yield (x0,) + others, (x1,) + others


def worst_delta(R, n: int, eps) -> tuple:
    """(max δ over all neighbouring datasets, the pair achieving it)."""
    k = len(R)
    best, arg = mp.mpf(0), None
    for X0, X1 in neighbours(k, n):
        d = hockey(shuffled(R, X0), shuffled(R, X1), eps)
        if d > best:
            best, arg = d, (X0, X1)
    return best, arg


def worst_renyi(R, n: int, order) -> tuple:
    k = len(R)
    best, arg = mp.mpf(0), None
    for X0, X1 in neighbours(k, n):
        d = renyi(shuffled(R, X0), shuffled(R, X1), order)
        if d > best:
            best, arg = d, (X0, X1)
    return best, arg


def rr_matrix(eps0: float, k: int) -> list[list[float]]:
    """k-ary randomized response, written out independently of the library."""
    import math
    e = math.exp(eps0)
    return [[e / (e + k - 1) if i == j else 1.0 / (e + k - 1) for j in range(k)] for i in range(k)]


def clone_pair_law(n: int, p, a) -> tuple[dict, dict]:
    """The clone pair of clones.md §1 (g = 0) written out: ({(zeros, ones): prob} under P,
    the same under Q). n − 1 others are clones (a fair bit) w.p. p; the victim reports 0
    w.p. a under P and 1 − a under Q. Swapping zeros and ones maps P to Q."""
    p, a = mp.mpf(p), mp.mpf(a)
    b = 1 - a
    P, Q = {}, {}
    for c in range(n):
        wc = mp.binomial(n - 1, c) * p ** c * (1 - p) ** (n - 1 - c)
        for z in range(c + 1):
            wz = wc * mp.binomial(c, z) / mp.mpf(2) ** c
            for vt, pa, qa in ((0, a, b), (1, b, a)):
                key = (z + (vt == 0), c - z + (vt == 1))
                P[key] = P.get(key, 0) + wz * pa
                Q[key] = Q.get(key, 0) + wz * qa
    return P, Q


def clone_pair_slices(n: int, p, alpha, sds):
    """The clone pair of ``clone_pair_law`` slice by slice, for n too large to write out:
    yields (Pr[C = c], P_c, Q_c) for each clone count c within ±sds standard deviations of
    C ~ Bin(n − 1, p), where P_c(x) = α Bin(c,½)(x−1) + (1−α) Bin(c,½)(x), x = 0..c+1, and
    Q_c is the same with α and 1 − α swapped (in the caller's mpmath precision)."""
    m = n - 1
    p = mp.mpf(p)
    mean, sd = m * p, mp.sqrt(m * p * (1 - p))
    for c in range(max(0, int(mean - sds * sd)), min(m, int(mean + sds * sd)) + 1):
        wc = mp.binomial(m, c) * p ** c * (1 - p) ** (m - c)
        b = [mp.mpf(1) / mp.mpf(2) ** c]
        for x in range(c):
            b.append(b[-1] * (c - x) / (x + 1))
        u, v = [mp.mpf(0)] + b, b + [mp.mpf(0)]
        yield (wc, [alpha * u[x] + (1 - alpha) * v[x] for x in range(c + 2)],
               [(1 - alpha) * u[x] + alpha * v[x] for x in range(c + 2)])


def checkin_pair_law(n: int, p, alpha, gamma, c=1) -> tuple[dict, dict, mp.mpf]:
    """The hidden-⊥ check-in pair from its closed form (sampling.md §1): ({(n_⊥, a, b):
    prob} under P, the same under Q, c_γ). c < 1 trims the victim ((ε0, δ0) randomizers,
    c_γ = 1 − γ(1 − c)); c = 1 is the pure pair. γ = 1 is the all-users pair."""
    p, al, g, c = mp.mpf(p), mp.mpf(alpha), mp.mpf(gamma), mp.mpf(c)
    cg = 1 - g * (1 - c)
    P, Q = {}, {}
    for nb in range(n + 1):
        for a in range(n + 1 - nb):
            for b in range(n + 1 - nb - a):
                ell = n - nb - a - b
                if nb + a + b == 0:
                    continue
                base = (mp.factorial(n - 1) / (mp.factorial(nb) * mp.factorial(a)
                        * mp.factorial(b) * mp.factorial(ell))
                        * (1 - g) ** nb * g ** (n - nb) * (p / 2) ** (a + b - 1) * (1 - p) ** ell)
                P[(nb, a, b)] = base * (nb * p / 2 + c * (al * a + (1 - al) * b)) / cg
                Q[(nb, a, b)] = base * (nb * p / 2 + c * ((1 - al) * a + al * b)) / cg
    return P, Q, cg


# ----------------------------------------------------------------------------------------
# k-RR with participation (check-in or a uniform m-subset), every neighbouring dataset
# ----------------------------------------------------------------------------------------
def rr_rows_mp(eps0, k: int) -> list[list]:
    """k-RR in mpmath straight from ε0 (no float rounding of the matrix entries: at
    ε0 ≥ 37 the float entry 1/(e^ε0 + 1) is all that is left of 1 − α)."""
    e = mp.e ** mp.mpf(eps0)
    return [[e / (e + k - 1) if i == j else 1 / (e + k - 1) for j in range(k)]
            for i in range(k)]


def _convolve(dist: dict, row: list, absent) -> dict:
    """Add one user who is absent w.p. ``absent`` (sends nothing) and else reports y w.p.
    (1 − absent)·row[y]."""
    B = len(row)
    nxt: dict = {}
    for counts, pr in dist.items():
        if absent:
            nxt[counts] = nxt.get(counts, mp.mpf(0)) + pr * absent
        for y in range(B):
            w = (1 - absent) * row[y]
            if w == 0:
                continue
            c = list(counts)
            c[y] += 1
            c = tuple(c)
            nxt[c] = nxt.get(c, mp.mpf(0)) + pr * w
    return nxt


def sampled_law(rows, data, rate=None, size=None) -> dict:
    """Exact law of the histogram of the participants' reports (the number of participants
    is its sum, so it is released too). ``rate``: each user takes part independently w.p.
    γ (check-in); ``size``: a uniformly random subset of that many users takes part;
    neither: everyone reports."""
    B = len(rows[0])
    zero = {tuple([0] * B): mp.mpf(1)}
    if size is None:
        absent = 0 if rate is None else 1 - mp.mpf(rate)
        dist = zero
        for x in data:
            dist = _convolve(dist, rows[x], absent)
        return dist
    subsets = list(itertools.combinations(range(len(data)), size))
    out: dict = {}
    for sub in subsets:
        dist = zero
        for i in sub:
            dist = _convolve(dist, rows[data[i]], 0)
        for key, pr in dist.items():
            out[key] = out.get(key, mp.mpf(0)) + pr / len(subsets)
    return out


class SampledLeak:
    """The exact leak of k-RR (ε0) with n users and participation, maximised over every
    neighbouring dataset (victim = user 0, replacement) and both directions: δ(ε) and
    D_λ, at 50 digits."""

    def __init__(self, eps0, k: int, n: int, rate=None, size=None):
        with mp.workdps(50):
            rows = rr_rows_mp(eps0, k)
            self.laws = []
            seen = set()
            for X0, X1 in neighbours(k, n):
                key = (X0, X1)
                # k-RR is symmetric under relabelling: the victim pair (0, 1) (and its swap,
                # covered by the two directions) is enough.
                if (X0[0], X1[0]) != (0, 1) or key in seen:
                    continue
                seen.add(key)
                P = sampled_law(rows, X0, rate, size)
                Q = sampled_law(rows, X1, rate, size)
                self.laws.append((P, Q))
            # For δ(ε): each outcome's log-masses and privacy loss ℓ = log P − log Q, formed
            # at 50 digits and then rounded once to floats. δ(ε) = Σ_{ℓ>ε} P·(1 − e^{ε−ℓ})
            # is a sum of non-negative terms, each good to ~1e-15 relative in floats.
            lp, lq, ell, law = [], [], [], []
            for i, (P, Q) in enumerate(self.laws):
                for key in set(P) | set(Q):
                    p, q = P.get(key, mp.mpf(0)), Q.get(key, mp.mpf(0))
                    lp.append(float(mp.log(p)) if p > 0 else -float("inf"))
                    lq.append(float(mp.log(q)) if q > 0 else -float("inf"))
                    if p > 0 and q > 0:
                        ell.append(float(mp.log(p) - mp.log(q)))
                    else:
                        ell.append(float("inf") if p > 0 else -float("inf"))
                    law.append(i)
        import numpy as np
        self._lp, self._lq = np.array(lp), np.array(lq)
        self._ell, self._law = np.array(ell), np.array(law)

    def delta(self, eps) -> float:
        """max over datasets and directions of H_{e^ε} (float sums of 50-digit terms)."""
        import numpy as np
        best = 0.0
        for lmass, ell in ((self._lp, self._ell), (self._lq, -self._ell)):
            m = ell > eps
            with np.errstate(invalid="ignore"):
                terms = np.exp(lmass[m]) * -np.expm1(eps - ell[m])
            sums = np.bincount(self._law[m], weights=terms, minlength=len(self.laws))
            best = max(best, float(sums.max()) if sums.size else 0.0)
        return best

    def delta_mp(self, eps) -> float:
        """The same at 50 digits throughout (slow; checks ``delta``)."""
        with mp.workdps(50):
            return float(max(max(hockey(P, Q, eps), hockey(Q, P, eps)) for P, Q in self.laws))

    def renyi(self, order) -> float:
        with mp.workdps(50):
            return float(max(max(renyi(P, Q, order), renyi(Q, P, order))
                             for P, Q in self.laws))
