"""The row form of the certified binomial tail series (``numerics.binomial._tail_series_many``,
fewer entries than its column form takes) estimates the cuts of every row of a block size in
one ``_row_cuts`` call before its passes (session 20, ck2; before, one call per pass, and at
blocks of 2^17 terms and more a pass is one row). Each row's cut is its own (the estimate
treats columns one by one, and a pass settles only its own rows), so the floats are those of
the pre-session-16 series kept verbatim in test_hidden_same_floats.py, with proven cuts and
with unproven ones redone in full; exact comparisons throughout."""

import numpy as np
import pytest

from shuffledp.numerics import binomial as nb

from test_hidden_same_floats import _ref_tail_series_many
from test_series_columns import _checkin_like


def _same(got, ref):
    return np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])


@pytest.mark.parametrize("rest", [None, 1e-3, 1e-15])
def test_row_cuts_of_many_passes_same_floats(rest, monkeypatch):
    """Passes of two rows at blocks of 4096 terms and one row from 8192 on (the cache budget
    shrunk), so the cuts estimated together are read by several passes each: the same
    floats, where the proofs hold and where they fail."""
    edge, n, p, down = _checkin_like(12, p=0.9, n0=3e8)
    assert edge.size < nb._COLUMN_MIN
    ref = _ref_tail_series_many(edge, n, p, down)
    monkeypatch.setattr(nb, "_SERIES_ELEMENTS", 2 * 4096)
    if rest is not None:
        monkeypatch.setattr(nb, "_CUT_REST", rest)
    estimates, proofs = [], []
    real_rows, real_proof = nb._row_cuts, nb._cut_proof

    def rows(*args):
        out = real_rows(*args)
        estimates.append((args[0].size, out[1].size))
        return out

    def proof(*args):
        out = real_proof(*args)
        proofs.append((out[0].size, int(np.count_nonzero(out[0]))))
        return out

    monkeypatch.setattr(nb, "_row_cuts", rows)
    monkeypatch.setattr(nb, "_cut_proof", proof)
    assert _same(nb._tail_series_many(edge, n, p, down), ref)
    # one estimate per block size, over several rows; the cuts proven pass by pass
    assert any(size > 1 and cuts > 1 for size, cuts in estimates)
    assert len(proofs) > len(estimates)
    if rest is None:
        assert sum(k for _, k in proofs) >= edge.size // 3
    else:
        assert sum(m - k for m, k in proofs) > 0


def test_batched_cuts_match_one_row_at_a_time():
    """Each row's cut estimate is the one it gets alone: ``_row_cuts`` over all rows against
    one call per row (the previous passes of one row)."""
    edge, n, p, down = _checkin_like(8, p=0.9, n0=3e8)
    q = 1.0 - p
    block = 1 << 17
    a0 = edge - 3.0 * block                         # a later block, its rows still falling
    b0 = n - edge + 1.0 + 3.0 * block
    num, den = np.full(edge.size, q), np.full(edge.size, p)
    ts = np.geomspace(1e-30, 1e-12, edge.size)
    total = np.full(edge.size, 1e3)
    may = np.ones(edge.size, dtype=bool)
    may[::5] = False
    lens, cut = nb._row_cuts(a0, b0, num, den, ts, block, total, may)
    assert cut.size > 0
    for i in range(edge.size):
        s = slice(i, i + 1)
        li, ci = nb._row_cuts(a0[s], b0[s], num[s], den[s], ts[s], block, total[s], may[s])
        assert li[0] == lens[i]
        assert (ci.size == 1) == (i in cut.tolist())
