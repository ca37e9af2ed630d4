"""The contract every registered composer obeys, over a small table of one-round views.

Parametrised over ``shuffledp.compose.ids()`` at collection time, so a composer
registered later is run through every check without editing this file (except to say, in
``ONE_ROUND``, what it gives for a single round). A composer takes ``[(view, count), ...]``
and must:

* at T = 1, never go below the single round's own value (``view.dp``), and equal it within
  its grid when its composition is exact (``ONE_ROUND``);
* be non-decreasing in T and non-increasing in δ (and in ε for the δ question);
* at T > 1, give δ(ε(δ)) ≤ δ;
* give T1 + T2 rounds of one view listed twice the value of T1 + T2 rounds listed once.

The views are those of fast bounds on small protocols (the whole file runs in seconds).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import shuffledp as sd
from shuffledp import compose as composers
from shuffledp.compose import composition as comp
from shuffledp.bounds import get
from shuffledp.core.errors import NotApplicableError

#: What a composer reads for a single round, and so what it must give at T = 1:
#: "dp" — the view's single-round (ε, δ) curve: the same numbers;
#: "pair" — the view's dominating pair: between the pair's exact hockey-stick value and
#: one step of the composer's loss grid above it;
#: "rdp" — the view's RDP curve, converted: never below the single round where the RDP
#: and (ε, δ) views describe one pair (``SAME_PAIR``); the conversion loses something even
#: at one round, so there is no upper check.
ONE_ROUND = {"none": "dp", "kov15": "dp", "pld": "pair", "rdp": "rdp"}

#: One round of a small protocol through one fast bound (built on first use).
VIEWS = {
    "fmt23-rr2-n8": ("fmt23", sd.Shuffle(sd.RandomizedResponse(2.0), n=8)),
    "fmt20-ldp-n10": ("fmt20", sd.Shuffle(sd.LDP(1.0), n=10)),
    "blanket-rr3-n50": ("blanket", sd.Shuffle(sd.RandomizedResponse(2.0, k=3), n=50)),
    # a pure-DP bound: no pair of its own, given binary randomized response at eps0
    "trivial-ldp": ("trivial", sd.Shuffle(sd.LDP(0.5), n=10)),
}
#: Views whose RDP curve, (ε, δ) curve and pair are those of one clone pair.
SAME_PAIR = {"fmt23-rr2-n8", "fmt20-ldp-n10"}
#: Two different views composed together (the heterogeneous paths of every composer).
MIXED = ("fmt20-ldp-n10", "trivial-ldp")

DELTA = 1e-6
EPS = 1.0
REL = 1e-9
COMPOSERS = composers.ids()
_views: dict = {}


def _view(name):
    if name not in _views:
        bound, proto = VIEWS[name]
        _views[name] = get(bound).views(proto, derive_pld=True)
    return _views[name]


def _parts(name, T):
    """``[(view, T)]``, or for the mixed set T rounds of the first view and 2 of the second."""
    if name == "mixed":
        return [(_view(MIXED[0]), T), (_view(MIXED[1]), 2)]
    return [(_view(name), T)]


def _accepted(c, parts):
    why = c.accepts(parts)
    if why is not None:
        pytest.skip(f"{c.name} does not accept these parts: {why}")


def _eps(c, parts, delta=DELTA):
    o = c.epsilon(parts, delta)
    assert o.kind == "upper" and isinstance(o.value, float) and not math.isnan(o.value)
    return o


def _dlt(c, parts, eps=EPS):
    o = c.delta(parts, eps)
    assert o.kind == "upper" and isinstance(o.value, float) and 0.0 <= o.value <= 1.0
    return o


def test_every_composer_declares_its_single_round():
    missing = set(COMPOSERS) - set(ONE_ROUND)
    assert not missing, f"say in ONE_ROUND what these composers give at T = 1: {missing}"


def _pair_delta(pld, eps):
    """δ(ε) of one round of the view's pair, summed here (both directions unless symmetric;
    the pair's unlisted tail counted as infinite loss)."""
    lp, lq, tail = pld.atoms()
    p, q = np.exp(np.asarray(lp, dtype=float)), np.exp(np.asarray(lq, dtype=float))
    one = lambda a, b: float(np.sum(np.maximum(a - math.exp(eps) * b, 0.0))) + float(tail)
    return one(p, q) if pld.symmetric else max(one(p, q), one(q, p))


def _pair_epsilon(pld, delta):
    """Smallest ε (to 1e-12) with ``_pair_delta`` ≤ δ, by bisection."""
    lo, hi = 0.0, 1.0
    while _pair_delta(pld, hi) > delta:
        lo, hi = hi, 2.0 * hi
    if _pair_delta(pld, 0.0) <= delta:
        return 0.0
    while hi - lo > 1e-12:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _pair_delta(pld, mid) <= delta else (mid, hi)
    return hi


@pytest.mark.parametrize("name", list(VIEWS))
@pytest.mark.parametrize("cname", COMPOSERS)
def test_one_round_is_the_single_round(cname, name):
    c, parts = composers.get(cname), _parts(name, 1)
    _accepted(c, parts)
    v = parts[0][0]
    o_e, o_d = _eps(c, parts), _dlt(c, parts)
    how = ONE_ROUND[cname]
    if how == "pair":
        ref_e, ref_d = _pair_epsilon(v.pld, DELTA), _pair_delta(v.pld, EPS)
        # Spread onto the grid, a loss moves up by at most one step s: δ(ε) ≤ e^s δ_pair(ε − s),
        # so ε(δ) ≤ s + ε_pair(δ e^-s).
        s_e, s_d = o_e.details["discretization"], o_d.details["discretization"]
        assert ref_e * (1 - REL) - 1e-12 <= o_e.value, (o_e.value, ref_e)
        assert o_e.value <= s_e + _pair_epsilon(v.pld, DELTA * math.exp(-s_e)) + 1e-9, (o_e.value, ref_e, s_e)
        assert ref_d * (1 - REL) - 1e-15 <= o_d.value, (o_d.value, ref_d)
        assert o_d.value <= math.exp(s_d) * _pair_delta(v.pld, EPS - s_d) * (1 + 1e-6) + comp.PLD_ABS_SLACK
        return
    if v.dp is None:
        pytest.skip("the view has no single-round (epsilon, delta) curve to compare with")
    ref_e, ref_d = float(v.dp.epsilon_of(DELTA)), float(v.dp.delta_of(EPS))
    if how == "rdp" and name not in SAME_PAIR:
        pytest.skip("its RDP and (epsilon, delta) views are not one pair: nothing to compare")
    assert o_e.value >= ref_e * (1 - REL) - 1e-12, (o_e.value, ref_e)
    assert o_d.value >= ref_d * (1 - REL) - 1e-15, (o_d.value, ref_d)
    if how == "dp":
        assert o_e.value <= ref_e * (1 + REL) + 1e-12
        assert o_d.value <= ref_d * (1 + REL) + 1e-15


@pytest.mark.parametrize("name", list(VIEWS) + ["mixed"])
@pytest.mark.parametrize("cname", COMPOSERS)
def test_monotone_in_rounds(cname, name):
    c = composers.get(cname)
    es, ds = [], []
    for T in (1, 2, 5):
        parts = _parts(name, T)
        if c.accepts(parts) is None:
            es.append(_eps(c, parts).value)
            ds.append(_dlt(c, parts).value)
    if len(es) < 2:
        pytest.skip(f"{cname} accepts fewer than two of T = 1, 2, 5 here")
    for a, b in zip(es, es[1:]):
        assert b >= a * (1 - REL) - 1e-12, es
    for a, b in zip(ds, ds[1:]):
        assert b >= a * (1 - REL) - 1e-15, ds


@pytest.mark.parametrize("name", list(VIEWS) + ["mixed"])
@pytest.mark.parametrize("cname", COMPOSERS)
def test_monotone_in_delta_and_epsilon(cname, name):
    c, parts = composers.get(cname), _parts(name, 3)
    _accepted(c, parts)
    es = [_eps(c, parts, d).value for d in (1e-9, 1e-6, 1e-3)]
    ds = [_dlt(c, parts, e).value for e in (0.25, 1.0, 4.0)]
    assert es[0] >= es[1] * (1 - REL) - 1e-12 and es[1] >= es[2] * (1 - REL) - 1e-12, es
    assert ds[0] >= ds[1] * (1 - REL) - 1e-15 and ds[1] >= ds[2] * (1 - REL) - 1e-15, ds


@pytest.mark.parametrize("name", list(VIEWS) + ["mixed"])
@pytest.mark.parametrize("cname", COMPOSERS)
@pytest.mark.parametrize("T", [2, 5])
def test_delta_of_its_epsilon_is_within_delta(cname, name, T):
    c, parts = composers.get(cname), _parts(name, T)
    _accepted(c, parts)
    e = _eps(c, parts).value
    if not math.isfinite(e):
        pytest.skip("no finite epsilon at this delta")
    assert _dlt(c, parts, e).value <= DELTA * (1 + REL) + 1e-15


@pytest.mark.parametrize("name", list(VIEWS))
@pytest.mark.parametrize("cname", COMPOSERS)
def test_split_rounds_equal_one_entry(cname, name):
    """T1 + T2 rounds of the same view listed twice are T1 + T2 rounds: the same answer."""
    c, v = composers.get(cname), _view(name)
    one, split = [(v, 5)], [(v, 2), (v, 3)]
    assert c.accepts(split) == c.accepts(one)
    _accepted(c, one)
    assert _eps(c, split).value == _eps(c, one).value
    assert _dlt(c, split).value == _dlt(c, one).value
    # ... also next to another entry, in any order.
    w = _view(MIXED[1] if name != MIXED[1] else MIXED[0])
    mixed_one, mixed_split = [(v, 5), (w, 1)], [(v, 2), (w, 1), (v, 3)]
    assert c.accepts(mixed_split) == c.accepts(mixed_one)
    if c.accepts(mixed_one) is None:
        try:
            a, b = _eps(c, mixed_split).value, _eps(c, mixed_one).value
        except NotApplicableError as exc:       # e.g. dp_accounting not installed
            pytest.skip(str(exc))
        assert a == b
