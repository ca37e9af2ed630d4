"""Benchmark of sampled-round queries (issue #12) against the unsampled query, same n.

1. One round, ε at δ = 1e-6, LDP ε0 = 1, n = 1e6: ``fmt20-sampled`` with CheckIn(0.1) and
   with WithoutReplacement(1e5), against ``fmt20`` with every user reporting (same n).
2. T = 1000 rounds through PLD (δ = 1e-6): the sampled pair's PLD against the unsampled
   pair's PLD, same n.
3. The seed federated-learning setting (Gaussian σ = 5, n = 60000, CheckIn(0.1),
   T = 5540, δ = 1e-5): ``trimmed-clone-sampled`` (both routes) and the whole accountant.

Each sampled query is timed cold (fresh caches) right after its unsampled counterpart.
Run: PYTHONPATH=src python3 benchmarks/bench_sampling.py
"""

import time

import shuffledp as sd
from shuffledp import sampled_pair as sp
from shuffledp.bounds import sampled as bs


def _clear():
    sp.hidden_cells.cache_clear()
    sp._atoms.cache_clear()
    bs._hidden.cache_clear()
    bs._best_eps0.cache_clear()


def timed(fn):
    _clear()
    t = time.perf_counter()
    v = fn()
    return v, time.perf_counter() - t


def main():
    n = 1_000_000
    rows = []
    ldp = sd.LDP(1.0)
    base, tb = timed(lambda: sd.epsilon(sd.Shuffle(ldp, n), 1e-6, bound="fmt20").epsilon)
    for samp in (sd.CheckIn(0.1), sd.WithoutReplacement(100_000)):
        v, t = timed(lambda: sd.epsilon(sd.Shuffle(ldp, n, sampling=samp), 1e-6,
                                        bound="fmt20-sampled").epsilon)
        rows.append((f"1 round, eps(1e-6), {samp}", v, t, base, tb))
    base, tb = timed(lambda: sd.epsilon(sd.Shuffle(ldp, n), 1e-6, 1000, bound="fmt20",
                                        composition="pld").epsilon)
    v, t = timed(lambda: sd.epsilon(sd.Shuffle(ldp, n, sampling=sd.CheckIn(0.1)), 1e-6, 1000,
                                    bound="fmt20-sampled", composition="pld").epsilon)
    rows.append(("T=1000 PLD, eps(1e-6), CheckIn(0.1)", v, t, base, tb))
    print(f"{'query (n = 1e6, LDP eps0 = 1)':44s} {'sampled eps':>12s} {'s':>7s} "
          f"{'unsampled eps':>14s} {'s':>7s} {'ratio':>7s}")
    for name, v, t, b, tb_ in rows:
        print(f"{name:44s} {v:12.6g} {t:7.2f} {b:14.6g} {tb_:7.2f} {t / tb_:7.2f}")

    g = sd.Shuffle(sd.Gaussian(5.0), 60_000, sampling=sd.CheckIn(0.1))
    for comp in ("rdp", "pld"):
        v, t = timed(lambda: sd.epsilon(g, 1e-5, 5540, bound="trimmed-clone-sampled",
                                        composition=comp).epsilon)
        print(f"seed FL setting, trimmed-clone-sampled {comp}: eps = {v:.6g} in {t:.2f} s")
    v, t = timed(lambda: sd.epsilon(g, 1e-5, 5540, bound="trimmed-clone-sampled"))
    print(f"seed FL setting, trimmed-clone-sampled (both routes): eps = {v.epsilon:.6g} "
          f"[{v.composition}] in {t:.2f} s")
    v, t = timed(lambda: sd.epsilon(g, 1e-5, 5540))
    print(f"seed FL setting, whole accountant: eps = {v.epsilon:.6g} [{v.bound}] in {t:.2f} s "
          f"(per bound: " + ", ".join(f"{c.bound} {c.seconds:.1f}s" for c in v.candidates) + ")")


if __name__ == "__main__":
    main()
