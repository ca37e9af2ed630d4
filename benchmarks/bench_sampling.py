"""Benchmark of sampled-round queries (issue #12) against the unsampled query, same n.

1. One round, ε at δ = 1e-6, LDP ε0 = 1, n = 1e6: ``fmt20-sampled`` with CheckIn(0.1) and
   with WithoutReplacement(1e5), against ``fmt20`` with every user reporting (same n).
(The acceptance numbers of the issue, with their times, are printed by
benchmarks/mustshow_sampling.py.)

Each sampled query is timed cold (fresh caches) right after its unsampled counterpart.
Run: PYTHONPATH=src python3 benchmarks/bench_sampling.py
"""

import time

import shuffledp as sd
from shuffledp.pairs import hidden as sp
from shuffledp.bounds import sampled as bs


def _clear():
    sp.hidden_cells.cache_clear()
    sp.hidden_atoms.cache_clear()
    bs._hidden.cache_clear()
    bs._best_eps0.cache_clear()


def timed(fn):
    """(value, CPU seconds of this process): the shared machine's wall time is noise."""
    _clear()
    t = time.process_time()
    v = fn()
    return v, time.process_time() - t


def main():
    n = 1_000_000
    rows = []
    ldp = sd.LDP(1.0)
    sd.epsilon(sd.Shuffle(ldp, 1000, sampling=sd.CheckIn(0.5)), 1e-6)   # imports, warm-up
    base, tb = timed(lambda: sd.epsilon(sd.Shuffle(ldp, n), 1e-6, bound="fmt20").epsilon)
    for samp in (sd.CheckIn(0.1), sd.WithoutReplacement(100_000)):
        v, t = timed(lambda: sd.epsilon(sd.Shuffle(ldp, n, sampling=samp), 1e-6,
                                        bound="fmt20-sampled").epsilon)
        rows.append((f"1 round, eps(1e-6), {samp}", v, t, base, tb))
    print(f"{'query (n = 1e6, LDP eps0 = 1)':44s} {'sampled eps':>12s} {'CPU s':>7s} "
          f"{'unsampled eps':>14s} {'CPU s':>7s} {'ratio':>7s}")
    for name, v, t, b, tb_ in rows:
        print(f"{name:44s} {v:12.6g} {t:7.2f} {b:14.6g} {tb_:7.2f} {t / tb_:7.2f}")


if __name__ == "__main__":
    main()
