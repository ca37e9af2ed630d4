"""Simulation of federated learning with shuffled check-in (torch).

One round, as in the shuffle-Gaussian learning experiment (Liew & Takahashi,
arXiv:2206.09569, Section 6): every user holds one example; each user checks in
independently with probability γ; a user who checks in computes the gradient of its loss on
the current model, clips it to ℓ2 norm C, adds N(0, z²C²I) (noise multiplier z; the
library's ``Gaussian.from_noise_multiplier(z)``) and sends the result; the shuffler permutes
the reports; the server averages them (the number of reports is public) and takes a
gradient step. Per-example gradients come from ``torch.func`` (``vmap`` of
``grad`` over a functional call of the model).

All randomness (model initialisation, check-in, noise, shuffling) comes from one
``torch.Generator`` seeded by the caller, so a run is reproducible under a seed (on the
same machine and torch version).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np

__all__ = ["TrainConfig", "make_model", "per_example_grads", "clip_rows", "privatize",
           "check_in", "train"]


@dataclass(frozen=True)
class TrainConfig:
    """Parameters of one simulated training run (validated)."""

    rounds: int = 600
    checkin: float = 0.5
    noise_multiplier: float = 2.0    # z: each report gets N(0, z²C²I); Gaussian(z/2) per unit diameter
    clip: float = 1.0
    lr: float = 2.0
    seed: int = 0
    model: str = "mlp"
    hidden: int = 32
    eval_rounds: tuple = ()          # rounds after which the test accuracy is measured
    threads: int = 1                 # torch intra-op threads (1: no oversubscription on a shared CPU)
    fast_noise: bool = False         # draw the average's noise directly (same law; for large runs)

    def __post_init__(self):
        from ...core import _validate as v
        object.__setattr__(self, "rounds", v.integer("rounds", self.rounds, lo=1))
        object.__setattr__(self, "checkin", v.real("checkin", self.checkin, lo=0.0, hi=1.0,
                                                   lo_open=True))
        object.__setattr__(self, "noise_multiplier", v.real("noise_multiplier", self.noise_multiplier,
                                                            lo=0.0, lo_open=True))
        object.__setattr__(self, "clip", v.real("clip", self.clip, lo=0.0, lo_open=True))
        object.__setattr__(self, "lr", v.real("lr", self.lr, lo=0.0, lo_open=True))
        object.__setattr__(self, "seed", v.integer("seed", self.seed, lo=0))
        object.__setattr__(self, "hidden", v.integer("hidden", self.hidden, lo=1))
        object.__setattr__(self, "threads", v.integer("threads", self.threads, lo=1))
        if self.model not in ("mlp", "cnn"):
            raise ValueError(f"model must be 'mlp' or 'cnn'; got {self.model!r}")


def _torch():
    try:
        import torch
    except ImportError as exc:      # pragma: no cover - depends on the environment
        raise ImportError("the federated-learning demo needs torch "
                          "(pip install 'shuffledp[fl]'; CPU build: "
                          "pip install torch --index-url https://download.pytorch.org/whl/cpu)") from exc
    return torch


def make_model(kind: str, in_shape: tuple, classes: int, hidden: int = 32):
    """A small MLP (one hidden tanh layer) or a small CNN (two conv layers, as in the
    DP-SGD literature's MNIST models), both without batch statistics so per-example
    gradients are well defined."""
    torch = _torch()
    nn = torch.nn
    c, h, w = in_shape
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(c * h * w, hidden), nn.Tanh(),
                             nn.Linear(hidden, classes))
    # CNN: 28x28 -> conv8 s2 p3 -> 14x14 -> pool -> 7x7 (or 8x8 -> 4x4 -> 2x2)
    conv = nn.Sequential(nn.Conv2d(c, 16, 8, stride=2, padding=3), nn.Tanh(), nn.MaxPool2d(2, 1),
                         nn.Conv2d(16, 32, 4, stride=2), nn.Tanh(), nn.MaxPool2d(2, 1))
    with torch.no_grad():
        flat = conv(torch.zeros(1, c, h, w)).numel()
    return nn.Sequential(*conv, nn.Flatten(), nn.Linear(flat, hidden), nn.Tanh(),
                         nn.Linear(hidden, classes))


def per_example_grads(model, x, y):
    """(m, d) matrix of the per-example gradients of the cross-entropy at the current model,
    flattened in ``model.parameters()`` order."""
    torch = _torch()
    from torch.func import functional_call, grad, vmap
    params = {k: p.detach() for k, p in model.named_parameters()}

    def loss(p, xi, yi):
        out = functional_call(model, p, (xi.unsqueeze(0),))
        return torch.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    g = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
    return torch.cat([g[k].reshape(x.shape[0], -1) for k in params], dim=1)


def clip_rows(g, clip: float):
    """Scale each row to ℓ2 norm at most ``clip`` (rows already within are unchanged)."""
    torch = _torch()
    norms = torch.linalg.vector_norm(g, dim=1, keepdim=True)
    # clip / max(norm, clip) <= 1; the max keeps zero rows at zero without a division by 0.
    return g * (clip / torch.clamp(norms, min=clip))


def privatize(g, clip: float, noise_multiplier: float, generator):
    """The users' local randomizer and the shuffler: clip each row to ``clip``, add
    N(0, z²·clip²·I) (z = ``noise_multiplier``) to each row independently, return the rows
    in a random order."""
    torch = _torch()
    r = clip_rows(g, clip)
    r = r + clip * noise_multiplier * torch.randn(r.shape, generator=generator, dtype=r.dtype)
    return r[torch.randperm(r.shape[0], generator=generator)]


def check_in(n: int, rate: float, generator):
    """Indices of the users who check in: each independently with probability ``rate``."""
    torch = _torch()
    return torch.nonzero(torch.rand(n, generator=generator) < rate).flatten()


def _apply_update(model, flat_step):
    i = 0
    for p in model.parameters():
        k = p.numel()
        p.data.add_(flat_step[i:i + k].view_as(p))
        i += k


def accuracy(model, x, y, batch: int = 4096) -> float:
    torch = _torch()
    with torch.no_grad():
        hits = 0
        for s in range(0, x.shape[0], batch):
            hits += int((model(x[s:s + batch]).argmax(1) == y[s:s + batch]).sum())
    return hits / max(int(x.shape[0]), 1)


def _progress(total: int, desc: str):
    """tqdm if installed (silent when stderr is not a terminal), else the built-in bar."""
    try:
        from tqdm.auto import tqdm
        return tqdm(total=total, desc=desc, disable=not sys.stderr.isatty(), leave=True)
    except ImportError:             # pragma: no cover - depends on the environment
        from ...core._progress import Progress
        return Progress(total, desc)


def train(data, cfg: TrainConfig, on_eval=None, progress: bool = True) -> dict:
    """Run ``cfg.rounds`` rounds of the protocol on ``data`` (a ``Dataset``).

    Test accuracy is measured before the first round (round 0) and after every round in
    ``cfg.eval_rounds`` (default: the last). ``on_eval(round, accuracy)`` is called at each
    measurement. Returns ``{"rounds": [...], "accuracy": [...], "participants": [...],
    "model": model}`` where ``participants[t-1]`` is the number of users who checked in at
    round t.
    """
    torch = _torch()
    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.threads)
    try:
        return _train(torch, data, cfg, on_eval, progress)
    finally:
        torch.set_num_threads(threads)


def _train(torch, data, cfg, on_eval, progress):
    gen = torch.Generator().manual_seed(cfg.seed)
    # Parameter initialisation draws from torch's global generator: seed it inside a fork so
    # the caller's random state is left as it was.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        model = make_model(cfg.model, tuple(data.x_train.shape[1:]), data.classes, cfg.hidden)
    xtr, ytr = torch.from_numpy(np.ascontiguousarray(data.x_train)), torch.from_numpy(data.y_train)
    xte, yte = torch.from_numpy(np.ascontiguousarray(data.x_test)), torch.from_numpy(data.y_test)
    evals = sorted(set(int(t) for t in cfg.eval_rounds if 1 <= int(t) <= cfg.rounds)
                   | {cfg.rounds})
    out = {"rounds": [0], "accuracy": [accuracy(model, xte, yte)], "participants": []}
    if on_eval:
        on_eval(0, out["accuracy"][0])
    nxt = 0
    bar = _progress(cfg.rounds, "fl rounds") if progress else None
    try:
        for t in range(1, cfg.rounds + 1):
            idx = check_in(data.n, cfg.checkin, gen)
            m = int(idx.numel())
            out["participants"].append(m)
            if m:
                g = per_example_grads(model, xtr[idx], ytr[idx])
                if cfg.fast_noise:
                    # The mean of m independent N(0, z²C²I) is N(0, z²C²/m I): the model's
                    # trajectory has the same law as with per-user noise, at 1/m of the draws.
                    avg = clip_rows(g, cfg.clip).mean(0)
                    avg = avg + (cfg.clip * cfg.noise_multiplier / math.sqrt(m)) * torch.randn(
                        avg.shape, generator=gen, dtype=avg.dtype)
                else:
                    avg = privatize(g, cfg.clip, cfg.noise_multiplier, gen).mean(0)
                with torch.no_grad():
                    _apply_update(model, -cfg.lr * avg)
            if nxt < len(evals) and t == evals[nxt]:
                nxt += 1
                acc = accuracy(model, xte, yte)
                out["rounds"].append(t)
                out["accuracy"].append(acc)
                if on_eval:
                    on_eval(t, acc)
                if bar is not None and hasattr(bar, "set_postfix_str"):
                    bar.set_postfix_str(f"acc {acc:.3f}")
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    out["model"] = model
    if not all(math.isfinite(a) for a in out["accuracy"]):   # pragma: no cover
        raise ArithmeticError("accuracy is not finite")
    return out
