"""Benchmark of the privacy-blanket bound (issue #13).

1. One certified ε(δ = 1e-6) of the blanket bound at n = 1e6 (10-RR and 100-RR), caches
   cleared before every run (best of 3), with the certified numerical error of its δ.
2. Against the exact multinomial sum at a size where both run: binary RR (two non-zero
   atoms), n = 1000 — the baseline sums E[(ΣG)_+] over every count vector
   (``iid_sum.exact_positive_part``, O(n²) per δ) inside a plain bisection of 30 steps;
   the engine does the same ε(δ) through ``blanket_epsilon``. Both answers are printed
   (the engine's is certified and at or above the exact one).

Run: PYTHONPATH=src python3 benchmarks/bench_blanket.py
"""

import math
import time

import shuffledp as sd
from shuffledp.pairs import iid as iid_sum
from shuffledp.pairs import blanket as B


def clear():
    B._delta_cached.cache_clear()
    B._pairs_cached.cache_clear()


def timed_eps(proto, delta, reps=3):
    """(best wall time, its CPU time, answer): the machine is shared, so CPU time is shown
    beside the wall clock."""
    best, cpu, out = math.inf, math.inf, None
    for _ in range(reps):
        clear()
        t0, c0 = time.perf_counter(), time.process_time()
        out = B.blanket_epsilon(proto, delta)
        w, c = time.perf_counter() - t0, time.process_time() - c0
        if w < best:
            best, cpu = w, c
    return best, cpu, out


def exact_epsilon(e0, n, delta, steps=30):
    E = math.exp(e0)

    def d(eps):
        t = math.exp(eps)
        return iid_sum.exact_positive_part([E - t, 1 - E * t, 0.0],
                                           [1 / (E + 1), 1 / (E + 1), (E - 1) / (E + 1)], n) / n

    lo, hi = 0.0, e0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if d(mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def main():
    print("| what | n | epsilon (certified) | delta evaluations | wall (s) | CPU (s) | certified rel. error of delta |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for k, e0 in ((10, 1.0), (100, 4.0)):
        proto = sd.Shuffle(sd.RandomizedResponse(e0, k), 10**6)
        t, c, (eps, det) = timed_eps(proto, 1e-6)
        print(f"| blanket eps(1e-6), {k}-RR, eps0={e0:g} | 1e6 | {eps:.6f} | {det['evaluations']} | "
              f"{t:.3f} | {c:.3f} | {det['certified_relative_error_of_delta']:.1e} |")

    n, e0 = 1000, 1.0
    proto = sd.Shuffle(sd.RandomizedResponse(e0, 2), n)
    t_fast, c_fast, (eps_fast, det) = timed_eps(proto, 1e-6)
    t0, c0 = time.perf_counter(), time.process_time()
    eps_exact = exact_epsilon(e0, n, 1e-6)
    t_exact, c_exact = time.perf_counter() - t0, time.process_time() - c0
    print(f"| blanket eps(1e-6), 2-RR, eps0=1 | {n} | {eps_fast:.6f} | {det['evaluations']} | "
          f"{t_fast:.3f} | {c_fast:.3f} | {det['certified_relative_error_of_delta']:.1e} |")
    print(f"| exact multinomial sum + bisection (30 steps), same | {n} | {eps_exact:.6f} | 30 | "
          f"{t_exact:.3f} | {c_exact:.3f} | 0 (not certified) |")
    print(f"\nspeed-up at n={n}: {t_exact / t_fast:.1f}x wall, {c_exact / c_fast:.1f}x CPU; "
          f"engine/exact epsilon - 1 = {eps_fast / eps_exact - 1:.2e}")


if __name__ == "__main__":
    main()
