"""The blanket curve's sums with less work (session 19): the same floats.

* node bands and remainder bisections wait until every tilt search of a batch is done
  (``iid._DEFER``), and large ones are cut at job boundaries onto the thread pool
  (``lattice_fourier._split_for_threads``); the Chernoff screen's rows likewise;
* the curve's atoms are formed per pair in one array (``blanket._curve_atoms``);
* the residues by one centred mod for odd M, the lattice spread by one ``bincount``, the
  reflected sum without ``_prep``'s second checks.

Each is compared bit for bit with the code it replaces (the frozen formulas below, or the
same function with the new path turned off). The frozen copies of the bands, remainders and
Chernoff search are in tests/test_trapezoid_batch_same_floats.py.
"""

import math

import numpy as np
import pytest

import shuffledp as sd
from shuffledp.numerics import lattice_fourier as LF
from shuffledp.numerics import run_steps_many
from shuffledp.pairs import blanket as B
from shuffledp.pairs import iid

MATRIX = sd.Randomizer([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]])


def _curve_sets(mech, n, points=10):
    """The atom sets of a blanket curve's points, every pair (None dropped)."""
    pairs = B._pairs_cached(mech, 1.0)
    grid, top = B._eps_grid(pairs, n, points)
    tops = [p.max_log_ratio() for p in pairs]
    rows = B._curve_atoms(pairs, [float(e) for e in grid if abs(e) < top], tops)
    return [a for row in rows for a in row if a is not None]


def _uppers(sums):
    return [s.upper for s in sums]


@pytest.mark.parametrize("mech, n", [(MATRIX, 5000), (sd.RandomizedResponse(3.0, 100), 4000),
                                     (sd.RandomizedResponse(1.0, 4), 3 * 10**5)])
def test_positive_parts_on_two_threads_in_pieces_is_one_thread(monkeypatch, mech, n):
    """Bands and remainders cut into pieces on the pool (every batch, however small): the
    same values as one thread and as one sum at a time."""
    sets = _curve_sets(mech, n)
    monkeypatch.setenv("SHUFFLEDP_THREADS", "1")
    one = _uppers(iid.positive_parts(sets, n))
    alone = [iid.positive_part(v, p, n, value_err=e).upper for v, p, e in sets[:6]]
    monkeypatch.setenv("SHUFFLEDP_THREADS", "2")
    monkeypatch.setattr(LF, "_THREAD_MIN", 1)
    pieces = []
    split = LF._split_for_threads
    monkeypatch.setattr(LF, "_split_for_threads",
                        lambda g, size: pieces.append(len(split(g, size)) - len(g))
                        or split(g, size))
    two = _uppers(iid.positive_parts(sets, n))
    assert max(pieces) > 0                        # something was cut
    assert one == two
    assert one[:6] == alone


def test_chernoff_rows_on_two_threads_are_one_thread(monkeypatch):
    sets = _curve_sets(MATRIX, 5000, points=20)
    sets.append(None)
    monkeypatch.setenv("SHUFFLEDP_THREADS", "1")
    one = iid.chernoff_positive_parts(sets, 5000)
    monkeypatch.setenv("SHUFFLEDP_THREADS", "2")
    monkeypatch.setattr(iid, "_CHERNOFF_THREAD_MIN", 1)
    calls = []
    rows = iid._chernoff_rows
    monkeypatch.setattr(iid, "_chernoff_rows", lambda V, *a: calls.append(len(V)) or rows(V, *a))
    two = iid.chernoff_positive_parts(sets, 5000)
    assert len(calls) == 2 and sum(calls) == np.count_nonzero(one)   # the live sets
    assert one.tobytes() == two.tobytes()
    assert two[-1] == 0.0


def test_a_curve_on_two_threads_in_pieces_is_the_one_thread_curve(monkeypatch):
    curves = []
    for threads, lim in (("1", LF._THREAD_MIN), ("2", 1)):
        monkeypatch.setenv("SHUFFLEDP_THREADS", threads)
        monkeypatch.setattr(LF, "_THREAD_MIN", lim)
        monkeypatch.setattr(iid, "_CHERNOFF_THREAD_MIN", lim)
        B._fdp_cached.cache_clear()
        curves.append(B._fdp_cached(MATRIX, 3000, 1.0, 15, 20.0)[1])
    B._fdp_cached.cache_clear()
    assert curves[0].tobytes() == curves[1].tobytes()


def test_split_for_threads_keeps_items_whole_and_in_order(monkeypatch):
    monkeypatch.setenv("SHUFFLEDP_THREADS", "2")
    monkeypatch.setattr(LF, "_THREAD_MIN", 10)
    groups = [list(range(7)), [50], list(range(100, 103))]
    out = LF._split_for_threads(groups, lambda x: 5)
    assert [x for g in out for x in g] == [x for g in groups for x in g]
    assert out == [[0, 1, 2, 3], [4, 5, 6], [50], [100, 101, 102]]   # 35 ≥ 2·10: cut once
    monkeypatch.setenv("SHUFFLEDP_THREADS", "1")
    assert LF._split_for_threads(groups, lambda x: 5) == groups


def test_band_and_remainder_pieces_wait_for_the_tilt_searches(monkeypatch):
    """A batch's bands (and remainders) come in one call each, not a few per round of
    the Illinois steps: no band while a tilt search is pending."""
    sets = _curve_sets(MATRIX, 5000, points=15)
    log = []
    for kind in ("band", "rem", "tilt"):
        run = iid._STEPS[kind]
        monkeypatch.setitem(iid._STEPS, kind,
                            lambda jobs, kind=kind, run=run: log.append((kind, len(jobs)))
                            or run(jobs))
    iid.positive_parts(sets, 5000)
    kinds = [k for k, _ in log]
    last_tilt = max(i for i, k in enumerate(kinds) if k == "tilt")
    assert "band" not in kinds[:last_tilt] and "rem" not in kinds[:last_tilt]
    bands = [c for k, c in log if k == "band"]
    # every set that reaches an inversion (not those without a positive atom) has its first
    # band in the first call; later calls only hold near-period nodes or a second attempt
    assert bands[0] >= 0.95 * len(sets) and len(bands) <= 3


def test_run_steps_many_groups_by_kind_in_runner_order():
    def gen(k):
        a = yield ("x", k)
        b = yield ("y", a)
        return b

    calls = []
    runners = {"y": lambda xs: calls.append(("y", list(xs))) or [x + 1 for x in xs],
               "x": lambda xs: calls.append(("x", list(xs))) or [10 * x for x in xs]}
    assert run_steps_many([gen(k) for k in range(4)], runners) == [1, 11, 21, 31]
    assert calls == [("x", [0, 1, 2, 3]), ("y", [0, 10, 20, 30])]
    with pytest.raises(KeyError):
        run_steps_many([gen(1)], {"y": runners["y"]})


@pytest.mark.parametrize("mech", [MATRIX, sd.RandomizedResponse(3.0, 100),
                                  sd.RandomizedResponse(1.0, 2),
                                  sd.RandomizedResponse(7.5, 4)])
def test_curve_atoms_are_the_pair_atoms(mech):
    """Every point's (values, probs, errors), signs of zero included, as ``_pair_atoms``
    (``gparv.BlanketPair.atoms`` and ``_excess_atoms``) gives them, and None alike."""
    for rate in (1.0, 0.3):
        pairs = B._pairs_cached(mech, rate)
        grid, top = B._eps_grid(pairs, 10**4, 60)
        eps = [float(e) for e in grid] + [0.0, -0.0, top, -top, 1e-300, -1e-300]
        tops = [p.max_log_ratio() for p in pairs]
        for e, row in zip(eps, B._curve_atoms(pairs, eps, tops)):
            for want, got in zip(B._pair_atoms(pairs, e, bool(e < 0), tops), row):
                assert (want is None) == (got is None)
                if want is not None:
                    for x, y in zip(want, got):
                        assert x.shape == y.shape
                        assert x.tobytes() == y.tobytes()


def _old_reduce_rows(k, j, M):
    Mc = np.asarray(M)[:, None]
    r = np.mod(k[:, None] * j, Mc)
    return np.where(2 * r > Mc, r - Mc, r)


@pytest.mark.parametrize("seed", range(4))
def test_centred_residues_are_the_old_ones(seed):
    rng = np.random.default_rng(seed)
    for odd in (True, False):
        R, nnz = int(rng.integers(1, 60)), int(rng.integers(2, 9))
        M = rng.integers(1, 10**7, size=R) * 2 + (1 if odd else 0)
        M = np.maximum(M, 2).astype(np.int64)
        k = rng.integers(0, 10**6, size=R).astype(np.int64)
        j = rng.integers(-10**6, 10**6, size=(R, nnz)).astype(np.int64)
        got = LF._reduce(k, j, M)
        assert np.array_equal(got, _old_reduce_rows(k, j, M))
        assert np.all(2 * got <= M[:, None]) and np.all(2 * got > -M[:, None])


@pytest.mark.parametrize("seed", range(4))
def test_spread_by_bincount_is_two_add_at(seed):
    """The identity the lattice spread relies on: one ``bincount`` over both neighbours'
    weights (lower ones first) adds as ``np.add.at`` twice on zeros, also where atoms
    share lattice points."""
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 6, size=12).astype(np.int64)          # collisions on purpose
    a, b = rng.random(12) * 0.3, rng.random(12) * 1e-3
    old = np.zeros(8)
    np.add.at(old, m, a)
    np.add.at(old, m + 1, b)
    new = np.bincount(np.concatenate((m, m + 1)), weights=np.concatenate((a, b)), minlength=8)
    assert old.tobytes() == new.tobytes()


def test_prep_again_is_prep_of_the_negated_atoms():
    for v, p, e in _curve_sets(MATRIX, 5000, points=6):
        pv, pp = iid._prep(v, p, e)
        want = iid._prep(-pv, pp, None)
        got = iid._prep_again(-pv, pp)
        assert want[0].tobytes() == got[0].tobytes() and want[1].tobytes() == got[1].tobytes()
    with pytest.raises(ValueError):
        iid._prep_again(np.array([np.inf, -1.0]), np.array([0.5, 0.5]))


def _old_nodes_in(los, his, M, kB, cap=LF._PEAKS_MAX):
    """Frozen: lattice_fourier._nodes_in before session 19 (np.unique of every run's nodes)."""
    if not los:
        return np.zeros(0, dtype=np.int64)
    lo = np.concatenate(los)
    hi = np.concatenate(his)
    a = np.maximum(np.floor(lo * M / (2.0 * math.pi)).astype(np.int64) - 1, kB + 1)
    b = np.minimum(np.ceil(hi * M / (2.0 * math.pi)).astype(np.int64) + 1, (M - 1) // 2)
    lens = np.maximum(b - a + 1, 0)
    count = int(lens.sum())
    if count > cap:
        return None
    first = np.repeat(a, lens)
    within = np.arange(count, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
    return np.unique(first + within)


@pytest.mark.parametrize("seed", range(3))
def test_peak_nodes_merged_are_the_unique_nodes(seed):
    """Overlapping, touching, empty and clipped runs; a cap below and above the count."""
    rng = np.random.default_rng(seed)
    for t in range(400):
        M = int(rng.integers(3, 10**6)) * 2 + 1
        kB = int(rng.integers(0, M // 2))
        los, his = [], []
        for _ in range(int(rng.integers(0, 4))):
            c = int(rng.integers(0, 30))
            lo = rng.uniform(0.0, math.pi, c)
            w = rng.uniform(0.0, 1.0, c) * 10.0 ** rng.uniform(-6, -1)
            los.append(lo)
            his.append(np.minimum(lo + w, math.pi * (1.0 + 1e-7)))
        cap = LF._PEAKS_MAX if t % 2 else int(rng.integers(0, 50))
        want, got = _old_nodes_in(los, his, M, kB, cap), LF._nodes_in(los, his, M, kB, cap)
        assert (want is None) == (got is None)
        if want is not None:
            assert want.dtype == got.dtype and np.array_equal(want, got)
