"""The check-in pairs' δ(ε) reuses, along one root search, the slices' probabilities at
thresholds it has already met (``pairs.clone.hockey.ThresholdMemo``, session 19): every
value is the same float as a fresh evaluation, over the ε a real search asks."""

import numpy as np
import pytest

from shuffledp.pairs import hidden as sp
from shuffledp.pairs.clone.hockey import (
    ThresholdMemo,
    _threshold_terms,
    conditional_hockey,
)
from shuffledp.pairs.trimmed import trimmed_hidden


def _search_eps(monkeypatch, hp, delta, budget, ranking):
    asked = []
    real = sp.hidden_delta

    def counted(h, e, b=None, r=False):
        asked.append(e)
        return real(h, e, b, r)

    monkeypatch.setattr(sp, "hidden_delta", counted)
    sp.hidden_epsilon(hp, delta, budget, ranking)
    monkeypatch.setattr(sp, "hidden_delta", real)
    return asked


@pytest.mark.parametrize("n,sigma,rate,eps0,delta,budget,ranking", [
    (10**3, 2.0, 0.1, 2.5, 1e-5, 80_000, True),
    (10**3, 2.0, 0.1, 2.5, 1e-5, None, False),
    (10**7, 2.0, 0.1, 4.4, 1e-12, 80_000, sp.SAMPLED),
    (10**7, 2.0, 0.1, 4.4, 1e-12, None, False),        # runs of consecutive c: the walks
    (2000, 0.6, 0.0068, 9.0, 1e-9, None, False),
])
def test_memo_gives_the_fresh_floats_along_a_search(monkeypatch, n, sigma, rate, eps0, delta,
                                                    budget, ranking):
    hp, _ = trimmed_hidden(n, sigma, eps0, rate, None)
    asked = _search_eps(monkeypatch, hp, delta, budget, ranking)
    assert len(asked) >= 4
    cl = sp.hidden_cells(hp, budget, ranking)
    memos = {}
    for e in asked + asked[::-1]:                   # again backwards: every ε a hit
        h, err = sp._hockey_runs(cl.c, cl.alpha, cl.beta, cl.gamma, e, memos)
        h0, e0 = sp._hockey_runs(cl.c, cl.alpha, cl.beta, cl.gamma, e)
        assert np.array_equal(h, h0) and np.array_equal(err, e0)
        assert sp.hidden_delta(hp, e, budget, ranking) == _fresh_delta(hp, cl, e)
    assert sum(m.hits for m in memos.values()) >= len(asked)


def _fresh_delta(hp, cl, e):
    # hidden_delta's sum on values evaluated afresh (no memo)
    from shuffledp.numerics import round_up
    from shuffledp.pairs.clone.hockey import _ABS_SLACK, slice0_hockey
    h, err = sp._hockey_runs(cl.c, cl.alpha, cl.beta, cl.gamma, float(e))
    total = float(np.dot(cl.w, h + err))
    if cl.worst > 0:
        b = hp.bias
        hw, ew = slice0_hockey(b.alpha, b.beta, b.gamma, float(e))
        total += cl.worst * (hw + ew)
    return float(round_up(total * (1.0 + 1e-12) + _ABS_SLACK))


def test_memo_keys_on_the_thresholds_and_the_live_slices():
    c = np.arange(3000, 3400, dtype=np.int64)
    alpha = np.full(c.size, 0.6)
    beta = np.full(c.size, 0.4)
    gamma = np.full(c.size, 0.2)
    memo = ThresholdMemo()
    seen = set()
    grid = np.linspace(0.0, 0.4, 40)                # log(0.6/0.4) = 0.405: all live
    for eps in np.concatenate([grid, grid[:10] * (1.0 + 1e-13)]):
        h, e = conditional_hockey(c, alpha, eps, True, beta=beta, gamma=gamma, memo=memo)
        h0, e0 = conditional_hockey(c, alpha, eps, True, beta=beta, gamma=gamma)
        assert np.array_equal(h, h0) and np.array_equal(e, e0)
        seen.add(h.tobytes())
    assert len(seen) >= 35 and memo.hits >= 10    # distinct ε: distinct values
    # mixed live/dead slices (κ ≤ 0 on part): the live set is part of the key
    al2 = np.where(c % 2 == 0, 0.6, 0.51)
    be2 = 1.0 - al2
    ga2 = al2 - be2
    for eps in (0.03, 0.1, 0.03, 0.1):
        h, e = conditional_hockey(c, al2, eps, True, beta=be2, gamma=ga2, memo=memo)
        h0, e0 = conditional_hockey(c, al2, eps, True, beta=be2, gamma=ga2)
        assert np.array_equal(h, h0) and np.array_equal(e, e0)
    # a threshold one off gives other terms (the key must be the whole m); kept read-only
    m = np.full(c.size, 1700, dtype=np.int64)
    a = memo.terms(c, m)
    b = _threshold_terms(c, m + 1)
    assert not np.array_equal(a[3], b[3])
    assert all(not x.flags.writeable for x in a)
    assert all(np.array_equal(x, y) for x, y in zip(memo.terms(c, m), _threshold_terms(c, m)))
