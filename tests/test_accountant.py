"""The accountant's records: labelled answers, the tightest valid upper bound chosen, all
candidates shown, details reported (spec/api.md, spec/README.md "Contract")."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import shuffledp as sd
from shuffledp.compose.kov15 import _homogeneous_floor
from shuffledp.bounds import girgis as g


def test_epsilon_result_record():
    p = sd.Shuffle(sd.LDP(1.0), n=10_000)
    r = sd.epsilon(p, 1e-6, lower=True)
    assert r.kind == "upper" and r.question == "epsilon" and r.delta == 1e-6 and r.rounds == 1
    ups = [c for c in r.candidates if c.kind == "upper" and c.default]
    assert r.epsilon == min(c.epsilon for c in ups) and r.chosen.bound == r.bound
    ids = {c.bound for c in r.candidates}
    assert {"trivial", "girgis-ub1", "girgis-ub2", "girgis-lower"} <= ids
    # Every lower bound is below the answer; the answer is below the trivial one.
    assert r.lower.epsilon <= r.epsilon <= next(c.epsilon for c in r.candidates if c.bound == "trivial")
    assert r.gap == pytest.approx(r.epsilon / r.lower.epsilon)
    # Estimates are never the answer.
    assert all(c.kind != "estimate" or c.bound != r.bound for c in r.candidates)
    d = json.loads(r.to_json())
    assert d["bound"] == r.bound and len(d["candidates"]) == len(r.candidates)
    assert "answer:" in r.table() and "*" in r.table()


def test_named_bound_and_its_details():
    p = sd.Shuffle(sd.LDP(0.5), n=10**5)
    r = sd.epsilon(p, 1e-6, rounds=10, bound="girgis-ub1")
    assert [c.bound for c in r.candidates] == ["girgis-ub1"] and r.composition == "rdp"
    det = r.chosen.details
    assert set(det) >= {"order", "order_limit_hit", "max_order_evaluated"}
    assert 2 <= det["order"] <= det["max_order_evaluated"]


def test_lower_bound_routes_and_kinds():
    p = sd.Shuffle(sd.RandomizedResponse(1.0), n=1000)
    one = sd.epsilon(p, 1e-6, bound="girgis-lower")
    assert one.kind == "lower" and one.composition == "none"
    # Several rounds: a converted RDP lower curve is only an estimate (api/base docs).
    many = sd.epsilon(p, 1e-6, rounds=5, bound="girgis-lower")
    assert many.kind == "estimate" and many.composition == "rdp"


def test_delta_question_and_inverse():
    p = sd.Shuffle(sd.LDP(1.0), n=10_000)
    r = sd.delta(p, 0.2)
    assert r.question == "delta" and r.epsilon == 0.2 and 0 < r.delta < 1
    # The exact δ of the lower-bound instance is below the certified δ.
    assert g.lower_delta(1.0, 10_000, 0.2) <= r.delta
    e = sd.epsilon(p, r.delta)
    assert e.epsilon <= 0.2 * (1 + 1e-6)


def test_rdp_default_is_pointwise_min_of_upper_bounds():
    from shuffledp.bounds import all_bounds
    p = sd.Shuffle(sd.LDP(1.0), n=1000)
    orders = [2, 3, 10, 100]
    c = sd.rdp(p, orders, rounds=3)
    # The default upper bounds with an RDP view; UB1 and trivial re-derived from formulas.
    names = [b.id for b in all_bounds()
             if b.has_rdp and b.kind == "upper" and b.default and b.check(p) is None]
    assert {"girgis-ub1", "trivial", "fmt20"} <= set(names) and "girgis-ub2" not in names
    curves = {b: sd.rdp(p, orders, bound=b).values for b in names}
    assert np.allclose(curves["girgis-ub1"], g.ub1(1.0, 1000, orders), rtol=1e-15)
    assert np.allclose(curves["trivial"], np.minimum(1.0, np.array(orders) * 0.5) * (1 + 1e-12),
                       rtol=1e-15)
    stack = np.stack([curves[b] for b in names])
    assert np.allclose(c.values, 3 * stack.min(axis=0), rtol=1e-15)
    assert c.kind == "upper" and len(c.details["bound_per_order"]) == len(orders)
    which = np.array(names)[np.argmin(stack, axis=0)]
    assert list(c.details["bound_per_order"]) == list(which)


def test_not_applicable_is_recorded_not_raised():
    r = sd.epsilon(sd.Shuffle(sd.LDP(5.0), n=100), 1e-6, lower=True)
    reasons = dict(r.not_applicable)
    assert "girgis-simplified" in reasons and "lambda^4" in reasons["girgis-simplified"]
    # The Gaussian is not eps0-LDP: every LDP bound says so, and a Gaussian bound answers.
    g = sd.epsilon(sd.Shuffle(sd.Gaussian(3.0), n=100), 1e-6)
    why = dict(g.not_applicable)
    assert "not eps0-LDP" in why["girgis-ub1"] and "not eps0-LDP" in why["trivial"]
    assert g.kind == "upper" and g.bound in ("gaussian-unamplified", "trimmed-clone")


def test_kov15_skip_only_when_its_floor_cannot_win():
    """A skipped KOV15 route would not have won: forcing it gives at least the reported floor."""
    import re
    proto = sd.Shuffle(sd.LDP(1.0), 10_000)
    r = sd.epsilon(proto, 1e-6, 10, bound="fmt20")
    skipped = r.chosen.details.get("routes_skipped", {})
    assert "kov15" in skipped
    floor = float(re.search(r"at least ([0-9.e+-]+)", skipped["kov15"]).group(1))
    forced = sd.epsilon(proto, 1e-6, 10, bound="fmt20", composition="kov15")
    assert forced.epsilon >= floor * (1 - 1e-5)
    assert forced.epsilon > r.epsilon


def test_fmt20_not_computed_when_the_fmt23_pair_dominates_it():
    """Binary RR is in FMT23's class: its pair (p = 2/(e^ε0 + 1)) is a post-processing of FMT20's
    (p = e^−ε0), so fmt20 cannot be below fmt23's exact value and is not evaluated; named,
    it still runs, and its value is indeed above fmt23's."""
    proto = sd.Shuffle(sd.RandomizedResponse(1.0, 2), n=3000)
    r = sd.epsilon(proto, delta=1e-7, rounds=5)
    reasons = dict(r.not_applicable)
    assert "fmt20" not in {c.bound for c in r.candidates}
    assert "post-processing" in reasons["fmt20"] and "fmt23" in reasons["fmt20"]
    e23 = next(c.epsilon for c in r.candidates if c.bound == "fmt23")
    assert sd.epsilon(proto, delta=1e-7, rounds=5, bound="fmt20").epsilon > e23
    # Without fmt23 (any ε0-LDP randomizer), fmt20 is computed as before.
    r2 = sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=3000), delta=1e-7, rounds=5)
    assert "fmt20" in {c.bound for c in r2.candidates}


def test_a_clone_pair_whose_exact_value_cannot_win_is_not_computed():
    """4-RR: the blanket runs first; FMT23's clone pair is then shown (a certified lower
    bound on its own T-fold ε) to be above the blanket's answer, so no route of fmt23 is
    computed, and fmt20 (whose pair FMT23's post-processes) neither. Named, each still
    runs, and its value is indeed above the answer; the answer is the one computed with
    the floors turned off."""
    proto = sd.Shuffle(sd.RandomizedResponse(1.0, 4), n=10_000)
    r = sd.epsilon(proto, delta=1e-5, rounds=10)
    reasons = dict(r.not_applicable)
    assert r.bound == "blanket"
    assert "fmt23" not in {c.bound for c in r.candidates}
    assert "certified lower bound" in reasons["fmt23"]
    assert "fmt23" in reasons["fmt20"] and "proven" in reasons["fmt20"]
    for b in ("fmt23", "fmt20"):
        assert sd.epsilon(proto, delta=1e-5, rounds=10, bound=b).epsilon > r.epsilon
    from shuffledp.bounds import clones
    orig = clones._PairBound._floor_beats
    clones._PairBound._floor_beats = lambda *a, **k: False
    try:
        full = sd.epsilon(proto, delta=1e-5, rounds=10)
    finally:
        clones._PairBound._floor_beats = orig
    assert "fmt23" in {c.bound for c in full.candidates}
    assert full.epsilon == r.epsilon
    # the δ question too: the pair's own δ at this ε is above the blanket's
    d = sd.delta(proto, epsilon=r.epsilon, rounds=10)
    assert "fmt23" not in {c.bound for c in d.candidates}
    assert sd.delta(proto, epsilon=r.epsilon, rounds=10, bound="fmt23").delta > d.delta


def test_a_certified_zero_ends_the_search():
    """δ = 0 from a cheap bound: no bound can return less, so the costly ones are not run
    (they used to take seconds at n = 1e6 for the same 0) and say why."""
    r = sd.delta(sd.Shuffle(sd.LDP(1.0), n=10**6), epsilon=1.0, rounds=10)
    assert r.delta == 0.0
    why = dict(r.not_applicable)
    assert why["fmt20"].startswith("skipped: cannot beat 0")
    assert why["fmt20-closed"].startswith("skipped: cannot beat 0")
    # ε = 1 per 10 rounds of a 1-LDP randomizer among 1e6 users: the RDP of the shuffle is
    # ~1e-6 per round, far below what δ > 0 at ε = 1 needs, so 0 is right, not a shortcut.
    assert r.bound == "girgis-ub1" and r.chosen.composition == "rdp"


def test_kov15_floor_uses_the_per_round_delta_cap():
    """Every KOV15 split gives each round δ1 < 1 − (1 − δ)^{1/T} ≈ δ/T, so the route's floor
    is the δ1 = 0 composition of ε1 at that cap (not at δ): strong enough to skip the route
    when another route is far better, never above the route's own value."""
    from shuffledp.bounds import get
    b = get("blanket")
    p = sd.Shuffle(sd.RandomizedResponse(1.0, 4), n=10**4)
    d, T = 1e-6, 100
    k = sd.epsilon(p, delta=d, rounds=T, bound="blanket", composition="kov15").epsilon
    best = sd.epsilon(p, delta=d, rounds=T).epsilon
    assert best < 0.5 * k
    f = _homogeneous_floor(b.views(p).dp, d, T, best)
    assert best <= f <= k                       # proven, and a floor
    assert _homogeneous_floor(b.views(p).dp, d, T, k * 1.001) == -math.inf   # never claims more than k
    r = sd.epsilon(p, delta=d, rounds=T)
    skipped = r.chosen.details.get("routes_skipped", {})
    assert r.bound == "blanket" and skipped["kov15"].startswith("skipped: cannot beat")


@pytest.mark.parametrize("n, T, d", [(10**5, 10, 1e-6), (10**9, 1000, 1e-12), (10**4, 3, 1e-8)])
def test_closed_form_kov15_floor_is_below_its_route(n, T, d):
    """A closed-form bound reads its KOV15 floor directly (ε1 at the per-round δ cap): never
    above the KOV15 route's own value, and not below the bisected floor's proof level."""
    from shuffledp.bounds import get
    b = get("fmt20-closed")
    assert b.cheap_epsilon_one
    p = sd.Shuffle(sd.LDP(1.0), n=n)
    k = sd.epsilon(p, delta=d, rounds=T, bound="fmt20-closed", composition="kov15").epsilon
    f = _homogeneous_floor(b.views(p).dp, d, T, 0.5 * k)
    assert 0.5 * k <= f <= k
    bisected = type(b)()
    bisected.cheap_epsilon_one = False           # the bisection path, on the same bound
    generic = _homogeneous_floor(bisected.views(p).dp, d, T, 0.5 * k)
    assert generic <= f * (1 + 1e-9)


def test_one_round_pair_floor_skips_the_pld_route_above_the_exact_root():
    """One round above PAIR_EXACT_MAX_N: the clone bounds answer by PLD (~1 s at n = 1e12,
    pair built for 1e9 users); their pair floor is asked first and skips them when the
    pair's exact δ at the best value so far is already above δ. The answer does not
    change, and the skipped bound's own value (asked by name) is indeed above it."""
    from shuffledp.bounds import clones
    proto = sd.Shuffle(sd.LDP(1.0), n=10**12)
    r = sd.epsilon(proto, delta=1e-6)
    why = dict(r.not_applicable)
    assert why["fmt20"].startswith("skipped: cannot beat")
    own = sd.epsilon(proto, delta=1e-6, bound="fmt20").epsilon
    assert own > r.epsilon
    orig = clones._PairBound._floor_beats
    clones._PairBound._floor_beats = lambda *a, **k: False
    try:
        full = sd.epsilon(proto, delta=1e-6)
    finally:
        clones._PairBound._floor_beats = orig
    assert "fmt20" in {c.bound for c in full.candidates}
    assert full.epsilon == r.epsilon
    # below PAIR_EXACT_MAX_N the exact root is cheap: no floor is asked at one round
    small = sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=10**5), delta=1e-6)
    assert "fmt20" not in dict(small.not_applicable)
