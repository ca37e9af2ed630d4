"""The certified binomial tail series with its entries side by side (session 20,
``numerics.binomial._column_pass``, and its last blocks cut where the remaining terms are
proven not to change the floats): every float is the one the row form computes. The
reference is the pre-session-16 series kept verbatim in test_hidden_same_floats.py (its
blocks, products, pairwise sums and stop tests); every comparison is exact, because a
changed last bit of a certified distribution function moved answers both ways (see that
file's docstring). A sabotaged emulation (the block's terms summed left to right) and a
column pass one ulp off are caught."""

import math

import numpy as np
import pytest

from shuffledp.numerics import binomial as nb

from test_hidden_same_floats import _ref_tail_series_many


def _entries(seed, count, n_lo=3.0, n_hi=8.0, z_lo=-14.0, z_hi=3.0, p=None):
    rng = np.random.default_rng(seed)
    p = float(10.0 ** rng.uniform(-3.0, math.log10(0.99))) if p is None else p
    n = np.floor(10.0 ** rng.uniform(n_lo, n_hi, count))
    sd = np.sqrt(n * p * (1.0 - p))
    k = np.clip(np.floor(n * p + rng.uniform(z_lo, z_hi, count) * sd), 0.0, n - 1.0)
    down = k <= n * p
    edge = np.where(down, k, k + 1.0)
    return edge, n, p, down


def _same(got, ref):
    return np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])


@pytest.mark.parametrize("seed", range(4))
def test_columns_same_floats_many_entries(seed):
    """Enough entries for the column form (both tails' sides, so the ratio factors differ
    between entries; short series that end inside a block take the row form beside it)."""
    edge, n, p, down = _entries(seed, 260)
    assert np.count_nonzero(down) and np.count_nonzero(~down)
    assert _same(nb._tail_series_many(edge, n, p, down), _ref_tail_series_many(edge, n, p, down))


def test_columns_same_floats_one_n_checkin_edges():
    """The check-in cells' case: one p, many n of a block of rows, six thresholds each from
    −12 to 0 standard deviations, every entry below the mean (the factors are scalars)."""
    p = 0.669
    n = np.repeat(1.5e7 + 60.0 * np.arange(40), 6)
    sd = np.sqrt(n * p * (1.0 - p))
    z = np.tile([-12.0, -4.0, -2.5, -1.5, -0.75, 0.0], 40)
    edge = np.floor(n * p + z * sd)
    down = np.ones(edge.size, dtype=bool)
    assert edge.size >= nb._COLUMN_MIN
    assert _same(nb._tail_series_many(edge, n, p, down), _ref_tail_series_many(edge, n, p, down))


@pytest.mark.parametrize("seed", range(3))
def test_columns_forced_on_few_entries(seed, monkeypatch):
    """The column form on every pass, down to one entry (edges near 0 too)."""
    monkeypatch.setattr(nb, "_COLUMN_MIN", 1)
    edge, n, p, down = _entries(10 + seed, 30, n_lo=3.0, n_hi=7.0)
    edge = np.concatenate([edge, [0.0, 3.0, 4095.0, 4096.0, 5000.0]])
    n = np.concatenate([n, [math.ceil(2e4 / p)] * 5])         # the edges below the mean
    down = np.concatenate([down, [True] * 5])
    assert _same(nb._tail_series_many(edge, n, p, down), _ref_tail_series_many(edge, n, p, down))
    for i in range(3):
        assert _same(nb._tail_series_many(edge[i:i + 1], n[i], p, down[i:i + 1]),
                     _ref_tail_series_many(edge[i:i + 1], n[i], p, down[i:i + 1]))


@pytest.mark.parametrize("n", [1, 5, 7, 8, 9, 64, 71, 120, 127, 128, 129, 300, 4095, 8191])
def test_pairwise_emulation_is_numpys_sum(n):
    """The leaves and tree of ``_column_pass`` give numpy's own row sums, bit for bit, on
    terms spread over 40 orders of magnitude (where the summation order shows)."""
    rng = np.random.default_rng(n)
    x = rng.random((n, 37)) * np.exp(rng.normal(0.0, 20.0, (n, 37)))
    ref = np.ascontiguousarray(x.T).sum(axis=1)
    if n <= nb._LEAF:
        got = nb._leaf_sums(x)
    else:
        got = nb._pairwise_join(n, iter([nb._leaf_sums(x[s:s + m])
                                         for s, m in nb._pairwise_leaves(n)]))
    assert np.array_equal(got, ref)
    # left to right instead (a sabotaged emulation) differs on such terms
    if n >= 64:
        assert not np.array_equal(np.add.reduce(x, axis=0), ref)


def test_sabotaged_column_pass_is_caught(monkeypatch):
    """A column pass whose block sums are one ulp high does not give the pinned floats
    (the comparison sees the last bit)."""
    edge, n, p, down = _entries(3, 200, n_lo=6.0, n_hi=7.0, z_lo=-3.0, z_hi=0.0, p=0.3)
    ref = _ref_tail_series_many(edge, n, p, down)
    real = nb._column_pass

    def one_ulp_high(*args):
        part, t_next, r_last, redo = real(*args)
        return part * (1.0 + 2.0 ** -52), t_next, r_last, redo

    monkeypatch.setattr(nb, "_column_pass", one_ulp_high)
    assert not _same(nb._tail_series_many(edge, n, p, down), ref)


@pytest.mark.parametrize("n,rate,eps0,budget", [(150_000_000, 0.331, 6.8, 200_000),
                                                (10**9, 0.1, 5.0, 1_000_000)])
def test_checkin_cells_merged_series_same_floats(n, rate, eps0, budget, monkeypatch):
    """The check-in cells with the two bounds' certified starts summed in one column-form
    call, against each bound's own row-form series (the column form and the merge turned
    off): the same cells, bit for bit."""
    from shuffledp.pairs import hidden as sp

    p = math.exp(-eps0) * 0.999
    hp = sp.hidden_pair(n, p, log_odds=eps0, kappa=math.exp(-eps0), rate=rate, c_gamma=0.999)
    calls = _count_column_passes(monkeypatch)
    a = sp._checkin_binned(hp, budget, False)
    assert calls and max(calls) >= 2 * nb._COLUMN_MIN        # the merged column form ran
    monkeypatch.setattr(nb, "_COLUMN_MIN", 10**9)
    b = sp._checkin_binned(hp, budget, False)
    for f in ("c", "alpha", "beta", "gamma", "w"):
        assert np.array_equal(getattr(a, f), getattr(b, f))
    assert a.zero == b.zero and a.worst == b.worst


def _checkin_like(count_blocks=60, p=0.669, n0=1.5e7):
    n = np.repeat(n0 + 60.0 * np.arange(count_blocks), 6)
    sd = np.sqrt(n * p * (1.0 - p))
    z = np.tile([-12.0, -4.0, -2.5, -1.5, -0.75, 0.0], count_blocks)
    edge = np.floor(n * p + z * sd)
    return edge, n, p, np.ones(edge.size, dtype=bool)


def _count_column_passes(monkeypatch) -> list:
    """Record the width (entries) of every ``_column_pass`` call into the returned list."""
    calls = []
    real = nb._column_pass

    def counted(*args):
        calls.append(args[0].size)
        return real(*args)

    monkeypatch.setattr(nb, "_column_pass", counted)
    return calls


def _count_proofs(monkeypatch) -> list:
    """Record (cuts tried, cuts proven) of every ``_cut_proof`` call into the returned list."""
    proofs = []
    real = nb._cut_proof

    def counted(*args):
        out = real(*args)
        proofs.append((out[0].size, int(np.count_nonzero(out[0]))))
        return out

    monkeypatch.setattr(nb, "_cut_proof", counted)
    return proofs


def test_cut_blocks_are_proven_and_same_floats(monkeypatch):
    """Last blocks cut at the estimated leaf (most of the check-in entries), at a cut far
    too early (every proof fails and the block is redone in the row form) and at one a
    little early (some proofs fail): always the row form's floats."""
    edge, n, p, down = _checkin_like()
    ref = _ref_tail_series_many(edge, n, p, down)
    proofs = _count_proofs(monkeypatch)
    assert _same(nb._tail_series_many(edge, n, p, down), ref)
    assert sum(k for _, k in proofs) > edge.size // 2          # the cuts were taken
    for rest in (1e-3, 1e-15):
        proofs.clear()
        monkeypatch.setattr(nb, "_CUT_REST", rest)
        assert _same(nb._tail_series_many(edge, n, p, down), ref)
        assert sum(m - k for m, k in proofs) > 0               # the proof said no


def test_unproven_cuts_would_change_the_floats(monkeypatch):
    """The proof is what keeps the floats: cuts far too early taken without it (every
    cut accepted) give other sums."""
    edge, n, p, down = _checkin_like(40)
    ref = _ref_tail_series_many(edge, n, p, down)
    monkeypatch.setattr(nb, "_CUT_REST", 1e-3)
    real = nb._cut_proof

    def accept_all(*args):
        ok, t_last, r_last = real(*args)
        return np.ones_like(ok), np.where(ok, t_last, 1e-300), r_last

    monkeypatch.setattr(nb, "_cut_proof", accept_all)
    assert not _same(nb._tail_series_many(edge, n, p, down), ref)


@pytest.mark.parametrize("rest", [None, 1e-3, 1e-15])
def test_row_form_cuts_same_floats(rest, monkeypatch):
    """Fewer entries than the column form takes (the row form, each chain over its cut
    prefix): proven cuts, and unproven ones redone over the whole row; the same floats."""
    edge, n, p, down = _checkin_like(10, p=0.9, n0=3e8)
    assert edge.size < nb._COLUMN_MIN
    ref = _ref_tail_series_many(edge, n, p, down)
    if rest is not None:
        monkeypatch.setattr(nb, "_CUT_REST", rest)
    proofs = _count_proofs(monkeypatch)
    assert _same(nb._tail_series_many(edge, n, p, down), ref)
    assert proofs
    if rest is None:
        assert sum(k for _, k in proofs) >= edge.size // 3
    else:
        assert sum(m - k for m, k in proofs) > 0


def test_wide_passes_in_groups_same_floats(monkeypatch):
    """A pass wider than the leaf sums' cap runs in groups of columns: the same floats."""
    monkeypatch.setattr(nb, "_COLUMN_LEAF_SUMS", 4096)
    edge, n, p, down = _checkin_like(40)
    calls = _count_column_passes(monkeypatch)
    assert _same(nb._tail_series_many(edge, n, p, down), _ref_tail_series_many(edge, n, p, down))
    assert len(calls) > 4 and max(calls) < edge.size
