"""Federated-learning demo: cost of one round and the extrapolated MNIST run time.

    PYTHONPATH=src python3 benchmarks/bench_fl.py [--mnist-rounds 3]

Prints (1) one digits round (750 participants, MLP) with per-example gradients from
torch.func vmap against a baseline timed in the same run: a plain loop of one backward
pass per participant; (2) one round of the MNIST setting (6000 participants, the CNN, on
random 28x28 pixels: the cost does not depend on the pixel values) with per-user noise and
with the single-draw noise, and the extrapolation to 5540 rounds; (3) the accounting time
of the MNIST setting at one checkpoint. Wall and CPU seconds; the machine is shared, so
wall time depends on the load (printed).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

from shuffledp.accounting.fl import epsilon_at
from shuffledp.apps.fl.data import Dataset, load_digits
from shuffledp.apps.fl.sim import clip_rows, make_model, per_example_grads, privatize


def _timed(f, reps=1):
    f()                                        # warm-up (torch.func traces on first use)
    w, c = time.perf_counter(), time.process_time()
    for _ in range(reps):
        f()
    return (time.perf_counter() - w) / reps, (time.process_time() - c) / reps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mnist-rounds", type=int, default=3)
    a = ap.parse_args()
    torch.set_num_threads(1)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; torch {torch.__version__}, 1 thread")

    d = load_digits()
    x, y = torch.from_numpy(d.x_train[:750]), torch.from_numpy(d.y_train[:750])
    model = make_model("mlp", (1, 8, 8), 10, 16)
    gen = torch.Generator().manual_seed(0)

    def ours():
        privatize(per_example_grads(model, x, y), 1.0, 1.0, gen).mean(0)

    def loop():
        rows = []
        for i in range(x.shape[0]):
            model.zero_grad()
            torch.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
            rows.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
        privatize(torch.stack(rows), 1.0, 1.0, gen).mean(0)

    w1, c1 = _timed(ours, 5)
    w0, c0 = _timed(loop, 1)
    print("\n| digits round (750 participants, MLP 64-16-10) | wall s | CPU s |")
    print("|---|---:|---:|")
    print(f"| torch.func vmap (shuffledp.apps.fl) | {w1:.3f} | {c1:.3f} |")
    print(f"| loop of per-example backward (baseline) | {w0:.3f} | {c0:.3f} |")
    print(f"| speed-up (CPU) | | {c0 / c1:.1f}x |")

    rng = np.random.default_rng(0)
    xm = torch.from_numpy(rng.random((6000, 1, 28, 28), dtype=np.float32))
    ym = torch.from_numpy(rng.integers(0, 10, 6000))
    cnn = make_model("cnn", (1, 28, 28), 10, 32)
    dim = sum(p.numel() for p in cnn.parameters())

    def mn_fast():
        g = per_example_grads(cnn, xm, ym)
        clip_rows(g, 0.01).mean(0) + 0.05 / np.sqrt(6000) * torch.randn(dim, generator=gen)

    def mn_full():
        privatize(per_example_grads(cnn, xm, ym), 0.01, 5.0, gen).mean(0)

    wf, cf = _timed(mn_fast, a.mnist_rounds)
    wp, cp = _timed(mn_full, 1)
    print(f"\n| MNIST-shaped round (6000 participants, CNN, {dim} parameters) | wall s | CPU s | 5540 rounds, CPU h |")
    print("|---|---:|---:|---:|")
    print(f"| single-draw noise (--fast-noise, the mnist default) | {wf:.2f} | {cf:.2f} | {cf * 5540 / 3600:.1f} |")
    print(f"| per-user noise | {wp:.2f} | {cp:.2f} | {cp * 5540 / 3600:.1f} |")

    w, c = time.perf_counter(), time.process_time()
    e = epsilon_at(60000, 0.1, 5.0, 5540, 1e-5)
    w, c = time.perf_counter() - w, time.process_time() - c
    print(f"\nMNIST accounting at round 5540 (all four methods): wall {w:.1f} s, CPU {c:.1f} s")
    for k, v in e.items():
        print(f"  {k}: {v[0]:.4g} [{v[2]}, {v[1]}]")


if __name__ == "__main__":
    main()
