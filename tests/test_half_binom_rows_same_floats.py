"""``HalfBinomRuns.rows`` and ``_steps`` (the clone pairs' log-pmf runs) give the floats of
the code they replaced: a frozen copy of that code below, compared bit for bit on runs
inside and outside the support, full and ragged rows, every anchor spacing."""

from __future__ import annotations

import numpy as np
import pytest

from shuffledp.numerics import binomial as B


def _old_steps(self, c, x, nb):
    block = self.block
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.log((c[:, None] - x) / (x + 1.0))
    d = d.reshape(x.shape[0], nb, block)
    step = np.empty_like(d)
    step[..., 0] = 0.0
    step[..., 1:] = d[..., :-1]
    np.copyto(step, -np.inf, where=~np.isfinite(step))
    return step


def _old_rows(self, r0, r1, want_x=False):
    c, x0, counts = self.c[r0:r1], self.x0[r0:r1], self.counts[r0:r1]
    n = int(counts.sum()) if counts.size else 0
    if n == 0:
        return (np.zeros(0), np.zeros(0)) if want_x else np.zeros(0)
    block = self.block
    nb = int(-(-int(counts.max()) // block))
    width = nb * block
    col = np.arange(width, dtype=float)
    x = x0[:, None] + col[None, :]
    step = _old_steps(self, c, x, nb)
    with np.errstate(invalid="ignore"):
        cum = np.cumsum(step, axis=-1)
        out = (self.la[r0:r1, :nb, None] + cum).reshape(c.size, width)
    np.copyto(out, -np.inf, where=~((x >= 0) & (x <= c[:, None])))
    np.copyto(out, -np.inf, where=np.isnan(out))
    valid = col[None, :] < counts[:, None]
    vals = out[valid]
    if self.sub is not None:
        b = np.flatnonzero(self.bad[r0:r1])
        if b.size:
            starts = np.cumsum(counts) - counts
            cnt = counts[b]
            offs = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt)
            dst = np.repeat(starts[b], cnt) + offs
            src = np.repeat(self.sub_start[self.bad_rank[r0 + b]], cnt) + offs
            vals[dst] = self.sub[src]
    return (vals, x[valid]) if want_x else vals


def _cases():
    rng = np.random.default_rng(7)
    for block in (32, 8, 4, 2):
        for kind in ("inside", "edges", "full"):
            rows = 40
            c = np.floor(np.exp(rng.uniform(np.log(50.0), np.log(1e9), rows)))
            sd = 0.5 * np.sqrt(c)
            if kind == "edges":
                x0 = np.floor(rng.uniform(-60.0, 1.0, rows) + rng.integers(0, 2, rows) * c)
                counts = rng.integers(1, 200, rows)
            else:
                x0 = np.floor(0.5 * c + rng.normal(0.0, 3.0, rows) * sd)
                counts = (np.full(rows, 3 * block) if kind == "full"
                          else rng.integers(1, 300, rows))
            yield block, c, x0, counts.astype(np.int64)


@pytest.mark.parametrize("block,c,x0,counts", list(_cases()))
def test_rows_bit_for_bit(block, c, x0, counts):
    runs = B.HalfBinomRuns(c, x0, counts, block)
    for r0, r1 in [(0, c.size), (3, 17), (5, 6)]:
        new_v, new_x = runs.rows(r0, r1, want_x=True)
        old_v, old_x = _old_rows(runs, r0, r1, want_x=True)
        assert np.array_equal(new_v, old_v)
        assert np.array_equal(new_x, old_x)
        assert np.array_equal(runs.rows(r0, r1), old_v)
        # both grids, whichever ``rows`` picks for this size
        for form in (runs._rows_transposed, runs._rows_by_row):
            v, x = form(r0, r1, want_x=True)
            assert np.array_equal(v, old_v) and np.array_equal(x, old_x)


@pytest.mark.parametrize("block", [32, 8])
def test_large_groups_take_the_transposed_grid(block):
    """Groups of clone-pair size (~6e4 points, above ``_TRANSPOSED_MIN``), inside and at
    the support's edges: ``rows`` takes the transposed grid and gives the frozen floats."""
    rng = np.random.default_rng(11)
    for c0, rows in ((3.7e7, 1), (3.68e4, 37), (300.0, 400)):
        c = np.floor(np.full(rows, c0) + np.arange(rows))
        h = np.floor(4.5 * np.sqrt(c)) + 3
        x0 = np.maximum(0, np.floor(0.5 * c) - h)
        counts = (np.minimum(c, np.ceil(0.5 * c) + h) + 2 - x0).astype(np.int64)
        counts[rng.integers(0, rows)] -= 1                    # a ragged row
        runs = B.HalfBinomRuns(c, x0, counts, block)
        nb = -(-int(counts.max()) // block)
        assert rows * nb * block >= B._TRANSPOSED_MIN
        new_v, new_x = runs.rows(0, rows, want_x=True)
        old_v, old_x = _old_rows(runs, 0, rows, want_x=True)
        assert np.array_equal(new_v, old_v) and np.array_equal(new_x, old_x)


def test_steps_bit_for_bit_and_the_comparison_can_fail():
    runs = B.HalfBinomRuns(np.array([1000.0, 3.0]), np.array([480.0, -2.0]),
                           np.array([64, 64]), 32)
    x = runs.x0[:, None] + np.arange(64.0)[None, :]
    new = runs._steps(runs.c, x, 2)
    old = _old_steps(runs, runs.c, x, 2)
    assert np.array_equal(new, old)
    # a step taken at x instead of x − 1 (off by one) is caught
    with np.errstate(divide="ignore", invalid="ignore"):
        wrong = np.log((runs.c[:, None] - x) / (x + 1.0)).reshape(2, 2, 32)
    wrong[..., 0] = 0.0
    np.copyto(wrong, -np.inf, where=~np.isfinite(wrong))
    assert not np.array_equal(wrong, old)
