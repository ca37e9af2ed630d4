"""Property-based invariants of spec/validation.md for the accountant's answer.

The accountant's answer is a min over valid upper bounds computed by numerical order
searches; monotonicity is asserted with a 1e-9 relative slack for that search.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import shuffledp as sd
from shuffledp.bounds import all_bounds

SLACK = 1e-9
eps0s = st.floats(0.05, 6.0)
ns = st.integers(2, 20_000)
deltas = st.floats(1e-12, 0.5)
FAST = settings(max_examples=12, deadline=None)


def eps(e0, n, d, T=1):
    return sd.epsilon(sd.Shuffle(sd.LDP(e0), n=n), d, rounds=T)


@given(e0=eps0s, n=ns, d1=deltas, d2=deltas)
@FAST
def test_non_increasing_in_delta(e0, n, d1, d2):
    lo, hi = sorted((d1, d2))
    assert eps(e0, n, hi).epsilon <= eps(e0, n, lo).epsilon * (1 + SLACK)


@given(e0=eps0s, n1=ns, n2=ns, d=deltas)
@FAST
def test_non_increasing_in_n(e0, n1, n2, d):
    a, b = sorted((n1, n2))
    assert eps(e0, b, d).epsilon <= eps(e0, a, d).epsilon * (1 + SLACK)


@given(e1=eps0s, e2=eps0s, n=ns, d=deltas)
@FAST
def test_non_decreasing_in_eps0(e1, e2, n, d):
    a, b = sorted((e1, e2))
    assert eps(a, n, d).epsilon <= eps(b, n, d).epsilon * (1 + SLACK)


@given(e0=st.floats(0.1, 3.0), n=st.integers(100, 5000), T1=st.integers(1, 300),
       T2=st.integers(1, 300), d=deltas)
@FAST
def test_non_decreasing_in_rounds(e0, n, T1, T2, d):
    a, b = sorted((T1, T2))
    ra = sd.epsilon(sd.Shuffle(sd.LDP(e0), n=n), d, rounds=a, bound="girgis-ub1")
    rb = sd.epsilon(sd.Shuffle(sd.LDP(e0), n=n), d, rounds=b, bound="girgis-ub1")
    assert ra.epsilon <= rb.epsilon * (1 + SLACK)


@given(e0=eps0s, n=ns, d=deltas)
@FAST
def test_answer_between_lower_and_trivial(e0, n, d):
    r = eps(e0, n, d)
    triv = next((c.epsilon for c in r.candidates if c.bound == "trivial"), None)
    if triv is None:
        # not computed: an earlier bound's answer (girgis-ub1 runs first) is provably below
        assert "cannot beat" in dict(r.not_applicable)["trivial"]
        triv = sd.epsilon(sd.Shuffle(sd.LDP(e0), n=n), d, bound="trivial").epsilon
    assert r.epsilon <= triv
    assert r.epsilon <= e0 * (1 + 1e-12)          # never above ε0 (post-processing)
    for c in r.candidates:
        if c.kind == "lower":
            assert c.epsilon <= r.epsilon * (1 + SLACK) + 1e-15


@given(e0=eps0s, n=st.integers(1, 10**6), lam=st.integers(2, 4096))
@settings(max_examples=25, deadline=None)
def test_rdp_lower_below_every_upper(e0, n, lam):
    p = sd.Shuffle(sd.LDP(e0), n=n)
    lo = sd.rdp(p, [lam], bound="girgis-lower").values[0]
    for b in ("girgis-ub1", "girgis-ub2", "trivial"):
        assert lo <= sd.rdp(p, [lam], bound=b).values[0] * (1 + 1e-12), b


@given(e0=eps0s, n=ns, d=deltas)
@FAST
def test_delta_of_epsilon_at_most_delta(e0, n, d):
    p = sd.Shuffle(sd.LDP(e0), n=n)
    r = sd.epsilon(p, d)
    assume(r.epsilon > 0)
    assert sd.delta(p, r.epsilon, bound=r.bound).delta <= d * (1 + 1e-9)


# ----- extreme but valid inputs: finite and labelled, or a clear NotApplicableError ------

_EXTREMES = [
    dict(eps0=0.0, n=1000, delta=1e-6),
    dict(eps0=20.0, n=1000, delta=1e-6),
    dict(eps0=1.0, n=1, delta=1e-6),
    dict(eps0=1.0, n=10**9, delta=1e-6),
    dict(eps0=1.0, n=1000, delta=1e-300),
    dict(eps0=20.0, n=10**9, delta=1e-300),
]


@pytest.mark.parametrize("case", _EXTREMES, ids=lambda c: f"{c['eps0']}-{c['n']}-{c['delta']}")
def test_extreme_inputs_finite_and_labelled(case):
    p = sd.Shuffle(sd.LDP(case["eps0"]), n=case["n"])
    r = sd.epsilon(p, case["delta"])
    assert math.isfinite(r.epsilon) and r.kind == "upper" and r.bound
    assert r.epsilon <= case["eps0"] * (1 + 1e-12)
    for c in r.candidates:
        assert not math.isnan(c.epsilon) and c.kind in ("upper", "lower", "estimate")
    d = sd.delta(p, 0.1)
    assert 0.0 <= d.delta <= 1.0 and not math.isnan(d.delta)
    for b in [b.id for b in all_bounds() if b.has_rdp]:
        try:
            c = sd.rdp(p, [2, 10_000], bound=b)
        except sd.NotApplicableError as exc:
            assert b in str(exc)                     # a clear, named refusal
            continue
        assert not np.any(np.isnan(c.values)) and np.all(c.values >= 0), (b, c.values)
        assert c.kind in ("upper", "lower", "estimate")


def test_eps0_zero_gives_zero_everywhere():
    p = sd.Shuffle(sd.LDP(0.0), n=10)
    assert sd.epsilon(p, 1e-6, rounds=100).epsilon == 0.0
    assert sd.delta(p, 0.0).delta == 0.0
