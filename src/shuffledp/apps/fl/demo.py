"""End to end: load the users' data, account, train, write CSV / PNG / summary."""

from __future__ import annotations

import math
import pathlib
import sys
import time
import warnings

from ...accounting.fl import METHODS, account, checkpoints, epsilon_at, fmt
from .data import load_dataset
from .defaults import DEFAULTS
from .output import (CSV_NAME, PNG_NAME, SUMMARY_NAME, TRADEOFF_CSV, TRADEOFF_PNG, rows,
                     tradeoff_lines, write_csv, write_png, write_summary, write_tradeoff_csv,
                     write_tradeoff_png, write_tradeoff_summary)
from .sim import TrainConfig, train

__all__ = ["DEFAULTS", "run_demo", "run_tradeoff", "learning_check"]

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


def _training_setting(cfg, delta: float) -> dict:
    """The summary's setting rows every run of the demo shares (one run or the trade-off's
    runs, which differ only in z): clipping, learning rate, model, seed, δ, noise draws."""
    return {"clip norm C": cfg.clip, "learning rate": cfg.lr,
            "model": f"{cfg.model} (hidden {cfg.hidden})", "seed": cfg.seed, "delta": delta,
            "noise simulation": ("one draw for the average (same law as per-user noise)"
                                 if cfg.fast_noise else "each user adds its own noise")}


def _timing(t_start: float, c_start: float, train_wall: float, account_wall: float) -> dict:
    """The summary's timing (seconds): wall and CPU since the start, training and accounting."""
    return {"wall": time.perf_counter() - t_start, "cpu": time.process_time() - c_start,
            "train_wall": train_wall, "account_wall": account_wall}


def learning_check(accuracy: float, classes: int, cfg, params: int, mean_participants: float):
    """None if the run learned, else a message saying why it may not have and what to change.

    "Did not learn": the final test accuracy is below chance + a quarter of the way to 1
    (0.325 for 10 classes). The message gives the noise of the averaged update against the
    clipped gradient: the average of m reports carries N(0, z²C²/m I), of norm about
    z·C·sqrt(d/m) in d parameters, while the averaged clipped gradient has norm at most C.
    """
    chance = 1.0 / classes
    if accuracy >= chance + 0.25 * (1.0 - chance):
        return None
    m = max(mean_participants, 1.0)
    ratio = cfg.noise_multiplier * math.sqrt(params / m)
    return (f"this run did not learn: test accuracy {accuracy:.3f} after {cfg.rounds} rounds "
            f"(chance {chance:.2f}). Each round the averaged noise has norm about "
            f"z*C*sqrt(d/m) = {cfg.noise_multiplier:g}*{cfg.clip:g}*sqrt({params}/{m:.0f}) = "
            f"{ratio * cfg.clip:.3g}, against an averaged clipped gradient of norm at most "
            f"C = {cfg.clip:g}. Try more rounds (--rounds, now {cfg.rounds}), another learning "
            f"rate (--lr, now {cfg.lr:g}; too small does not move, too large diverges), a "
            f"smaller noise multiplier (now {cfg.noise_multiplier:g}) or "
            f"more users per round (--checkin, now {cfg.checkin:g}).")


def _n_params(model) -> int:
    return int(sum(p.numel() for p in model.parameters()))


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
    from ...core import _validate as v
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
               f"not every round)"
               + (f"; {n_checkpoints} asked, the run has only {cfg0.rounds} rounds"
                  if len(pts) < n_checkpoints else "") + " ...")
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
    timing = _timing(t_start, c_start, train_wall, account_wall)
    setting = {"dataset": data.describe(), "rounds": cfg.rounds, "check-in rate γ": cfg.checkin,
               "noise multiplier z": cfg.noise_multiplier,
               "per-user mechanism": (f"Gaussian.from_noise_multiplier({cfg.noise_multiplier:g})"
                                      f" = Gaussian({cfg.noise_multiplier / 2:g}), sigma per unit "
                                      "l2 diameter"),
               **_training_setting(cfg, delta),
               "mean participants per round": f"{sum(hist['participants']) / cfg.rounds:.1f}"}
    not_learned = learning_check(table[-1]["test_accuracy"], data.classes, cfg,
                                 _n_params(hist["model"]),
                                 sum(hist["participants"]) / cfg.rounds)
    notes = ([f"**Warning**: {not_learned}"] if not_learned else []) + [
             f"ε is computed at {len(pts)} checkpoint rounds (half log-spaced, half evenly "
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
    if not_learned:
        _say(echo, f"warning: {not_learned}")
    _say(echo, f"wall {timing['wall']:.1f} s (training {train_wall:.1f} s, accounting "
               f"{account_wall:.1f} s), CPU {timing['cpu']:.1f} s")
    _say(echo, f"wrote {outdir / CSV_NAME}, {outdir / PNG_NAME}, {outdir / SUMMARY_NAME}")
    return {"table": table, "final": final, "timing": timing, "config": cfg, "n": n,
            "paths": [outdir / CSV_NAME, outdir / PNG_NAME, outdir / SUMMARY_NAME],
            "history": hist, "epsilon": eps}


def run_tradeoff(dataset: str = "digits", out="fl_demo", *, noise_multipliers=(0.5, 1, 2, 4),
                 delta: float = 1e-5, upper: str = "fast", echo: bool = True,
                 progress: bool = True, command: str = "", **overrides) -> dict:
    """Train once per noise multiplier and plot the final test accuracy against the final ε
    of each accounting method (upper / estimate / central): the privacy-utility trade-off.

    Writes ``tradeoff.csv``, ``tradeoff.png`` and ``summary.md`` into ``out``. Each run has
    the same data, rounds, check-in rate, clipping, learning rate and random seed; only z
    changes.
    The noise of the average is drawn once per round unless ``fast_noise=False`` (the same
    law as per-user noise, docs/fl.md). ε is computed once per run, at its last round.
    """
    from ...core import _validate as v
    delta = v.probability("delta", delta)
    zs = [v.real("noise_multipliers", z, lo=0.0, lo_open=True) for z in noise_multipliers]
    if not 2 <= len(zs) <= 8 or len(set(zs)) != len(zs):
        raise ValueError("noise_multipliers must be 2 to 8 distinct values (3 to 5 make a "
                         f"readable trade-off); got {list(noise_multipliers)!r}")
    if upper not in ("fast", "best"):
        raise ValueError(f"upper must be 'fast' or 'best'; got {upper!r}")
    t_start, c_start = time.perf_counter(), time.process_time()
    base = DEFAULTS["mnist" if dataset.startswith("mnist") else "digits"]
    overrides = _renamed_sigma(dict(overrides))
    overrides.pop("noise_multiplier", None)
    params = {**base, "fast_noise": True,
              **{k: x for k, x in overrides.items() if x is not None}}
    cfgs = [TrainConfig(**{**params, "noise_multiplier": z}) for z in sorted(zs)]
    data = load_dataset(dataset)
    n, c0 = data.n, cfgs[0]
    _say(echo, data.describe())
    _say(echo, f"trade-off over noise multipliers z = {', '.join(f'{c.noise_multiplier:g}' for c in cfgs)}: "
               f"each run: every user checks in w.p. {c0.checkin:g}, clips to C = {c0.clip:g}, "
               f"adds N(0, (z·C)² I); shuffled; server averages; {c0.rounds} rounds, lr "
               f"{c0.lr:g}, model {c0.model}, seed {c0.seed}")
    _say(echo, "neighbours: replace-one for every line of the figure (per-user mechanism "
               "Gaussian.from_noise_multiplier(z) = Gaussian(z/2)); the central DP-SGD line "
               "uses the same z with a trusted server")
    runs, train_wall, account_wall = [], 0.0, 0.0
    for cfg in cfgs:
        t0 = time.perf_counter()
        final = epsilon_at(n, cfg.checkin, cfg.noise_multiplier, cfg.rounds, delta, upper)
        account_wall += time.perf_counter() - t0
        t1 = time.perf_counter()
        hist = train(data, cfg, progress=progress)
        train_wall += time.perf_counter() - t1
        acc = hist["accuracy"][-1]
        why = learning_check(acc, data.classes, cfg, _n_params(hist["model"]),
                             sum(hist["participants"]) / cfg.rounds)
        runs.append({"z": cfg.noise_multiplier, "rounds": cfg.rounds, "accuracy": acc,
                     "learned": why is None, "why": why, "final": final})
        e = {k: fmt(final[k][0]) for k in ("upper", "estimate", "central_replace_one")}
        _say(echo, f"z = {cfg.noise_multiplier:g}: test accuracy {acc:.4f}; epsilon at "
                   f"delta = {delta:g} after {cfg.rounds} rounds: upper {e['upper']} "
                   f"[{final['upper'][1]}], estimate {e['estimate']}, central "
                   f"{e['central_replace_one']} (all replace-one)")
        if why:
            _say(echo, f"warning: z = {cfg.noise_multiplier:g}: {why}")
    outdir = pathlib.Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    write_tradeoff_csv(outdir / TRADEOFF_CSV, runs)
    title = (f"{data.name}: n = {n} users, check-in γ = {c0.checkin:g}, C = {c0.clip:g}, "
             f"{c0.rounds} rounds, lr {c0.lr:g}, seed {c0.seed}; one point per noise "
             f"multiplier z; replace-one")
    write_tradeoff_png(outdir / TRADEOFF_PNG, runs, delta, title)
    timing = _timing(t_start, c_start, train_wall, account_wall)
    setting = {"dataset": data.describe(), "rounds": c0.rounds, "check-in rate γ": c0.checkin,
               "noise multipliers z": ", ".join(f"{c.noise_multiplier:g}" for c in cfgs),
               "per-user mechanism": "Gaussian.from_noise_multiplier(z) = Gaussian(z/2), "
                                     "sigma per unit l2 diameter (replace-one)",
               **_training_setting(c0, delta)}
    notes = [r["why"] and f"**Warning** (z = {r['z']:g}): {r['why']}" for r in runs]
    notes = [x for x in notes if x] + [
        "upper: the library's valid upper bound for Shuffle(Gaussian(z/2), n, CheckIn(γ)) "
        + ("over every composition route" if upper == "best" else
           "over its fast routes (RDP composition and the unamplified Gaussian's exact "
           "composition; `--upper best` adds PLD)") + "; estimate: the homogeneous-pair "
        "estimate, not a guarantee; central: DP-SGD with a trusted server adding the same "
        "noise once to the sum (dp_accounting PLD), a different trust model. Every ε in the "
        "figure is replace-one; the add/remove central column is dp_accounting's and Opacus' "
        "default relation, for reference."]
    command = command or (
        f"shuffledp fl-demo --dataset {dataset} --noise-multipliers "
        f"{','.join(f'{c.noise_multiplier:g}' for c in cfgs)} --rounds {c0.rounds} "
        f"--checkin {c0.checkin:g} --clip {c0.clip:g} --lr {c0.lr:g} --seed {c0.seed} "
        f"--delta {delta:g} --model {c0.model} --hidden {c0.hidden} --upper {upper} "
        f"{'--fast-noise' if c0.fast_noise else '--no-fast-noise'} --out {outdir}")
    write_tradeoff_summary(outdir / SUMMARY_NAME, setting=setting, runs=runs, timing=timing,
                           command=command, notes=notes)
    for line in tradeoff_lines(runs):
        _say(echo, line)
    _say(echo, f"wall {timing['wall']:.1f} s (training {train_wall:.1f} s, accounting "
               f"{account_wall:.1f} s), CPU {timing['cpu']:.1f} s")
    _say(echo, f"wrote {outdir / TRADEOFF_CSV}, {outdir / TRADEOFF_PNG}, {outdir / SUMMARY_NAME}")
    return {"runs": runs, "timing": timing, "n": n,
            "paths": [outdir / TRADEOFF_CSV, outdir / TRADEOFF_PNG, outdir / SUMMARY_NAME]}
