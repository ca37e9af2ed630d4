"""End to end: load the users' data, account, train, write CSV / PNG / summary."""

from __future__ import annotations

import pathlib
import sys
import time
import warnings

from .accounting import METHODS, account, checkpoints, epsilon_at, fmt
from .data import load_dataset
from .defaults import DEFAULTS
from .output import CSV_NAME, PNG_NAME, SUMMARY_NAME, rows, write_csv, write_png, write_summary
from .sim import TrainConfig, train

__all__ = ["DEFAULTS", "run_demo"]

SIGMA_DEPRECATED = ("fl-demo's 'sigma' is deprecated: it is the noise multiplier z (each report "
                    "gets N(0, z²C²I)), twice the library's sigma per unit l2 diameter; use "
                    "noise_multiplier (--noise-multiplier)")


def _renamed_sigma(overrides: dict) -> dict:
    """The old name ``sigma`` (the noise multiplier here) still works, with a warning."""
    if overrides.get("sigma") is None:
        overrides.pop("sigma", None)
        return overrides
    if overrides.get("noise_multiplier") is not None:
        raise ValueError("give noise_multiplier only (sigma is its deprecated name); got "
                         f"sigma={overrides['sigma']!r} and "
                         f"noise_multiplier={overrides['noise_multiplier']!r}")
    warnings.warn(SIGMA_DEPRECATED, DeprecationWarning, stacklevel=3)
    overrides["noise_multiplier"] = overrides.pop("sigma")
    return overrides


def _say(echo, msg):
    if echo:
        print(msg, file=sys.stdout, flush=True)


def run_demo(dataset: str = "digits", out="fl_demo", *, delta: float = 1e-5, n_checkpoints: int = 40,
             upper: str = "fast", echo: bool = True, progress: bool = True, command: str = "",
             **overrides) -> dict:
    """Simulate the protocol on ``dataset`` (``digits`` or ``mnist:PATH``), account, and write
    ``fl_demo.csv``, ``accuracy_vs_epsilon.png`` and ``summary.md`` into ``out``.

    ``overrides``: any ``TrainConfig`` field (rounds, checkin, noise_multiplier, clip, lr,
    seed, model, hidden, threads, fast_noise); unset ones take the dataset's ``DEFAULTS``.
    ``sigma`` is accepted as a deprecated name of ``noise_multiplier`` (it always meant the
    noise multiplier here, twice the library's σ per unit diameter). ``upper``:
    ``fast`` or ``best`` composition routes for the valid upper bound (``accounting.epsilon_at``). Returns a dict
    with the table rows, the final ε per method, timings and the written paths.
    """
    from .. import _validate as v
    delta = v.probability("delta", delta)
    n_checkpoints = v.integer("checkpoints", n_checkpoints, lo=2)
    if upper not in ("fast", "best"):
        raise ValueError(f"upper must be 'fast' or 'best'; got {upper!r}")
    t_start, c_start = time.perf_counter(), time.process_time()
    base = DEFAULTS["mnist" if dataset.startswith("mnist") else "digits"]
    overrides = _renamed_sigma(dict(overrides))
    params = {**base, **{k: x for k, x in overrides.items() if x is not None}}
    cfg0 = TrainConfig(**params)           # validates before any slow work
    outdir = pathlib.Path(out)
    data = load_dataset(dataset)
    n = data.n
    _say(echo, f"{data.describe()}")
    z = cfg0.noise_multiplier
    _say(echo, f"protocol: each round every user checks in w.p. {cfg0.checkin:g}, clips its "
               f"gradient to norm C = {cfg0.clip:g}, adds N(0, (z·C)² I) with noise multiplier "
               f"z = {z:g}; shuffled; server averages; {cfg0.rounds} rounds, lr {cfg0.lr:g}, "
               f"model {cfg0.model}, seed {cfg0.seed}")
    _say(echo, f"noise and neighbours: replace-one; clipped gradients are up to 2C apart, so "
               f"the per-user mechanism is Gaussian.from_noise_multiplier({z:g}) = "
               f"Gaussian({z / 2:g}) (sigma {z / 2:g} per unit l2 diameter); the central "
               f"baselines use the same noise multiplier {z:g}")

    t0 = time.perf_counter()
    final = epsilon_at(n, cfg0.checkin, z, cfg0.rounds, delta, upper)
    _say(echo, f"privacy this run will reach after round {cfg0.rounds} (delta = {delta:g}):")
    for m in METHODS:
        e, bound, kind, _ = final[m.key]
        _say(echo, f"  {m.label}: epsilon = {fmt(e)}  [{kind}, {bound}]")
    pts = checkpoints(cfg0.rounds, n_checkpoints)
    _say(echo, f"accounting at {len(pts)} checkpoint rounds (log- and evenly spaced, "
               f"not every round) ...")
    eps = account(n, cfg0.checkin, z, cfg0.rounds, delta, n_checkpoints,
                  skip={cfg0.rounds: final}, upper=upper)
    account_wall = time.perf_counter() - t0

    cfg = TrainConfig(**{**params, "eval_rounds": tuple(pts)})
    t1 = time.perf_counter()
    hist = train(data, cfg, progress=progress)
    train_wall = time.perf_counter() - t1

    outdir.mkdir(parents=True, exist_ok=True)
    table = rows(hist, eps)
    write_csv(outdir / CSV_NAME, table)
    title = (f"{data.name}: n = {n} users, check-in γ = {cfg.checkin:g}, noise multiplier "
             f"z = {cfg.noise_multiplier:g}, "
             f"C = {cfg.clip:g}, {cfg.rounds} rounds, seed {cfg.seed}")
    write_png(outdir / PNG_NAME, table, delta, title)
    timing = {"wall": time.perf_counter() - t_start, "cpu": time.process_time() - c_start,
              "train_wall": train_wall, "account_wall": account_wall}
    setting = {"dataset": data.describe(), "rounds": cfg.rounds, "check-in rate γ": cfg.checkin,
               "noise multiplier z": cfg.noise_multiplier,
               "per-user mechanism": (f"Gaussian.from_noise_multiplier({cfg.noise_multiplier:g})"
                                      f" = Gaussian({cfg.noise_multiplier / 2:g}), sigma per unit "
                                      "l2 diameter"),
               "clip norm C": cfg.clip, "learning rate": cfg.lr,
               "model": f"{cfg.model} (hidden {cfg.hidden})", "seed": cfg.seed, "delta": delta,
               "noise simulation": ("one draw for the average (same law as per-user noise)"
                                    if cfg.fast_noise else "each user adds its own noise"),
               "mean participants per round": f"{sum(hist['participants']) / cfg.rounds:.1f}"}
    notes = [f"ε is computed at {len(pts)} checkpoint rounds (half log-spaced, half evenly "
             "spaced, always the last), not at every round; test accuracy is measured at the same "
             "rounds.",
             "The upper column is the library accountant's answer for Shuffle(Gaussian(z/2), n, "
             "CheckIn(γ)) at each checkpoint" + (" over every composition route" if upper == "best"
             else " over its fast routes (RDP composition, and the unamplified Gaussian's exact "
                  "composition; `--upper best` adds the slower PLD routes)")
             + "; `upper_bound_id` in the CSV names the bound used."]
    command = command or (
        f"shuffledp fl-demo --dataset {dataset} --rounds {cfg.rounds} --checkin {cfg.checkin:g} "
        f"--noise-multiplier {cfg.noise_multiplier:g} --clip {cfg.clip:g} --lr {cfg.lr:g} "
        f"--seed {cfg.seed} "
        f"--delta {delta:g} --model {cfg.model} --hidden {cfg.hidden} --checkpoints "
        f"{n_checkpoints} --upper {upper} {'--fast-noise' if cfg.fast_noise else '--no-fast-noise'} "
        f"--out {outdir}")
    write_summary(outdir / SUMMARY_NAME, setting=setting, table=table, final=final,
                  timing=timing, command=command, notes=notes)
    _say(echo, f"test accuracy after round {cfg.rounds}: {table[-1]['test_accuracy']:.4f}")
    _say(echo, f"wall {timing['wall']:.1f} s (training {train_wall:.1f} s, accounting "
               f"{account_wall:.1f} s), CPU {timing['cpu']:.1f} s")
    _say(echo, f"wrote {outdir / CSV_NAME}, {outdir / PNG_NAME}, {outdir / SUMMARY_NAME}")
    return {"table": table, "final": final, "timing": timing, "config": cfg, "n": n,
            "paths": [outdir / CSV_NAME, outdir / PNG_NAME, outdir / SUMMARY_NAME],
            "history": hist, "epsilon": eps}
