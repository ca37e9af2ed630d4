"""Dummies drawn from a public distribution (``Shuffle(..., dummy_distribution=ν)``).

Checked against the exact law of what the adversary sees, enumerated at n ≤ 4, D ≤ 3 in
50-digit arithmetic (tests/oracle.py; a dummy is a "user" whose row is ν): every victim
pair, every input of the others, both directions of the hockey-stick divergence. The
library's δ and the direct blanket bound (``shuffledp.pairs.dummy_blanket``) are at
least the exact δ, and the exact δ at the library's ε is at most the δ asked for.
Sabotaged variants — a dummy
counted as a full blanket draw although ν is a point mass, and a dummy counted as a user
although ν is not a mixture of the rows — fall below the exact leak.
"""

from __future__ import annotations

import itertools

import mpmath as mp
import pytest

import shuffledp as sd
from shuffledp.pairs import dummy_blanket as db
from shuffledp.core.spec import proto_from_dict, proto_to_dict

from oracle import hockey, rr_matrix, shuffled

EPS = (0.3, 0.8, 1.6)


def _nu(dist, B):
    # k-RR's blanket is uniform
    return [1.0 / B] * B if dist in ("uniform", "blanket") else list(dist)


def exact_worst(eps0, B, n, D, dist, eps, h=None):
    """max over victim pairs, the h − 1 honest others' inputs, the colluders' inputs and
    both directions of H_{e^ε} between the laws of (all reports shuffled, the colluders'
    reports): D dummies each drawn from ν. Colluders' reports are independent of the rest
    and known, so they are enumerated as a separate known histogram."""
    R = rr_matrix(eps0, B) + [_nu(dist, B)]       # row B: a dummy
    h = n if h is None else h
    best = mp.mpf(0)
    for others in itertools.combinations_with_replacement(range(B), h - 1):
        base = others + (B,) * D
        for x0 in range(B):
            for x1 in range(B):
                if x0 == x1:
                    continue
                P, Q = shuffled(R, (x0,) + base), shuffled(R, (x1,) + base)
                best = max(best, hockey(P, Q, eps), hockey(Q, P, eps))
    # n − h colluders known to the adversary: the view is (honest part, known part) with the
    # known part independent of the victim, so the hockey-stick value is the honest part's.
    return best


# (eps0, B, n, D, distribution, honest): n ≤ 4, D ≤ 3
CASES = [
    (1.0, 3, 1, 3, "uniform", None),
    (1.0, 3, 2, 2, "uniform", None),
    (2.5, 3, 3, 3, "uniform", None),
    (2.0, 3, 4, 1, "uniform", None),
    (1.0, 3, 2, 3, (0.45, 0.3, 0.25), None),        # a mixture of the rows (k-RR: ν ≥ q)
    (1.0, 3, 3, 2, (0.9, 0.05, 0.05), None),         # not a mixture of the rows
    (2.0, 3, 4, 2, "blanket", 2),
    (1.0, 2, 3, 3, "uniform", None),
]


def _ids(c):
    eps0, B, n, D, dist, h = c
    d = dist if isinstance(dist, str) else "vec" + "-".join(f"{x:g}" for x in dist)
    return f"{B}RR-e{eps0:g}-n{n}-D{D}-{d}" + (f"-h{h}" if h else "")


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_library_and_direct_bound_dominate_the_exact_deployment(case):
    eps0, B, n, D, dist, h = case
    mech = sd.RandomizedResponse(eps0, B)
    proto = sd.Shuffle(mech, n, dummies=D, dummy_distribution=dist, honest=h)
    hh = n if h is None else h
    c = db.blanket_weight(mech, dist)
    for eps in EPS:
        ex = exact_worst(eps0, B, n, D, dist, eps, h)
        r = sd.delta(proto, eps)
        assert r.delta >= float(ex) * (1 - 1e-12), (eps, r.delta, float(ex))
        direct = db.delta(mech, hh, D, c, eps)
        assert direct >= float(ex) * (1 - 1e-12), (eps, direct, float(ex))
        assert any(x.bound == "dummies-blanket" for x in r.candidates)
    # The other direction: the exact δ at the library's ε is at most the δ asked for.
    for delta in (0.3, 0.05):
        e = sd.epsilon(proto, delta).epsilon
        assert exact_worst(eps0, B, n, D, dist, e, h) <= delta * (1 + 1e-12), (delta, e)


def test_uniform_dummies_gain_is_real():
    """Uniform dummies leak less than the worst fixed dummy inputs (exactly), and the direct
    bound is below the fixed-input answer where its weight-1 draws matter."""
    eps0, B, n, D = 2.5, 3, 2, 3
    # Worst fixed inputs: the dummies are users with inputs chosen by the enumeration.
    fixed = sd.delta(sd.Shuffle(sd.RandomizedResponse(eps0, B), n, dummies=D), 0.8).delta
    uni = sd.delta(sd.Shuffle(sd.RandomizedResponse(eps0, B), n, dummies=D,
                              dummy_distribution="uniform"), 0.8)
    assert uni.bound == "dummies-blanket" and uni.delta < fixed
    assert exact_worst(eps0, B, n, D, "uniform", 0.8) < exact_worst(eps0, B, n + D, 0,
                                                                    "uniform", 0.8)


def test_sabotage_point_mass_dummies_counted_as_blanket_draws_is_caught():
    """A dummy always reporting output 0 is no blanket draw (c = 0: the adversary removes
    it). Counting it with weight 1 gives a δ below the exact leak."""
    eps0, B, n, D, eps = 1.0, 3, 1, 3, 0.3
    point = (1.0, 0.0, 0.0)
    mech = sd.RandomizedResponse(eps0, B)
    assert db.blanket_weight(mech, point) == 0.0
    ex = exact_worst(eps0, B, n, D, point, eps)
    assert sd.delta(sd.Shuffle(mech, n, dummies=D, dummy_distribution=point), eps).delta \
        >= float(ex) * (1 - 1e-12)
    assert db.delta(mech, n, D, 1.0, eps) < float(ex) * 0.9          # the sabotage


def test_sabotage_non_mixture_dummies_counted_as_users_is_caught():
    """ν = (1, 0, 0) is not a mixture of 3-RR's rows: counting its dummies as D more users
    (the fixed-input route) is below the exact leak, so the library refuses that route."""
    eps0, B, n, D, eps = 1.0, 3, 1, 3, 0.3
    point = (1.0, 0.0, 0.0)
    mech = sd.RandomizedResponse(eps0, B)
    ex = exact_worst(eps0, B, n, D, point, eps)
    wrong = sd.delta(sd.Shuffle(mech, n + D), eps).delta
    assert wrong < float(ex) * 0.9                                     # the sabotage
    r = sd.delta(sd.Shuffle(mech, n, dummies=D, dummy_distribution=point), eps)
    assert r.bound.startswith("dummies-not-counted/") and r.delta >= float(ex) * (1 - 1e-12)
    assert any("not checked to be a mixture" in w for _, w in r.not_applicable)


def test_direct_bound_without_dummies_is_the_blanket_bound():
    """D = 0: the split over the number of blanket draws loses only the bucketing (a few
    per cent of δ), and never goes below the library's blanket value."""
    from shuffledp.pairs.blanket import blanket_delta
    mech = sd.RandomizedResponse(4.0, k=100)
    for eps in (0.5, 0.8):
        a = db.delta(mech, 1000, 0, 1.0, eps)
        b = blanket_delta(sd.Shuffle(mech, 1000), eps)[0]
        assert b <= a <= 1.1 * b


def test_hull_check_for_krr():
    mech = sd.RandomizedResponse(1.0, 3)               # q = 1/(e + 2) = 0.2119
    assert db.in_row_hull(mech, "uniform") and db.in_row_hull(mech, "blanket")
    assert db.in_row_hull(mech, (0.45, 0.3, 0.25))
    assert not db.in_row_hull(mech, (0.5, 0.3, 0.2))           # 0.2 < q
    assert not db.in_row_hull(mech, (0.6, 0.3, 0.1))
    assert not db.in_row_hull(sd.Randomizer(((0.7, 0.3), (0.3, 0.7))), "uniform")
    assert db.blanket_weight(mech, "uniform") == pytest.approx(1.0)
    assert db.blanket_weight(mech, (0.6, 0.3, 0.1)) == pytest.approx(0.3)


def test_more_rounds_and_k_use_the_other_routes_with_reasons():
    p = sd.Shuffle(sd.RandomizedResponse(4.0, 100), 1000, dummies=1000,
                   dummy_distribution="uniform")
    r = sd.epsilon(p, 1e-6, rounds=3)
    assert r.bound == "dummies/blanket"
    assert any(b == "dummies-blanket" and "one round only" in w for b, w in r.not_applicable)
    r1 = sd.epsilon(p, 1e-6)
    assert r1.bound == "dummies-blanket" and r1.epsilon < sd.epsilon(
        sd.Shuffle(sd.RandomizedResponse(4.0, 100), 1000, dummies=1000), 1e-6).epsilon


@pytest.mark.parametrize("kw,words", [
    (dict(dummies=0, dummy_distribution="uniform"), ["dummy_distribution", "dummies > 0"]),
    (dict(dummies=2, dummy_distribution="gaussian"), ["dummy_distribution", "'gaussian'"]),
    (dict(dummies=2, dummy_distribution=(0.5, 0.5)), ["dummy_distribution", "3 probabilities"]),
    (dict(dummies=2, dummy_distribution=(0.5, 0.6, -0.1)), ["dummy_distribution", "-0.1"]),
])
def test_validation_names_the_parameter(kw, words):
    with pytest.raises(ValueError) as ei:
        sd.Shuffle(sd.RandomizedResponse(1.0, 3), 10, **kw)
    for w in words:
        assert w in str(ei.value)
    with pytest.raises(ValueError, match="dummy_distribution 'uniform' needs"):
        sd.Shuffle(sd.LDP(1.0), 10, dummies=2, dummy_distribution="uniform")


def test_round_trip_and_cli(capsys):
    from shuffledp.apps.cli import main
    for dd in ("uniform", "blanket", (0.2, 0.3, 0.5)):
        p = sd.Shuffle(sd.RandomizedResponse(1.0, 3), 10, dummies=2, dummy_distribution=dd)
        assert proto_from_dict(proto_to_dict(p)) == p
    assert main(["epsilon", "--mechanism", "rr:3", "--eps0", "1", "--n", "10", "--delta",
                 "1e-3", "--dummies", "2", "--dummy-distribution", "0.2,0.3,0.5"]) == 0
    assert "dummies-blanket" in capsys.readouterr().out
    assert main(["epsilon", "--mechanism", "rr:3", "--eps0", "1", "--n", "10", "--delta",
                 "1e-3", "--dummy-distribution", "uniform"]) == 2
    assert "--dummy-distribution" in capsys.readouterr().err
    assert main(["epsilon", "--mechanism", "rr:3", "--eps0", "1", "--n", "10", "--delta",
                 "1e-3", "--dummies", "2", "--dummy-distribution", "a,b"]) == 2


def test_documented_numbers_are_what_the_library_computes():
    """docs/dummies.md's worked example (4 significant digits)."""
    from pathlib import Path
    page = (Path(__file__).resolve().parents[1] / "docs" / "dummies.md").read_text()
    rr = sd.RandomizedResponse(4.0, 100)
    for D, T, want, bound in ((1000, 1, 0.4803, "dummies-blanket"),
                              (10_000, 1, 0.1801, "dummies-blanket"),
                              (1000, 10, 1.915, "dummies/blanket"),
                              (10_000, 10, 0.7647, "dummies/blanket")):
        r = sd.epsilon(sd.Shuffle(rr, 1000, dummies=D, dummy_distribution="uniform"), 1e-6,
                       rounds=T)
        assert r.bound == bound and r.epsilon == pytest.approx(want, rel=6e-4)
        assert f"{want:g}" in page
        fixed = sd.epsilon(sd.Shuffle(rr, 1000, dummies=D), 1e-6, rounds=T).epsilon
        assert r.epsilon < fixed if T == 1 else r.epsilon == fixed


def test_matrix_randomizer_with_uniform_dummies():
    """An asymmetric 3x3 matrix (its blanket is not uniform, and uniform is not checked to be
    a mixture of its rows): the direct bound with weight min ν/ω is above the exact leak."""
    M = ((0.6, 0.25, 0.15), (0.2, 0.5, 0.3), (0.25, 0.25, 0.5))
    mech = sd.Randomizer(M)
    c = db.blanket_weight(mech, "uniform")
    g = [min(r[j] for r in M) for j in range(3)]
    assert c == pytest.approx(min((1 / 3) / (x / sum(g)) for x in g), rel=1e-12) and c < 1
    for n, D in ((2, 3), (3, 2)):
        proto = sd.Shuffle(mech, n, dummies=D, dummy_distribution="uniform")
        for eps in (0.2, 0.5):
            best = mp.mpf(0)
            R = [list(r) for r in M] + [[1 / 3] * 3]
            for others in itertools.combinations_with_replacement(range(3), n - 1):
                base = others + (3,) * D
                for x0, x1 in itertools.permutations(range(3), 2):
                    P, Q = shuffled(R, (x0,) + base), shuffled(R, (x1,) + base)
                    best = max(best, hockey(P, Q, eps))
            r = sd.delta(proto, eps)
            assert r.delta >= float(best) * (1 - 1e-12)
            assert db.delta(mech, n, D, c, eps) >= float(best) * (1 - 1e-12)
            assert r.bound in ("dummies-blanket", ) or r.bound.startswith("dummies-not-counted/")
