"""The closed-form floor on a clone pair's D(2) (``bounds.sampled.clone_d2_floor``) and the
sampled bounds' RDP view that uses it to skip the unsampled pair's sums."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import shuffledp as sd
from shuffledp.bounds import get
from shuffledp.bounds.sampled import clone_d2_floor
from shuffledp.pairs import clone as cp


def _exact_d2(n, p, eps0):
    """D_2(P ‖ Q) of the clone pair by enumeration in mpmath (50 digits): C ~ Bin(n − 1, p)
    clones, A | C ~ Bin(C, ½), the victim adds a 0 w.p. α under P (a 1 under Q)."""
    mpmath.mp.dps = 50
    p = mpmath.mpf(p)
    al = mpmath.e ** eps0 / (1 + mpmath.e ** eps0)
    be = 1 - al
    tot = mpmath.mpf(0)
    for c in range(n):
        wc = mpmath.binomial(n - 1, c) * p ** c * (1 - p) ** (n - 1 - c)
        half = [mpmath.binomial(c, x) / mpmath.mpf(2) ** c for x in range(c + 1)]
        for x in range(c + 2):                  # x 0-reports among the c + 1
            lo = half[x - 1] if x >= 1 else 0   # victim 0, x − 1 of the clones
            hi = half[x] if x <= c else 0       # victim 1, x of the clones
            P = al * lo + be * hi
            Q = be * lo + al * hi
            tot += wc * P * P / Q
    return float(mpmath.log(tot))


@pytest.mark.parametrize("n,eps0", [(2, 0.5), (7, 1.0), (30, 0.2), (30, 3.0), (60, 1.0)])
def test_floor_is_below_the_exact_divergence(n, eps0):
    p = math.exp(-eps0)
    pair = cp.ClonePair(n, p, math.exp(eps0) / (1 + math.exp(eps0)),
                        1 / (1 + math.exp(eps0)), log_odds=eps0)
    exact = _exact_d2(n, p, eps0)
    fl = clone_d2_floor(pair)
    assert 0.0 < fl <= exact
    if eps0 <= 1.0:
        assert fl > 0.5 * exact                # not a vacuous floor


@pytest.mark.parametrize("n,eps0", [(10**4, 1.0), (10**6, 0.3), (10**6, 4.0)])
def test_floor_is_below_the_computed_curve(n, eps0):
    pair = get("fmt20").pair(sd.Shuffle(sd.LDP(eps0), n))
    d2 = float(pair.rdp(np.array([2]))[0])
    fl = clone_d2_floor(pair)
    assert fl <= d2
    assert fl > 0.9 * d2


@pytest.mark.parametrize("rate", [0.01, 0.3, 0.95])
def test_sampled_view_is_the_per_order_minimum(rate):
    proto = sd.Shuffle(sd.LDP(1.0), 10**5, sampling=sd.CheckIn(rate))
    b = get("fmt20-sampled")
    orders = np.array([2, 3, 5, 8, 16])
    want = np.minimum(b.hidden(proto).rdp(orders), b.base_pair(proto).rdp(orders))
    assert np.array_equal(b.rdp(proto, orders), want)


# ---- shortcuts of the check-in cells and atoms: bit-identical to the general forms ------
from shuffledp.pairs import hidden as sp
from shuffledp.pairs.trimmed import trimmed_hidden


@pytest.mark.parametrize("S,M,q", [(1, 5000, 0.9), (4, 700, 0.3), (3, 2, 0.6)])
def test_still_runs_equal_the_general_path(S, M, q):
    """Runs whose threshold does not move (one block of cells): the shortcut gives the same
    floats as the general path with its (all-zero) pmf steps."""
    rng = np.random.default_rng(S * M)
    N0 = 10.0**7 + rng.integers(0, 10**6, S).astype(float)
    Ns = N0[:, None] - np.arange(M)[None, :]
    k0 = np.floor(N0 * q) - rng.integers(0, 4000, S)
    ks = np.repeat(k0[:, None], M, axis=1)
    lens = np.array([M] + [int(rng.integers(2, M + 1)) for _ in range(S - 1)])
    lp = math.log1p(-q)
    F0 = rng.uniform(0.01, 0.9, S)
    base = rng.uniform(-12.0, -8.0, S)
    fast = sp._runs_log_cdf(Ns, ks, lens, q, lp, F0, base)
    slow = sp._runs_log_cdf(Ns, ks, lens, q, lp, F0, base, still_path=False)
    assert len(fast) == len(slow) == S
    for a, b in zip(fast, slow):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("n,sigma,rate,eps0,budget,ranking", [
    (10**10, 2.0, 0.1, 5.4, 80_000, True),        # one block: few large slices
    (151140522, 1.2923, 0.331, 6.83, sp.ATOM_BUDGET, False),
    (10**6, 2.0, 0.1, 4.09, sp.ATOM_BUDGET, False),       # many small slices
])
def test_grouped_atoms_equal_the_gathered_ones(monkeypatch, n, sigma, rate, eps0, budget,
                                               ranking):
    hp, _ = trimmed_hidden(n, sigma, eps0, rate, None)
    assert hp is not None
    sp.hidden_atoms.cache_clear()
    grouped = sp.hidden_atoms(hp, budget, ranking)
    sp.hidden_atoms.cache_clear()
    monkeypatch.setattr(sp, "_GROUPED_SLICES", -1)
    monkeypatch.setattr(sp, "_GROUPED_SLICES_RANKING", -1)
    gathered = sp.hidden_atoms(hp, budget, ranking)
    sp.hidden_atoms.cache_clear()
    for a, b in zip(grouped, gathered):
        assert np.array_equal(a, b)
