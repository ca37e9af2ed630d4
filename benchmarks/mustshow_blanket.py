"""The issue-13 acceptance numbers, measured (output saved in mustshow_blanket.txt).

Run: PYTHONPATH=src python3 benchmarks/mustshow_blanket.py
"""

import time

import shuffledp as sd


def line(*a):
    print(*a, flush=True)


def main():
    line("== k-RR, delta = 1e-6: default answer vs krr-lower ==")
    for k, n, e0, cap in ((10, 10**4, 1.0, 0.0234), (100, 10**4, 1.0, 0.0073), (100, 10**6, 4.0, 0.0199)):
        t0 = time.perf_counter()
        r = sd.epsilon(sd.Shuffle(sd.RandomizedResponse(e0, k), n), delta=1e-6)
        line(f"k={k} n={n:.0e} eps0={e0:g}: default={r.epsilon:.6f} ({r.bound}, {r.kind}) "
             f"krr-lower={r.lower.epsilon:.6f} gap={r.gap:.5f} cap={cap} "
             f"ok={r.epsilon <= cap and r.gap <= 1.01}  fmt23="
             f"{[c.epsilon for c in r.candidates if c.bound == 'fmt23'][0]:.6f}  "
             f"({time.perf_counter() - t0:.1f} s)")

    line("\n== 10-RR, n = 1e4, eps0 = 1, delta = 1e-6: composition ==")
    p = sd.Shuffle(sd.RandomizedResponse(1.0, 10), 10**4)
    one = sd.epsilon(p, 1e-6, bound="blanket")
    pld1 = sd.epsilon(p, 1e-6, bound="blanket", composition="pld")
    d = pld1.candidates[0].details
    err = d["fdp_grid_spacing_at_answer"] + d["eps_bias_bound"]
    line(f"T=1: one-round certified {one.epsilon:.6f}; PLD route {pld1.epsilon:.6f}; "
         f"difference {pld1.epsilon - one.epsilon:.2e} <= stated grid error {err:.2e} "
         f"(curve spacing {d['fdp_grid_spacing_at_answer']:.2e} + loss grid {d['eps_bias_bound']:.0e}): "
         f"{0 <= pld1.epsilon - one.epsilon <= err}")
    t0 = time.perf_counter()
    bl = sd.epsilon(p, 1e-6, rounds=100, bound="blanket")
    f23 = sd.epsilon(p, 1e-6, rounds=100, bound="fmt23")
    dflt = sd.epsilon(p, 1e-6, rounds=100)
    line(f"T=100: blanket {bl.epsilon:.6f} ({bl.composition}; routes {bl.candidates[0].details.get('routes')}) "
         f"< fmt23 {f23.epsilon:.6f} ({f23.composition}): {bl.epsilon < f23.epsilon}; "
         f"default answer {dflt.epsilon:.6f} ({dflt.bound}) ({time.perf_counter() - t0:.1f} s)")

    line("\n== OUE(d=1000) and RAPPOR(d=1000), n = 1e5, delta = 1e-6 ==")
    for e0 in (1.0, 2.0, 4.0):
        for m in (sd.OUE(e0, 1000), sd.RAPPOR(e0, 1000)):
            r = sd.epsilon(sd.Shuffle(m, 10**5), delta=1e-6)
            f20 = [c.epsilon for c in r.candidates if c.bound == "fmt20"][0]
            line(f"{type(m).__name__} eps0={e0:g}: default={r.epsilon:.6f} ({r.bound}) "
                 f"fmt20={f20:.6f} strictly below: {r.epsilon < f20}")


if __name__ == "__main__":
    main()
