"""The certified FFT power's shortcuts (``shuffledp.numerics.fft``, ``shuffledp.pairs.iid``)
return the values of the plain computation they replace, bit for bit: the blanket's curve
and everything composed from it must not move."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from shuffledp.numerics import fft
from shuffledp.pairs import iid


def _spectrum(seed, K, L):
    rng = np.random.default_rng(seed)
    q = rng.random(K) ** 3
    q /= q.sum()
    return q, np.fft.rfft(np.concatenate([q, np.zeros(L - K)]))


def _plain_live(absFs, epss, ns):
    """log G = Σ n_i log(|F̂_i| + ε_i) at every frequency, then the test > −746 (the code
    before the prefilter)."""
    logG = None
    with np.errstate(divide="ignore", invalid="ignore"):
        for a, e, n in zip(absFs, epss, ns):
            lg = np.log(a + e)
            logG = n * lg if logG is None else logG + n * lg
    live = np.flatnonzero(logG > -746.0)
    return live, logG[live]


@pytest.mark.parametrize("ns", [(3,), (40,), (10_000,), (1_000_000,), (500, 1), (2_000, 7),
                                (10**9,)])
def test_live_frequencies_and_logs_are_the_full_computation(ns):
    L = 4096
    absFs, epss = [], []
    for i, _ in enumerate(ns):
        _, F = _spectrum(7 + i, 60, L)
        absFs.append(np.abs(F))
        epss.append(1e-13 * (i + 1))
    live, lg = fft._live(absFs, epss, list(ns))
    ref_live, ref_lg = _plain_live(absFs, epss, ns)
    assert np.array_equal(live, ref_live)
    assert np.array_equal(lg, ref_lg)


def test_live_keeps_frequencies_at_the_cutoff():
    # moduli straddling the cutoff |F̂|^n = e^−746 by a few ulps: the prefilter must pass
    # every one the exact test keeps
    n = 1000
    cut = math.exp(-746.0 / n)
    a = cut * (1.0 + np.arange(-40, 41) * 2.0 ** -52)
    a = np.concatenate([[1.0], a, [0.0, 0.5]])
    live, lg = fft._live([a], [0.0], [n])
    ref_live, ref_lg = _plain_live([a], [0.0], [n])
    assert ref_live.size > 1 and ref_live.size < a.size   # the cutoff falls inside
    assert np.array_equal(live, ref_live) and np.array_equal(lg, ref_lg)


def test_live_with_a_zero_spectrum_is_empty():
    live, lg = fft._live([np.zeros(9)], [0.0], [5])
    assert live.size == 0 and lg.size == 0


@pytest.mark.parametrize("ns,L", [([31623, 17494], 8192), ([400, 3], 2048), ([9, 9], 1024)])
def test_powers_sharing_a_spectrum_equal_separate_powers(ns, L):
    q, _ = _spectrum(3, 50, L)
    together = fft.fft_powers(q, ns, L)
    for (Q, err), n in zip(together, ns):
        Q1, err1 = fft.fft_power(q, n, L)
        assert np.array_equal(Q, Q1) and err == err1


def test_scratch_output_equals_a_fresh_one_and_is_reused():
    q, _ = _spectrum(5, 40, 3000)
    Q, err = fft.fft_power(q, 700, 3000)
    Qs, errs = fft.fft_power_product([(q, 700)], 3000, _scratch_out=True)
    assert np.array_equal(Q, Qs) and err == errs
    Qs2, _ = fft.fft_power_product([(q, 701)], 3000, _scratch_out=True)
    assert Qs2 is Qs            # the documented contract: the next such call overwrites it
    Q3, _ = fft.fft_power(q, 701, 3000)
    assert np.array_equal(Qs2, Q3)


def test_work_arrays_are_per_thread():
    inputs = [(_spectrum(s, 30 + s, 5000)[0], 200 + 37 * s) for s in range(6)]
    expected = [fft.fft_power(q, n, 5000) for q, n in inputs]
    got = [None] * len(inputs)

    def run(i):
        for _ in range(5):
            q, n = inputs[i]
            got[i] = fft.fft_power_product([(q, n)], 5000, _scratch_out=True)
            got[i] = (got[i][0].copy(), got[i][1])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (Q, err), (Qe, erre) in zip(got, expected):
        assert np.array_equal(Q, Qe) and err == erre


@pytest.mark.parametrize("s_hi,phi,offset", [(5000, 0.002, 7), (5000, 0.5, -3), (40, 1e-6, 0)])
def test_weighted_sum_is_the_plain_expression(s_hi, phi, offset):
    rng = np.random.default_rng(11)
    L = 6000
    Q = rng.standard_normal(L) * 1e-3 + 1e-3
    step = 0.37
    main, beyond, wnorm = iid._weighted_sum(Q, offset, L, s_hi, step, phi)
    # the expression it replaces
    s_cut = min(s_hi, max(int(300.0 / phi), 1))
    sf = np.arange(1, s_cut + 1, dtype=np.int64).astype(float)
    wts = step * sf * np.exp(-phi * sf)
    ref = float(np.sum(wts * np.maximum(fft.circular_run(Q, 1 - offset, s_cut), 0.0)))
    assert main == ref
    assert wnorm == math.sqrt(float(np.sum(wts * wts)))
    assert beyond == (2.0 * step * s_cut * math.exp(-phi * s_cut) if s_cut < s_hi else 0.0)


def test_next_fast_len_is_the_smallest_5_smooth_length():
    def smooth(m):
        for p in (2, 3, 5):
            while m % p == 0:
                m //= p
        return m == 1

    for n in list(range(1, 600)) + [168_001, 1 << 20, (1 << 20) + 1]:
        m = fft.next_fast_len(n)
        assert m >= n and smooth(m)
        assert all(not smooth(k) for k in range(n, m))


def test_malloc_setting_is_skipped_when_asked(monkeypatch):
    import ctypes

    def refuse(*a, **k):
        raise AssertionError("mallopt must not be reached")

    monkeypatch.setattr(fft, "_malloc_done", False)
    monkeypatch.setenv("SHUFFLEDP_MALLOC", "system")
    monkeypatch.setattr(ctypes, "CDLL", refuse)
    fft._keep_freed_memory()
    assert fft._malloc_done


def test_malloc_setting_runs_once_and_keeps_values(monkeypatch):
    q, _ = _spectrum(2, 40, 4000)
    before = fft.fft_power(q, 300, 4000)
    monkeypatch.setattr(fft, "_malloc_done", False)
    monkeypatch.delenv("SHUFFLEDP_MALLOC", raising=False)
    fft._keep_freed_memory()
    assert fft._malloc_done
    after = fft.fft_power(q, 300, 4000)
    assert np.array_equal(before[0], after[0]) and before[1] == after[1]
