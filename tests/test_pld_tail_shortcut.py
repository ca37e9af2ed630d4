"""The PLD route's ∞ from the charged tails alone is found before any grid is built, and
it is the ∞ the grid would find: 1 − (1 − tail)^T at loss +∞ bounds δ(ε) from below."""

import math

import numpy as np

from shuffledp.compose import composition as C


def _pair():
    # binary randomized response at eps0 = 1 with a small truncated tail
    a = math.e / (1 + math.e)
    lp = np.log(np.array([a, 1 - a]))
    lq = np.log(np.array([1 - a, a]))
    return lp, lq


def test_tail_shortcut_agrees_with_the_grid_on_both_sides_of_the_threshold():
    lp, lq = _pair()
    tail, T = 1e-9, 1000
    thr = -math.expm1(T * math.log1p(-tail))          # 1 - (1 - tail)^T ~ 1e-6
    orig = C._tails_alone_exceed
    for d in (0.5 * thr, 0.999 * thr, 1.001 * thr, 2.0 * thr):
        try:
            C._tails_alone_exceed = lambda *a: False
            slow = C.pld_epsilon(lp, lq, T, d, extra_delta=tail, symmetric=True)[0]
        finally:
            C._tails_alone_exceed = orig
        fast, det = C.pld_epsilon(lp, lq, T, d, extra_delta=tail, symmetric=True)
        assert fast == slow
        assert math.isinf(fast) == (d < thr)
        if d < thr:
            assert "no grid was built" in det["reason"]


def test_no_tail_never_shortcuts():
    assert not C._tails_alone_exceed(0.0, 10**6, 1e-300)
    assert C._tails_alone_exceed(1e-17, 10**6, 1e-12)
    assert not C._tails_alone_exceed(1e-19, 10**6, 1e-12)


def test_clone_pair_tail_floor_is_below_the_atoms_tail():
    import shuffledp as sd
    from shuffledp.bounds import get
    from shuffledp.pairs.clone import pair_pld_atoms, pair_pld_tail_floor
    for bid, proto in (("fmt20", sd.Shuffle(sd.LDP(1.0), n=10**5)),
                       ("fmt20", sd.Shuffle(sd.LDP(0.3), n=2000)),
                       ("fmt23", sd.Shuffle(sd.RandomizedResponse(4.0, 2), n=10**7))):
        pair = get(bid).pair(proto)
        tf = pair_pld_tail_floor(pair)
        _, _, tail = pair_pld_atoms(pair)
        assert 0.0 < tf <= tail


def test_pld_floor_skips_a_route_whose_tails_alone_exceed_delta():
    """4-RR, n = 1e6, T = 1e6, δ = 1e-12: FMT23's PLD atoms charge ~9.5e-18 per round, so
    its PLD route is ∞; the composer's floor says so before the atoms are built (and its
    RDP route's floor is above the blanket's answer): fmt23 is skipped, the answer is the
    one computed without the PLD floor, and fmt23 named gives ∞ by PLD."""
    import shuffledp as sd
    from shuffledp.compose.pld import PldComposer
    proto = sd.Shuffle(sd.RandomizedResponse(1.0, 4), n=10**6)
    r = sd.epsilon(proto, delta=1e-12, rounds=10**6)
    assert "fmt23" not in {c.bound for c in r.candidates}
    assert dict(r.not_applicable)["fmt23"].startswith("skipped: cannot beat")
    named = sd.epsilon(proto, delta=1e-12, rounds=10**6, bound="fmt23", composition="pld")
    assert math.isinf(named.epsilon)
    orig = PldComposer.floor
    PldComposer.floor = lambda self, *a, **k: None
    try:
        full = sd.epsilon(proto, delta=1e-12, rounds=10**6)
    finally:
        PldComposer.floor = orig
    assert full.epsilon == r.epsilon
    assert math.isinf({c.bound: c for c in full.candidates}["fmt23"].epsilon)
