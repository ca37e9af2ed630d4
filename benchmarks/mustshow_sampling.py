"""The issue-12 acceptance numbers in one run (prints value, bound, route, seconds).

Wall and CPU seconds are both printed: on the shared machine the wall time mostly measures
the other jobs.

Run: PYTHONPATH=src python3 benchmarks/mustshow_sampling.py
"""

import time

import shuffledp as sd


def show(label, proto, delta, rounds, **kw):
    t, c0 = time.perf_counter(), time.process_time()
    r = sd.epsilon(proto, delta, rounds, **kw)
    dt, dc = time.perf_counter() - t, time.process_time() - c0
    print(f"{label}: {r.epsilon:.6g} [{r.bound}/{r.composition}, {r.kind}] in {dt:.1f} s wall, "
          f"{dc:.1f} s CPU")
    for c in r.candidates:
        print(f"    {c.bound:24s} {c.kind:8s} {c.epsilon:10.6g} {c.composition:6s} {c.seconds:6.1f}s")
    return r


def main():
    g = sd.Shuffle(sd.Gaussian(5.0), 60_000, sampling=sd.CheckIn(0.1))
    show("FL setting (sigma 5, n 60000, CheckIn(0.1), T 5540, 1e-5), trimmed-clone-sampled only",
         g, 1e-5, 5540, bound="trimmed-clone-sampled")
    show("FL setting, whole accountant", g, 1e-5, 5540)
    show("gaussian-unamplified, CheckIn(0.1), FL setting", g, 1e-5, 5540,
         bound="gaussian-unamplified")
    show("Gaussian(5) n 6000 unsampled T 5540 1e-5", sd.Shuffle(sd.Gaussian(5.0), 6000), 1e-5,
         5540, bound="trimmed-clone")
    for e0 in (1.0, 2.0):
        show(f"LDP({e0}) n 60000 WithoutReplacement(6000) T 1000 1e-5",
             sd.Shuffle(sd.LDP(e0), 60_000, sampling=sd.WithoutReplacement(6000)), 1e-5, 1000)
    show("LDP(1) n 60000 CheckIn(0.1) T 100 1e-6",
         sd.Shuffle(sd.LDP(1.0), 60_000, sampling=sd.CheckIn(0.1)), 1e-6, 100)
    show("LDP(1) n 60000 unsampled T 100 1e-6", sd.Shuffle(sd.LDP(1.0), 60_000), 1e-6, 100)


if __name__ == "__main__":
    main()
