"""Shuffle Gaussian kernel timing (issue #5).

Run: PYTHONPATH=src python3 benchmarks/bench_gaussian.py

* all orders 2…1000 of the homogeneous pair at n = 60000 (σ = 5) in one pass;
* a partition-enumeration baseline (the paper's method: one term per integer partition
  of λ, float arithmetic, as the public code does) timed in the same run at a small order,
  and the ratio of per-order costs.
"""

from __future__ import annotations

import math
import time
from collections import Counter

import numpy as np

from shuffledp.pairs import gaussian_rdp as K


def _partitions(r, maxp):
    if r == 0:
        yield []
        return
    for p in range(min(r, maxp), 0, -1):
        for rest in _partitions(r - p, p):
            yield [p] + rest


def partition_baseline(n: int, sigma: float, lam: int) -> float:
    """ε(λ) by enumerating partitions of λ (log-space per term, parts ≤ n)."""
    logs = []
    lf = math.lgamma(lam + 1)
    for kap in _partitions(lam, lam):
        if len(kap) > n:
            continue
        t = lf + math.lgamma(n + 1) - math.lgamma(n - len(kap) + 1)
        t -= sum(math.lgamma(m + 1) for m in Counter(kap).values())
        t += sum(k * (k - 1) / (2 * sigma * sigma) - math.lgamma(k + 1) for k in kap)
        logs.append(t)
    logs = np.array(logs)
    top = logs.max()
    return (top + math.log(np.sum(np.exp(logs - top))) - lam * math.log(n)) / (lam - 1)


def main() -> int:
    n, sigma = 60000, 5.0
    t = time.perf_counter()
    lem1 = K.homogeneous_log_em1(n, sigma, 1000)
    t_all = time.perf_counter() - t
    vals = K.rdp_from_log_em1(lem1, np.arange(2, 1001))
    print(f"kernel: orders 2..1000, n={n}, sigma={sigma}: {t_all:.3f} s "
          f"({t_all / 999 * 1e3:.3f} ms/order)")
    small = 40
    t = time.perf_counter()
    ref = partition_baseline(n, sigma, small)
    t_part = time.perf_counter() - t
    print(f"partition baseline: order {small} alone: {t_part:.3f} s "
          f"(relative difference to the kernel {abs(ref / vals[small - 2] - 1):.1e}; "
          "the baseline is the one losing digits: lgamma(n+1) at n = 60000)")
    print(f"ratio: one partition-enumerated order {small} costs {t_part / t_all:.1f}x "
          f"the kernel's 999 orders; per order {t_part / (t_all / 999):.0f}x")
    t = time.perf_counter()
    K.homogeneous_log_em1(1000, 1.0, 2000)
    print(f"kernel, powering path (n=1000 < lambda): orders 2..2000: {time.perf_counter() - t:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
