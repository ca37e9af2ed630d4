"""Parameter sweeps: every bound (or one) over a grid, as rows for a CSV.

Runs through joblib when it is installed (extra ``sweep``), so a user can move a sweep to
a cluster without code changes::

    from joblib import parallel_config
    with parallel_config(backend="dask"):      # or "ray", "loky", ...
        rows = shuffledp.sweep.run(grid)

Without joblib the sweep runs sequentially. Every row carries bound, kind and validity class;
a grid point where no bound (or the requested one) applies is one row with empty kind and
epsilon and the reason in ``not_applicable``.
"""

from __future__ import annotations

import csv
import itertools
import math
import os
from typing import Iterable

from ._progress import Progress
from .accountant import epsilon as _epsilon
from .cli import mechanism_from_spec
from .errors import NotApplicableError
from .protocols import CheckIn, Shuffle, WithoutReplacement

__all__ = ["grid", "evaluate", "run", "write_csv", "add_cli"]

FIELDS = ["mechanism", "eps0", "n", "rounds", "delta", "sampling", "bound", "kind",
          "composition", "epsilon", "chosen", "valid_for", "scope", "seconds",
          "not_applicable"]


def grid(**axes) -> list[dict]:
    """Cartesian product of the given axes: grid(eps0=[.5, 1], n=[1e4]) -> list of points."""
    keys = list(axes)
    vals = [list(v) if isinstance(v, (list, tuple)) else [v] for v in axes.values()]
    return [dict(zip(keys, combo)) for combo in itertools.product(*vals)]


def _protocol(point) -> Shuffle:
    mech = mechanism_from_spec(str(point.get("mechanism", "ldp")), point.get("eps0"))
    sampling = None
    if point.get("checkin") is not None:
        sampling = CheckIn(point["checkin"])
    elif point.get("sample_size") is not None:
        sampling = WithoutReplacement(point["sample_size"])
    return Shuffle(mech, int(point["n"]), sampling=sampling)


def evaluate(point: dict) -> list[dict]:
    """All candidates (or ``point['bound']``) at one grid point, as CSV rows."""
    proto = _protocol(point)
    delta = float(point["delta"])
    T = int(point.get("rounds", 1))
    try:
        r = _epsilon(proto, delta, T, bound=point.get("bound"),
                     composition=point.get("composition"), lower=bool(point.get("lower", True)))
    except NotApplicableError as exc:
        # No number: kind, epsilon and valid_for stay empty (never a NaN or a reason in a
        # field that means something else); the reason has its own column.
        return [{**_base(point, proto, delta, T), "bound": point.get("bound", ""), "kind": "",
                 "epsilon": None, "valid_for": "", "scope": "", "composition": "",
                 "chosen": False, "seconds": 0.0, "not_applicable": str(exc)}]
    rows = []
    for c in r.candidates:
        rows.append({**_base(point, proto, delta, T), "bound": c.bound, "kind": c.kind,
                     "composition": c.composition, "epsilon": c.epsilon,
                     "chosen": c.bound == r.bound and c.kind == r.kind,
                     "valid_for": c.valid_for, "scope": c.scope,
                     "seconds": round(c.seconds, 4), "not_applicable": ""})
    return rows


def _base(point, proto, delta, T):
    s = proto.sampling
    return {"mechanism": point.get("mechanism", "ldp"), "eps0": point.get("eps0"), "n": proto.n,
            "rounds": T, "delta": delta,
            "sampling": "" if s is None else (f"checkin:{s.rate}" if isinstance(s, CheckIn)
                                              else f"wor:{s.size}")}


def run(points: Iterable[dict], n_jobs: int = 1, progress: bool | None = None,
        desc: str = "sweep") -> list[dict]:
    """Evaluate every point; parallel through joblib when ``n_jobs != 1`` and it is installed."""
    points = list(points)
    rows: list[dict] = []
    with Progress(len(points), desc, enabled=progress) as bar:
        try:
            if n_jobs == 1:
                raise ImportError
            from joblib import Parallel, delayed
        except ImportError:
            for p in points:
                rows.extend(evaluate(p))
                bar.update()
            return rows
        par = Parallel(n_jobs=n_jobs, return_as="generator")
        for out in par(delayed(evaluate)(p) for p in points):
            rows.extend(out)
            bar.update()
    return rows


def write_csv(rows: list[dict], path, fields=None) -> None:
    fields = fields or (FIELDS if rows and set(FIELDS) <= set(rows[0]) else list(rows[0]) if rows else FIELDS)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def _list(conv):
    def parse(s):
        import argparse
        try:
            vals = [conv(x) for x in s.split(",") if x.strip()]
        except (ValueError, OverflowError):
            # int(float("1e400")) overflows: report it as bad input, not a traceback.
            raise argparse.ArgumentTypeError(
                f"expected a comma-separated list of finite numbers; got {s!r}") from None
        if any(isinstance(x, float) and not math.isfinite(x) for x in vals):
            raise argparse.ArgumentTypeError(
                f"expected a comma-separated list of finite numbers; got {s!r}")
        return vals
    return parse


def _check_out(path: str) -> None:
    """Fail before the sweep (not after it) when the CSV cannot be written."""
    d = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"--out must be a file path; got the directory {path!r}")
    if not os.path.isdir(d):
        raise ValueError(f"--out: cannot write {path!r}: the directory {d!r} does not exist")
    if not os.access(d, os.W_OK):
        raise ValueError(f"--out: cannot write {path!r}: the directory {d!r} is not writable")


def add_cli(sub, protocol_args, num, int_like):
    import argparse
    p = sub.add_parser("sweep", help="every bound over a parameter grid, as CSV",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="examples:\n"
                              "  shuffledp sweep --eps0 0.5,1,2 --n 1e4,1e5 --delta 1e-6 --out s.csv\n"
                              "  shuffledp sweep --mechanism rr:2,rr:3 --eps0 1 --n 1e4 "
                              "--delta 1e-6 --rounds 1,10 --jobs 2\n\n"
                              "One row per bound and grid point: bound, kind, epsilon, the class "
                              "it is valid for\n(valid_for, scope) and the composition route. "
                              "A point where the bound does not\napply has empty kind and "
                              "epsilon and the reason in not_applicable.")
    p.add_argument("--eps0", type=_list(float), default=None,
                   help="comma-separated eps0 values, e.g. --eps0 0.5,1,2")
    p.add_argument("--n", type=_list(lambda s: int(float(s))), required=True,
                   help="comma-separated numbers of users, e.g. --n 1e4,1e5")
    p.add_argument("--delta", type=_list(float), required=True,
                   help="comma-separated deltas in (0, 1), e.g. --delta 1e-6")
    p.add_argument("--rounds", type=_list(lambda s: int(float(s))), default=[1],
                   help="comma-separated numbers of rounds, e.g. --rounds 1,10,100")
    p.add_argument("--mechanism", type=_list(str), default=["ldp"],
                   help="comma-separated: ldp, rr:K, gaussian:SIGMA (per unit l2 diameter), "
                        "gaussian-nm:Z (noise multiplier Z = 2 SIGMA), e.g. --mechanism ldp,rr:3")
    p.add_argument("--bound", default=None, help="only this bound, e.g. --bound fmt20")
    p.add_argument("--jobs", type=int, default=1,
                   help="parallel jobs through joblib (-1: all cores), e.g. --jobs 2")
    p.add_argument("--backend", default=None,
                   help="joblib backend (loky, threading, dask, ray, ...), e.g. --backend loky")
    p.add_argument("--out", default="sweep.csv", help="output CSV file, e.g. --out sweep.csv")

    def run_cli(a):
        _check_out(a.out)
        pts = grid(mechanism=a.mechanism, eps0=a.eps0 or [None], n=a.n, delta=a.delta,
                   rounds=a.rounds)
        for pt in pts:
            if a.bound:
                pt["bound"] = a.bound
        if a.backend:
            from joblib import parallel_config
            with parallel_config(backend=a.backend):
                rows = run(pts, n_jobs=a.jobs)
        else:
            rows = run(pts, n_jobs=a.jobs)
        try:
            write_csv(rows, a.out)
        except OSError as exc:
            raise ValueError(f"--out: cannot write {a.out!r}: {exc.strerror or exc}") from None
        print(f"wrote {len(rows)} rows for {len(pts)} grid points to {a.out}")
        return 0

    p.set_defaults(func=run_cli)
