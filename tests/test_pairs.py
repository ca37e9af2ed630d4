"""The ``Pair`` protocol (``shuffledp.pairs``): every pair implements it, the adapter gives
the pair's own numbers, and the pairs' δ(ε) sit at or above the exact law written out
independently (tests/oracle.py, mpmath) at small n.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

import shuffledp as sd
from shuffledp.pairs import ChargedPair, Pair, PldPair, RdpPair, capabilities
from shuffledp.pairs import addremove as ar
from shuffledp.pairs import clone as cp
from shuffledp.pairs import hidden as hd
from shuffledp.pairs.adapter import pure_epsilon_of, views_of
from shuffledp.pairs.blanket import BlanketPair
from shuffledp.pairs.trimmed import TrimmedPair

import sys
import pathlib

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import oracle  # noqa: E402

#: name -> (factory, capabilities expected)
PAIRS = {
    "fmt20": (lambda: cp.fmt20_pair(1.0, 40), ("rdp", "pld")),
    "fmt23": (lambda: cp.fmt23_pair(2.0, 40), ("rdp", "pld")),
    "specific": (lambda: cp.specific_pair(sd.Randomizer(oracle.rr_matrix(1.5, 3)), 40),
                 ("rdp", "pld")),
    "hidden-checkin": (lambda: hd.hidden_pair(40, math.exp(-1.0), log_odds=1.0,
                                              kappa=math.exp(-1.0), rate=0.4),
                       ("rdp", "pld", "charge")),
    "hidden-wor": (lambda: hd.hidden_pair(40, 0.5, log_odds=1.2, kappa=0.5, size=10),
                   ("rdp", "pld", "charge")),
    "hidden-trimmed": (lambda: hd.hidden_pair(40, 0.3, log_odds=1.3, kappa=0.35, rate=0.5,
                                              c_gamma=0.99), ("rdp", "pld", "charge")),
    "addremove": (lambda: ar.addremove_pair(40, 0.3, 1.0), ("pld",)),
    "trimmed": (lambda: TrimmedPair.at(20, 2.0, 2.0), ("rdp", "pld", "charge")),
    "blanket": (lambda: BlanketPair(sd.RandomizedResponse(1.0, 3), 200), ("rdp", "pld")),
    "blanket-checkin": (lambda: BlanketPair(sd.RandomizedResponse(1.0, 3), 200, 0.5),
                        ("rdp", "pld")),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_every_pair_satisfies_the_protocol(name):
    make, caps = PAIRS[name]
    pair = make()
    assert isinstance(pair, Pair)
    assert capabilities(pair) == caps
    assert isinstance(pair, RdpPair) == ("rdp" in caps)
    assert isinstance(pair, PldPair) == ("pld" in caps)
    assert isinstance(pair, ChargedPair) == ("charge" in caps)


def test_the_protocol_check_can_fail():
    class NoEpsilon:
        def delta(self, eps):
            return 0.0

        def eps_hi(self):
            return 1.0

    assert not isinstance(NoEpsilon(), Pair)
    assert capabilities(NoEpsilon()) == ()


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_the_adapter_gives_the_pairs_own_numbers(name):
    pair = PAIRS[name][0]()
    v = views_of(pair)
    assert v.kind == "upper" and v.pair is pair
    for eps in (0.0, 0.05, 0.3, 1.0):
        assert v.dp.delta_of(eps) == pair.delta(eps)
    for delta in (1e-2, 1e-5):
        assert v.dp.epsilon_of(delta) == pair.epsilon(delta)
    assert v.dp.eps_hi() == pair.eps_hi()
    assert v.dp.pure_epsilon() == pure_epsilon_of(pair)
    if isinstance(pair, RdpPair):
        orders = np.array([2, 3, 8, 32])
        assert np.array_equal(v.rdp.curve(orders), pair.rdp(orders))
        assert v.rdp.max_order == pair.max_order()
    else:
        assert v.rdp is None
    lp, lq, tail = pair.pld_atoms()
    alp, alq, atail = v.pld.atoms()
    assert np.array_equal(lp, alp) and np.array_equal(lq, alq) and tail == atail
    assert v.pld.symmetric == pair.pld_symmetric and not v.pld.is_instance
    for T in (1, 5):
        assert v.charge(T) == (pair.charge(T) if isinstance(pair, ChargedPair) else 0.0)


def test_the_adapter_refuses_an_unknown_kind():
    with pytest.raises(ValueError, match="kind must be one of"):
        views_of(cp.fmt20_pair(1.0, 10), kind="uper")
    assert views_of(cp.krr_marginal_pair(1.0, 3, 10), kind="lower").pld.is_instance


def test_bounds_answer_with_their_pairs_numbers():
    """The pair-backed bounds' single-round views are their pairs' protocol methods."""
    proto = sd.Shuffle(sd.LDP(1.0), n=300)
    b = sd.bounds.get("fmt20")
    pair = cp.fmt20_pair(1.0, 300)
    assert b.delta_one(proto, 0.2) == pair.delta(0.2) > 0.0
    assert b.epsilon_one(proto, 1e-6) == pair.epsilon(1e-6) > 0.0
    assert np.array_equal(b.rdp(proto, [2, 5]), pair.rdp([2, 5]))
    assert b.max_order(proto) == pair.max_order() and b.pure_epsilon(proto) == pure_epsilon_of(pair)
    sp_proto = sd.Shuffle(sd.LDP(1.0), n=60, sampling=sd.CheckIn(0.3))
    hb = sd.bounds.get("fmt20-sampled")
    hp = hd.hidden_pair(60, math.exp(-1.0), log_odds=1.0, kappa=math.exp(-1.0), rate=0.3)
    assert hb.delta_one(sp_proto, 0.2) == hp.delta(0.2) > 0.0
    assert hb.epsilon_one(sp_proto, 1e-6) == hp.epsilon(1e-6)
    ab = sd.bounds.get("fmt20-addremove")
    ap = ar.addremove_pair(60, 0.3, 1.0)
    assert ab.delta_one(sp_proto, 0.2) == ap.delta(0.2) > 0.0
    assert ab.pure_epsilon(sp_proto) is None and pure_epsilon_of(ap) is None
    bl_proto = sd.Shuffle(sd.RandomizedResponse(1.0, 3), n=200, sampling=sd.CheckIn(0.5))
    bb = sd.bounds.get("blanket")
    bp = BlanketPair.of(bl_proto)
    assert bp == BlanketPair(sd.RandomizedResponse(1.0, 3), 200, 0.5)
    assert bb.delta_one(bl_proto, 0.2) == bp.delta(0.2) > 0.0
    assert bb.epsilon_one(bl_proto, 1e-6) == bp.epsilon(1e-6) > 0.0
    assert np.array_equal(bb.rdp(bl_proto, [2, 5]), bp.rdp([2, 5]))


@pytest.mark.parametrize("n,e0", [(5, 1.0), (7, 2.5)])
def test_clone_pair_delta_is_at_or_above_the_exact_law(n, e0):
    pair = cp.fmt20_pair(e0, n)
    P, Q = oracle.clone_pair_law(n, mp.e ** (-mp.mpf(e0)), mp.e ** e0 / (1 + mp.e ** e0))
    for eps in (0.0, 0.1, 0.5, 0.9 * e0):
        exact = float(max(oracle.hockey(P, Q, eps), oracle.hockey(Q, P, eps)))
        got = pair.delta(eps)
        assert exact <= got <= exact * (1 + 1e-9) + 1e-15, (eps, got, exact)
        # ε(δ) is certified: δ at the returned ε is at most δ (by the exact law too)
    e = pair.epsilon(1e-2)
    assert float(oracle.hockey(P, Q, e)) <= 1e-2 * (1 + 1e-12)


@pytest.mark.parametrize("n,gamma", [(4, 0.5), (6, 0.25)])
def test_hidden_pair_delta_is_at_or_above_the_exact_law(n, gamma):
    e0 = 1.0
    p = math.exp(-e0)
    hp = hd.hidden_pair(n, p, log_odds=e0, kappa=p, rate=gamma)
    P, Q, _ = oracle.checkin_pair_law(n, mp.e ** (-mp.mpf(e0)), mp.e ** e0 / (1 + mp.e ** e0),
                                      gamma)
    for eps in (0.0, 0.1, 0.4, 0.8):
        exact = float(max(oracle.hockey(P, Q, eps), oracle.hockey(Q, P, eps)))
        got = hp.delta(eps)
        assert exact <= got <= exact * (1 + 1e-9) + 1e-15, (eps, got, exact)


def test_hidden_pair_charges_only_a_trimmed_victim():
    assert PAIRS["hidden-checkin"][0]().charge(5) == 0.0
    hp = PAIRS["hidden-trimmed"][0]()
    assert hp.charge(3) == pytest.approx(1 - 0.99 ** 3, rel=1e-12)


def test_trimmed_pair_charges_its_left_out_mass():
    tp = TrimmedPair.at(20, 2.0, 2.0)
    assert tp.charge(1) == tp.n * tp.delta0 > 0.0
    c = 1 - mp.mpf(tp.n) * mp.mpf(tp.delta0)
    for T in (2, 7):
        assert tp.charge(T) == pytest.approx(float(1 - c ** T), rel=1e-12)
    assert tp.delta(0.3) == tp.clone.delta(0.3)
    assert TrimmedPair.at(10**6, 0.3, 0.1) is None         # n·δ0 ≥ 1: no pair
