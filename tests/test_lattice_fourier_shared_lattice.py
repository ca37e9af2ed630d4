"""Batches whose jobs share their lattice: the same floats as the frozen one-job code.

A blanket curve's sums come in batches where many jobs have the same positions, M and
nodes and only other probabilities; ``lattice_fourier._bands`` takes the angles' sines once
per lattice (positions, M) on the union of its jobs' nodes and ``_remainders`` the 1 − cos minima once per
distinct (intervals, differences) job (session 20). Checked bit for bit against the frozen
copies of the one-job code in ``test_trapezoid_batch_same_floats``, on random batches where
most jobs share a lattice with others, and ``_row_sums`` against ``np.sum(axis=1)``.
"""

import math

import numpy as np
import pytest

from shuffledp.numerics import lattice_fourier as LF
from test_trapezoid_batch_same_floats import _jobs, _old_band, _old_remainder_log, _rem_jobs

_U = 2.0 ** -53


def _other_q(rng, q):
    return rng.dirichlet(np.ones(q.size)) * (math.fsum(q.tolist()) if rng.random() < 0.5 else 1.0)


def _shared_band_jobs(seed, count):
    rng = np.random.default_rng(seed)
    base = _jobs(seed, count)
    jobs = list(base)
    for jb in base:
        for _ in range(int(rng.integers(0, 4))):
            j, q, n, h, phi, M, ks, sq = jb
            q2 = _other_q(rng, q)
            # the same lattice, M and nodes with other probabilities (and sometimes other
            # n, h, φ), or the same job again
            n2 = n if rng.random() < 0.5 else int(n * rng.uniform(0.5, 2.0))
            h2, phi2 = (h, phi) if rng.random() < 0.5 else (h * 1.5, phi * 0.7)
            # most of the nodes, as near-period bands of jobs on one lattice have
            keep = rng.random(ks.size) < 0.7
            ks2 = ks[keep] if rng.random() < 0.3 and keep.any() else ks.copy()
            if rng.random() < 0.2:
                jobs.append(jb)
            else:
                jobs.append((j, q2, n2, h2, phi2, M, ks2, math.fsum(q2.tolist())))
    order = rng.permutation(len(jobs))
    return [jobs[i] for i in order]


@pytest.mark.parametrize("seed", [5, 6])
def test_bands_of_jobs_sharing_lattices_are_the_frozen_bands(seed):
    jobs = _shared_band_jobs(seed, 40)
    node_sets: dict = {}
    for jb in jobs:
        node_sets.setdefault((jb[0].tobytes(), jb[5]), set()).add(jb[6].tobytes())
    # the batch shares its lattices, some with other node sets
    assert len(node_sets) < len(jobs) // 2
    assert sum(len(v) > 1 for v in node_sets.values()) > 5
    ref = [_old_band(*jb) for jb in jobs]
    assert LF._bands(jobs) == ref


def _shared_rem_jobs(seed, count):
    rng = np.random.default_rng(seed)
    base = _rem_jobs(seed, count)
    jobs = list(base)
    for jb in base:
        for _ in range(int(rng.integers(0, 4))):
            j, q, n, h, phi, M, kB, sq, e2_up, V, D, lt, wm = jb
            q2 = rng.dirichlet(np.ones(q.size)) * (1 - 10 ** rng.uniform(-16, -3))
            sq2 = math.fsum(q2.tolist())
            e1 = sq2 - 1.0
            e2 = e1 * (2.0 + e1)
            jc = j - float(np.sum(q2 * j) / sq2)
            V2 = (sq2 * float(np.sum(q2 * jc * jc)) - float(np.sum(q2 * jc)) ** 2) * (1 - 1e-10)
            jobs.append((j, q2, n, h, phi, M, kB, sq2, e2 + 4.0 * _U * abs(e2) + 1e-300, V2, D,
                         lt, wm))
    order = rng.permutation(len(jobs))
    return [jobs[i] for i in order]


@pytest.mark.parametrize("seed", [7, 8])
def test_remainders_of_jobs_sharing_lattices_are_the_frozen_ones(seed):
    jobs = _shared_rem_jobs(seed, 60)
    ref = [_old_remainder_log(*jb) for jb in jobs]
    new = LF._remainders(jobs)
    peaks = 0
    for a, b in zip(ref, new):
        if a is None:
            assert b is None
            continue
        assert b is not None and a[0] == b[0] and np.array_equal(a[1], b[1])
        peaks += a[1].size > 0
    assert peaks > 3                             # bisections past the first round


def test_row_sums_are_numpys_row_sums_bit_for_bit():
    rng = np.random.default_rng(9)
    for n in range(1, 13):
        A = (rng.random((3000, n)) * 10.0 ** rng.integers(-300, 300, (3000, n))
             * rng.choice([-1.0, 1.0, 0.0], (3000, n)))
        A[:20] = -0.0
        A[20:30, 0] = -0.0
        A[30:40] = np.inf
        A[40:50, n - 1] = -np.inf
        A[50:60, 0] = np.nan
        ref = np.sum(A, axis=1)
        got = LF._row_sums(A)
        assert np.array_equal(got, ref, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(ref))


def _numpy_V(j, q):
    """The prologue's V = s Σ q (j − c)² − (Σ q (j − c))², from below, on arrays (as before
    session 20)."""
    sq = math.fsum(q.tolist())
    jc = j - float(np.sum(q * j) / sq)
    return (sq * float(np.sum(q * jc * jc)) - float(np.sum(q * jc)) ** 2) * (1.0 - 1e-10)


@pytest.mark.parametrize("nnz", [2, 3, 5, 7, 8, 11])
def test_prologue_variance_is_the_array_formula_bit_for_bit(nnz):
    rng = np.random.default_rng(nnz)
    checked = 0
    for _ in range(40):
        j = np.sort(rng.choice(np.arange(-300, 300), nnz, replace=False)).astype(np.int64)
        q = rng.dirichlet(np.ones(nnz)) * (1 - 10 ** rng.uniform(-16, -2))
        n = int(10 ** rng.uniform(4, 7))
        gen = LF.trapezoid_steps(j, q, n, 0.3, 1e-3, float(q @ j), 1.0)
        try:
            kind, args = next(gen)
            assert kind == "band"
            kind, args = gen.send((1.0, 0.0, 1.0))      # a band's (S, err, Σ|g|)
        except StopIteration:            # declined, or every node summed: no remainder
            continue
        assert kind == "rem"
        assert args[9] == _numpy_V(j, q)
        checked += 1
    assert checked >= 20
