"""Parameter sweeps: every bound (or one) over a grid, as rows for a CSV.

A sweep runs here, on local worker processes (joblib, extra ``sweep``), on a Dask cluster
or on a Ray cluster (extra ``cluster``); the rows are the same whichever runs them, and
come back in the grid's order (docs/scale.md)::

    pts = shuffledp.apps.sweep.Grid(eps0=[0.5, 1, 2], n=[1e4, 1e5], delta=[1e-6], rounds=[1, 10])
    rows = shuffledp.apps.sweep.run(pts)                                   # here
    rows = shuffledp.apps.sweep.run(pts, backend="dask", scheduler="tcp://10.0.0.5:8786")
    shuffledp.apps.sweep.to_csv(pts, "s.csv", backend="dask", scheduler="local:2")

Every row carries its inputs, the bound, its kind and validity class; a grid point where no
bound (or the requested one) applies is one row with empty kind and epsilon and the reason
in ``not_applicable``. A point's ``lower`` says whether lower bounds and estimates were
computed there (the Python API does by default, ``shuffledp sweep`` only with ``--lower``).

``to_csv`` streams: each point's rows are appended to the file as soon as it and every point
before it are done (memory does not grow with the number of points), and a second run on
the same file skips the points already in it (``resume``).
"""

from __future__ import annotations

import collections
import csv
import io
import itertools
import math
import os
from typing import Iterable

from ..core._progress import Progress
from ..accounting.accountant import epsilon as _epsilon
from ..core.errors import NotApplicableError
from ..core.mechanisms import Gaussian
from ..core.protocols import CheckIn, Shuffle, WithoutReplacement

__all__ = ["Grid", "grid", "evaluate", "evaluate_task", "stream", "run", "to_csv", "write_csv", "point_key",
           "add_cli", "FIELDS", "KEY_FIELDS", "CAL_FIELDS", "CAL_KEY_FIELDS"]

#: The grid point's inputs: one point's rows share them, and they name it when a sweep
#: resumes (``point_key``).
KEY_FIELDS = ["mechanism", "eps0", "sigma", "noise_multiplier", "n", "rounds", "delta",
              "sampling", "reports_per_user", "dummies", "honest", "only_bound"]
FIELDS = ["mechanism", "eps0", "sigma", "noise_multiplier", "n", "rounds", "delta", "sampling",
          "reports_per_user", "dummies", "honest", "bound", "kind", "composition", "epsilon", "chosen", "valid_for", "scope", "seconds",
          "not_applicable", "lower", "only_bound"]

#: A calibration grid (``calibrate`` axis, docs/scale.md): one row per point, the
#: calibrated parameter in ``value`` and its input column left empty.
CAL_KEY_FIELDS = ["calibrate", "target_epsilon", "mechanism", "eps0", "sigma",
                  "noise_multiplier", "n", "rounds", "delta", "sampling", "reports_per_user",
                  "dummies", "honest"]
CAL_FIELDS = CAL_KEY_FIELDS + ["value", "value_noise_multiplier", "epsilon", "bound", "kind",
                               "valid_for", "relation", "note", "seconds", "not_applicable"]
#: What a calibration grid may calibrate, and the input it replaces.
CALIBRATED = {"eps0": "eps0", "sigma": "sigma", "rounds": "rounds", "users": "n"}


class Grid:
    """The Cartesian product of the given axes, walked lazily (the last axis fastest).

    ``Grid(eps0=[.5, 1], n=[1e4], rounds=[1, 10])`` has ``len`` 4 and yields a fresh dict
    per point each time it is iterated, so a sweep of millions of points never holds them
    all. Order the axes so that points sharing a protocol are neighbours (rounds last):
    the bounds' caches then serve the next point.
    """

    def __init__(self, **axes):
        self.keys = list(axes)
        self.values = [list(v) if isinstance(v, (list, tuple, range)) else [v]
                       for v in axes.values()]

    def __len__(self):
        return math.prod(len(v) for v in self.values)

    def __iter__(self):
        for combo in itertools.product(*self.values):
            yield dict(zip(self.keys, combo))


def grid(**axes) -> list[dict]:
    """Cartesian product of the given axes: grid(eps0=[.5, 1], n=[1e4]) -> list of points."""
    return list(Grid(**axes))


def _sigma(point):
    """σ of a Gaussian point, from ``sigma`` or from an Opacus / dp_accounting noise
    multiplier ``noise_multiplier`` (None for other mechanisms)."""
    s, z = point.get("sigma"), point.get("noise_multiplier")
    if s is not None and z is not None:
        raise ValueError("give a point sigma or noise_multiplier, not both; got "
                         f"sigma={s!r}, noise_multiplier={z!r}")
    if z is None:
        return s
    # The one conversion of the library (validates z and names the parameter).
    from ..core.mechanisms import Gaussian
    return Gaussian.from_noise_multiplier(z).sigma


def _mechanism(point):
    spec = str(point.get("mechanism", "ldp"))
    sigma = _sigma(point)
    if sigma is None:
        from .cli import mechanism_from_spec   # not at import: `python -m shuffledp.apps.cli`
        return mechanism_from_spec(spec, point.get("eps0"))   # would load the CLI twice
    if spec.strip().lower() not in ("gaussian", "gauss"):
        raise ValueError("sigma and noise_multiplier set the Gaussian mechanism; the point's "
                         f"mechanism must be 'gaussian'; got {spec!r}")
    if point.get("eps0") is not None:
        raise ValueError("eps0 does not apply to the Gaussian mechanism (its privacy is set "
                         f"by sigma); got eps0={point['eps0']!r}")
    return Gaussian(sigma)


def _sampling(point):
    if point.get("checkin") is not None and point.get("sample_size") is not None:
        raise ValueError("a point has at most one of checkin and sample_size; got "
                         f"checkin={point['checkin']!r}, sample_size={point['sample_size']!r}")
    if point.get("checkin") is not None:
        return CheckIn(point["checkin"])
    if point.get("sample_size") is not None:
        return WithoutReplacement(point["sample_size"])
    return None


def _protocol(point) -> Shuffle:
    mech = _mechanism(point)
    return Shuffle(mech, int(point["n"]), sampling=_sampling(point), **_deployment(point))


#: The deployment fields of ``Shuffle`` (docs/deployments.md) a point may set.
_DEPLOY_KEYS = ("reports_per_user", "dummies", "honest")


def _deployment(point) -> dict:
    """The point's deployment fields that are set (a plain point gives none)."""
    return {k: int(point[k]) for k in _DEPLOY_KEYS if point.get(k) is not None}


def _num(x, conv):
    """The CSV form of an input: converted as the protocol stores it when it can be."""
    try:
        return conv(x)
    except (TypeError, ValueError, OverflowError):
        return x


def _inputs(point) -> dict:
    """The point's input columns, as they are written (and read back when resuming)."""
    s = _sigma(point)
    if point.get("checkin") is not None:
        sampling = f"checkin:{_num(point['checkin'], float)}"
    elif point.get("sample_size") is not None:
        sampling = f"wor:{_num(point['sample_size'], int)}"
    else:
        sampling = ""
    mech = point.get("mechanism", "ldp")
    if s is None and str(mech).strip().lower().startswith(("gaussian:", "gauss:")):
        s = str(mech).partition(":")[2]
    return {"mechanism": mech,
            "eps0": None if point.get("eps0") is None else _num(point["eps0"], float),
            "sigma": None if s is None else _num(s, float),
            "noise_multiplier": (None if point.get("noise_multiplier") is None
                                 else _num(point["noise_multiplier"], float)),
            "n": _num(point["n"], int), "rounds": _num(point.get("rounds", 1), int),
            "delta": _num(point["delta"], float), "sampling": sampling,
            **{k: None if point.get(k) is None else _num(point[k], int) for k in _DEPLOY_KEYS},
            "only_bound": point.get("bound") or ""}


def _cell(x) -> str:
    return "" if x is None else str(x)


def point_key(point: dict) -> tuple:
    """The strings a point's input columns hold in the CSV: what a resumed sweep matches."""
    if point.get("calibrate"):
        ins = _cal_inputs(point)
        return tuple(_cell(ins[k]) for k in CAL_KEY_FIELDS)
    ins = _inputs(point)
    return tuple(_cell(ins[k]) for k in KEY_FIELDS)


def evaluate(point: dict) -> list[dict]:
    """All candidates (or ``point['bound']``) at one grid point, as CSV rows.

    ``point['lower']`` (default True) also computes lower bounds and estimates. A point
    with a ``calibrate`` key is a calibration (one row, ``calibrate_point``)."""
    if point.get("calibrate"):
        return [calibrate_point(point)]
    proto = _protocol(point)
    delta = float(point["delta"])
    T = int(point.get("rounds", 1))
    lower = bool(point.get("lower", True))
    base = {**_inputs(point), "n": proto.n, "rounds": T, "delta": delta, "lower": lower}
    # ``relation`` (the report's scenario key) rides along in the row, not in KEY_FIELDS:
    # a streamed sweep CSV is always replace-one.
    kw = {"relation": point["relation"]} if point.get("relation") else {}
    if kw:
        base["relation"] = point["relation"]
    try:
        r = _epsilon(proto, delta, T, bound=point.get("bound"),
                     composition=point.get("composition"), lower=lower, **kw)
    except NotApplicableError as exc:
        # No number: kind, epsilon and valid_for stay empty (never a NaN or a reason in a
        # field that means something else); the reason has its own column.
        return [{**base, "bound": point.get("bound", ""), "kind": "",
                 "epsilon": None, "valid_for": "", "scope": "", "composition": "",
                 "chosen": False, "seconds": 0.0, "not_applicable": str(exc)}]
    rows = []
    for c in r.candidates:
        rows.append({**base, "bound": c.bound, "kind": c.kind,
                     "composition": c.composition, "epsilon": c.epsilon,
                     "chosen": c.bound == r.bound and c.kind == r.kind,
                     "valid_for": c.valid_for, "scope": c.scope,
                     "seconds": round(c.seconds, 4), "not_applicable": ""})
    return rows


def stream(points: Iterable[dict], *, backend=None, jobs=None, scheduler=None, address=None,
           progress: bool | None = None, total: int | None = None, desc: str = "sweep"):
    """Yield ``(point, rows)`` for every point, in the points' order, as they complete.

    ``backend``: None (sequential, or loky when ``jobs`` > 1), ``"loky"``,
    ``"multiprocessing"``, ``"threading"`` (joblib, ``jobs`` workers), ``"dask"``
    (``scheduler``: an address, ``"local:N"`` or a ``distributed.Client``; default
    ``DASK_SCHEDULER_ADDRESS``) or ``"ray"`` (``address``; default ``RAY_ADDRESS`` or a new
    local instance), or a backend already opened with ``shuffledp.apps._cluster.open_backend``.
    A progress bar is drawn on a terminal (``progress=None``) or when asked.
    """
    from . import _cluster
    if total is None and hasattr(points, "__len__"):
        total = len(points)
    own = not isinstance(backend, _cluster.Backend)
    be = (_cluster.open_backend(backend, jobs=jobs, scheduler=scheduler, address=address)
          if own else backend)
    try:
        # The points are walked once, lazily, by the backend, in tasks of neighbouring
        # points; each task is held only until its answers are yielded (the backends keep
        # a bounded window of tasks in flight).
        held = collections.deque()
        limit = 1 if be.slots <= 1 else _task_limit(total, be.slots)

        def feed():
            for task in _tasks(points, limit):
                held.append(task)
                yield task
        with Progress(total, desc, enabled=progress) as bar:
            for out in be.imap(evaluate_task, feed()):
                task = held.popleft()
                bar.update(len(task))
                yield from zip(task, out)
    finally:
        if own:
            be.close()


#: Protocol inputs: points that agree on them share the bounds' caches (pairs, RDP terms).
_PROTOCOL_KEYS = ("mechanism", "eps0", "sigma", "noise_multiplier", "n", "checkin",
                  "sample_size", "reports_per_user", "dummies", "honest")


def _task_limit(total, slots: int) -> int:
    """Points per task at most: a whole protocol's points when there are enough tasks to
    keep every worker busy (four per worker), fewer on a large cluster."""
    if total is None:
        return 8
    return max(1, math.ceil(total / (4 * slots)))


def _tasks(points, limit: int):
    """Consecutive points sharing a protocol, at most ``limit`` per task.

    One worker then answers them in the grid's order, as a sequential run does: the pair
    and the RDP terms built for the first point serve the next rounds and deltas (about a
    third of the CPU time of a 2-worker sweep went to rebuilding them when neighbouring
    points went to different workers), and each point sees the caches it would see in a
    sequential run."""
    buf, key = [], None
    for p in points:
        k = tuple(p.get(x) for x in _PROTOCOL_KEYS)
        if buf and k != key:
            yield buf
            buf = []
        buf.append(p)
        key = k
        if len(buf) >= limit:        # full: out now (no look-ahead when limit is 1)
            yield buf
            buf = []
    if buf:
        yield buf


def _cal_what(point) -> str:
    what = point["calibrate"]
    if what not in CALIBRATED:
        raise ValueError("calibrate must be one of eps0, sigma, rounds, users; got "
                         f"calibrate={what!r}")
    given = CALIBRATED[what]
    if point.get(given) is not None or (what == "sigma"
                                          and point.get("noise_multiplier") is not None):
        raise ValueError(f"a point that calibrates {what} cannot also set it; got "
                         f"{given}={point.get(given, point.get('noise_multiplier'))!r}")
    return what


def _cal_inputs(point) -> dict:
    """A calibration point's input columns (the calibrated one empty)."""
    what = _cal_what(point)
    p = dict(point)
    if what == "sigma":
        p["mechanism"] = "gaussian"
    ins = _inputs({**p, "n": p.get("n", 0), "rounds": p.get("rounds", 1)})
    ins[CALIBRATED[what]] = None
    return {"calibrate": what, "target_epsilon": _num(point["epsilon"], float), **ins}


def _eps0_family(spec: str):
    """(k, family) for ``calibrate.eps0``: ``ldp`` -> (None, None), ``rr:K`` -> (K, None),
    an encoder ``oue:D`` ... -> (None, its member at eps0 = 1: d and k are kept)."""
    kind = spec.partition(":")[0].strip().lower()
    if kind == "ldp":
        return None, None
    if kind in ("gaussian", "gauss", "gaussian-nm", "gaussian_nm", "matrix"):
        raise ValueError("calibrate eps0: the mechanism must be a family with an eps0 "
                         "parameter (ldp, rr:K, oue:D, rappor:D, hr:D, olh:D); got "
                         f"mechanism={spec!r}")
    from .cli import mechanism_from_spec
    m = mechanism_from_spec(spec, 1.0)
    if kind in ("rr", "krr"):
        return m.k, None
    return None, m


def calibrate_point(point: dict) -> dict:
    """One point of a calibration grid as one CSV row (``CAL_FIELDS``).

    ``point['calibrate']`` names the parameter (``eps0``, ``sigma``, ``rounds``, ``users``),
    ``point['epsilon']`` the target; the other keys are the protocol's, as in ``evaluate``,
    without the calibrated one. The row holds ``sd.calibrate.<what>``'s value (on the
    certified side), the certified ε there and the bound that certifies it; a point with
    no valid answer has an empty value and the reason in ``not_applicable``."""
    import time
    from ..accounting import calibrate as cal
    what = _cal_what(point)
    row = {**_cal_inputs(point), "value": None, "value_noise_multiplier": None,
           "epsilon": None, "bound": "", "kind": "", "valid_for": "", "relation": "replace-one",
           "note": "",
           "seconds": 0.0, "not_applicable": ""}
    target, delta = float(point["epsilon"]), float(point["delta"])
    T = int(point.get("rounds", 1))
    sampling, dep = _sampling(point), _deployment(point)
    t0 = time.perf_counter()
    try:
        if what == "eps0":
            k, fam = _eps0_family(str(point.get("mechanism", "ldp")))
            c = cal.eps0(int(point["n"]), target, delta, T, k=k, mechanism=fam,
                         sampling=sampling, **dep)
        elif what == "sigma":
            c = cal.sigma(int(point["n"]), target, delta, T, sampling=sampling, **dep)
        elif what == "rounds":
            c = cal.rounds(_protocol(point), target, delta)
        else:
            if "honest" in dep:
                raise ValueError("calibrate users cannot take honest (the number of honest "
                                 "users depends on the number calibrated); got "
                                 f"honest={dep['honest']!r}")
            c = cal.users(_mechanism(point), target, delta, T, sampling=sampling, **dep)
    except NotApplicableError as exc:
        row["not_applicable"] = str(exc)
        return row
    row.update(value=c.value, value_noise_multiplier=c.noise_multiplier, epsilon=c.epsilon,
               bound=c.bound, kind="upper", valid_for=c.valid_for or "", note=c.note or "",
               seconds=round(time.perf_counter() - t0, 4))
    return row


def evaluate_task(points: list) -> list:
    """``[evaluate(p) for p in points]``: one task of a parallel sweep."""
    return [evaluate(p) for p in points]


def run(points: Iterable[dict], n_jobs: int = 1, progress: bool | None = None,
        desc: str = "sweep", *, backend=None, scheduler=None, address=None) -> list[dict]:
    """Every point's rows, in the points' order (``stream`` for the backends): joblib's loky
    workers when ``n_jobs != 1`` (-1: all cores), or the given ``backend``."""
    jobs = None if (n_jobs == 1 and backend in ("dask", "ray")) else n_jobs
    rows: list[dict] = []
    for _, r in stream(points, backend=backend, jobs=jobs, scheduler=scheduler,
                       address=address, progress=progress, desc=desc):
        rows.extend(r)
    return rows


def write_csv(rows: list[dict], path, fields=None) -> None:
    fields = fields or (FIELDS if rows and set(FIELDS) <= set(rows[0]) else
                        CAL_FIELDS if rows and set(CAL_FIELDS) <= set(rows[0]) else
                        list(rows[0]) if rows else FIELDS)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


# -- streaming to a CSV, resumable -------------------------------------------------------
def _csv_text(rows, header=False, fields=None) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields or FIELDS, extrasaction="ignore",
                       lineterminator="\n")
    if header:
        w.writeheader()
    for r in rows:
        w.writerow(r)
    return buf.getvalue()


def _read_done(path, fields=None) -> tuple[dict, int]:
    """Points already in a sweep CSV: ({key: {lower flags}}, byte length of the complete
    part). A file that does not end with a newline was cut while a point was written: that
    last point is dropped (and computed again)."""
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        return {}, 0
    fields = fields or FIELDS
    keys = CAL_KEY_FIELDS if fields is CAL_FIELDS else KEY_FIELDS
    header = _csv_text([], header=True, fields=fields).encode()
    if not data.startswith(header):
        first = data.split(b"\n", 1)[0].decode("utf-8", "replace")[:200]
        raise ValueError(f"--out {str(path)!r} exists and is not a sweep CSV with this "
                         f"version's columns (its first line is {first!r}); give another "
                         "--out, or --overwrite to replace it")
    ends = [0]

    def lines():
        pos = len(header)
        for line in data[len(header):].splitlines(keepends=True):
            pos += len(line)
            ends[0] = pos
            yield line.decode("utf-8")
    blocks = []                              # [key, lower flag, end offset] per point
    for row in csv.DictReader(lines(), fieldnames=fields):
        key = tuple(row.get(k) or "" for k in keys)
        low = row.get("lower") == "True"
        if blocks and blocks[-1][0] == key and blocks[-1][1] == low:
            blocks[-1][2] = ends[0]
        else:
            blocks.append([key, low, ends[0]])
    if blocks and not data.endswith(b"\n"):
        blocks.pop()
    done: dict = {}
    for key, low, _ in blocks:
        done.setdefault(key, set()).add(low)
    end = blocks[-1][2] if blocks else len(header)
    return done, end


def _is_done(done: dict, point) -> bool:
    flags = done.get(point_key(point))
    if point.get("calibrate"):
        return bool(flags)
    # A point computed with lower bounds also answers the same point without them.
    return bool(flags) and (True in flags or not bool(point.get("lower", True)))


def _check_out(path) -> None:
    """Fail before the sweep (not after it) when the CSV cannot be written."""
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"--out must be a file path; got the directory {path!r}")
    if not os.path.isdir(d):
        raise ValueError(f"--out: cannot write {path!r}: the directory {d!r} does not exist")
    if not os.access(d, os.W_OK):
        raise ValueError(f"--out: cannot write {path!r}: the directory {d!r} is not writable")


def to_csv(points: Iterable[dict], path, *, resume: bool = True, backend=None, jobs=None,
           scheduler=None, address=None, progress: bool | None = None,
           desc: str = "sweep") -> dict:
    """Evaluate the points and append each one's rows to the CSV ``path`` as soon as it is
    done, in the points' order; returns a summary (points, skipped, rows, seconds, ...).

    With ``resume`` (default) the points whose rows are already in ``path`` (same inputs,
    ``point_key``) are skipped; otherwise the file is replaced. ``points`` may be a one-pass
    iterator; a re-iterable (a list, a ``Grid``) is walked once more first, to count what is
    left for the progress bar. Backends as in ``stream``.
    """
    import time
    _check_out(path)
    fields = CAL_FIELDS if _is_calibration(points) else FIELDS
    done, end = ({}, 0)
    if resume and os.path.exists(path):
        done, end = _read_done(path, fields)
    skipped = [0]

    def todo():
        for p in points:
            if _is_done(done, p):
                skipped[0] += 1
            else:
                yield p
    total = None
    if iter(points) is not points:
        total = sum(1 for p in points if not _is_done(done, p))
    from . import _cluster
    own = not isinstance(backend, _cluster.Backend)
    # The backend first: a bad option or an unreachable cluster fails before the file is
    # touched.
    be = (_cluster.open_backend(backend, jobs=jobs, scheduler=scheduler, address=address)
          if own else backend)
    t0 = time.perf_counter()
    n_points = n_rows = 0
    try:
        try:
            f = open(path, "r+b" if end else "wb", buffering=0)
        except OSError as exc:
            raise ValueError(f"--out: cannot write {os.fspath(path)!r}: "
                             f"{exc.strerror or exc}") from None
        with f:
            if end:
                f.truncate(end)              # a point cut short by an interrupted run
                f.seek(end)
            else:
                _write_all(f, _csv_text([], header=True, fields=fields).encode())
            for _, rows in stream(todo(), backend=be, progress=progress, total=total,
                                  desc=desc):
                # One unbuffered write per point: a run stopped between points leaves
                # whole points in the file (and one stopped inside a write, a last line
                # without its newline, which the next run drops and computes again).
                _write_all(f, _csv_text(rows, fields=fields).encode())
                n_points += 1
                n_rows += len(rows)
    finally:
        if own:
            be.close()
    return {"out": os.fspath(path), "points": n_points, "rows": n_rows,
            "skipped": skipped[0],
            "seconds": round(time.perf_counter() - t0, 3)}


def _is_calibration(points) -> bool:
    """Whether ``points`` is a calibration grid (its CSV has CAL_FIELDS): read from a
    ``Grid``'s axes or a list's first point (a one-pass iterator of calibration points
    needs a ``Grid`` or a list)."""
    if isinstance(points, Grid):
        return "calibrate" in points.keys
    if isinstance(points, (list, tuple)) and points:
        return bool(points[0].get("calibrate"))
    return False


def _write_all(f, data: bytes):
    view = memoryview(data)
    while view:
        k = f.write(view)
        view = view[k:]


# -- command line --------------------------------------------------------------------------
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


def _int(s):
    return int(float(s))


def add_cli(sub, protocol_args, num, int_like, *, deployment_flags):
    """``shuffledp sweep``; ``deployment_flags`` is the CLI's declaration of the deployment
    flags (``cli.add_deployment_flags``, passed in: this module does not import the CLI)."""
    import argparse
    from . import _cluster
    p = sub.add_parser(
        "sweep", help="every upper bound over a parameter grid, as CSV (on a cluster too)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  shuffledp sweep --eps0 0.5,1,2 --n 1e4,1e5 --delta 1e-6 --out s.csv\n"
               "  shuffledp sweep --mechanism rr:2,rr:3 --eps0 1 --n 1e4 "
               "--delta 1e-6 --rounds 1,10 --jobs 2\n"
               "  shuffledp sweep --noise-multiplier 0.8,1.1 --n 6e4 --checkin 0.01 "
               "--rounds 100,1000 --delta 1e-5\n"
               "  shuffledp sweep --eps0 1,2 --n 1e5 --delta 1e-6 --backend dask "
               "--scheduler local:2\n"
               "  shuffledp sweep --eps0 1,2 --n 1e5 --delta 1e-6 --backend dask "
               "--scheduler tcp://10.0.0.5:8786\n"
               "  shuffledp sweep --calibrate eps0 --epsilon 0.5,1 --n 1e4,1e5 --rounds 1,10 "
               "--delta 1e-6 --out eps0.csv\n\n"
               "One row per bound and grid point: the point's inputs, bound, kind, epsilon, "
               "the class it\nis valid for (valid_for, scope) and the composition route; "
               "chosen marks the answer.\nBy default only the upper bounds that can be the "
               "answer are computed; --lower adds\nlower bounds and estimates (slower). A "
               "point where the bound does not apply has empty\nkind and epsilon and the "
               "reason in not_applicable.\n\n"
               "Rows are written as points finish, in the grid's order. Running the same "
               "command\nagain on the same --out skips the points already in it (an "
               "interrupted sweep\nresumes); --overwrite starts over. The rows do not "
               "depend on --jobs or --backend.\n\n"
               "--calibrate eps0|sigma|rounds|users --epsilon TARGETS: a calibration grid, one "
               "row per\npoint with the calibrated parameter (certified side) in 'value' and "
               "the bound that\ncertifies it; drop the calibrated parameter's own flag.\n\n"
               "Gaussian noise: --sigma is the noise per unit l2 diameter of the inputs; a "
               "noise\nmultiplier z (Opacus, dp_accounting: noise z*C for gradients "
               "clipped to norm C) is\nsigma = z/2. Neighbouring datasets differ in one "
               "user's input (replacement).")
    p.add_argument("--eps0", type=_list(float), default=None,
                   help="comma-separated eps0 values, e.g. --eps0 0.5,1,2")
    p.add_argument("--n", type=_list(_int), default=None,
                   help="comma-separated numbers of users, e.g. --n 1e4,1e5 (required "
                        "unless --calibrate users)")
    p.add_argument("--delta", type=_list(float), required=True,
                   help="comma-separated deltas in (0, 1), e.g. --delta 1e-6")
    p.add_argument("--rounds", type=_list(_int), default=None,
                   help="comma-separated numbers of rounds (default 1), e.g. --rounds 1,10,100")
    p.add_argument("--calibrate", default=None, choices=sorted(CALIBRATED),
                   help="a calibration grid: at every point the largest eps0 / smallest sigma "
                        "/ largest rounds / smallest n that meets --epsilon (one row per "
                        "point, the value in the column 'value'), e.g. --calibrate eps0")
    p.add_argument("--epsilon", type=_list(float), default=None, metavar="TARGETS",
                   help="with --calibrate: comma-separated target epsilons, e.g. --epsilon 0.5,1")
    p.add_argument("--mechanism", type=_list(str), default=None,
                   help="comma-separated: ldp (default), rr:K, oue:D, gaussian:SIGMA (per "
                        "unit l2 diameter), gaussian-nm:Z (noise multiplier Z = 2 SIGMA), ..., "
                        "e.g. --mechanism ldp,rr:3")
    p.add_argument("--sigma", type=_list(float), default=None, metavar="SIGMAS",
                   help="Gaussian mechanism, comma-separated sigmas per unit l2 diameter, "
                        "e.g. --sigma 2,4,8")
    p.add_argument("--noise-multiplier", type=_list(float), default=None, metavar="ZS",
                   help="Gaussian mechanism, comma-separated noise multipliers z "
                        "(sigma = z/2), e.g. --noise-multiplier 0.8,1.1")
    p.add_argument("--checkin", type=_list(float), default=None, metavar="RATES",
                   help="check-in sampling, comma-separated rates in (0, 1], "
                        "e.g. --checkin 0.01,0.1")
    p.add_argument("--sample-size", type=_list(_int), default=None, metavar="SIZES",
                   help="sampling without replacement, comma-separated sizes, "
                        "e.g. --sample-size 1000,5000")
    deployment_flags(p, "list", _list(_int))
    p.add_argument("--bound", default=None, help="only this bound, e.g. --bound fmt20")
    p.add_argument("--lower", action="store_true",
                   help="also compute lower bounds and estimates at every point (slower; "
                        "by default only the upper bounds that can be the answer)")
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes on this machine (joblib; -1: all cores), e.g. "
                        "--jobs 2; with --backend ray, the CPUs of a new local instance")
    p.add_argument("--backend", default=None, choices=_cluster.BACKENDS,
                   help="where the points run: sequential (default), loky / multiprocessing "
                        "/ threading (joblib, with --jobs), dask (with --scheduler), ray "
                        "(with --address or a local instance), e.g. --backend dask")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="Dask scheduler address, or local:N to start N worker processes "
                        "here (default: DASK_SCHEDULER_ADDRESS), e.g. --scheduler "
                        "tcp://10.0.0.5:8786 or --scheduler local:2")
    p.add_argument("--address", default=None,
                   help="Ray cluster address (default: RAY_ADDRESS, else a new local "
                        "instance), e.g. --address ray://10.0.0.5:10001")
    p.add_argument("--out", default="sweep.csv", help="output CSV file, e.g. --out sweep.csv")
    p.add_argument("--overwrite", action="store_true",
                   help="replace --out instead of resuming it")
    p.add_argument("--json", action="store_true",
                   help="print a one-line JSON summary (and no progress bar)")
    p.set_defaults(func=_run_cli)


def _cli_grid(a) -> Grid:
    if a.calibrate:
        return _cli_cal_grid(a)
    if a.epsilon is not None:
        raise ValueError("--epsilon (a target) needs --calibrate eps0|sigma|rounds|users; a "
                         "sweep computes epsilon at every point")
    if a.n is None:
        raise ValueError("--n is required (comma-separated numbers of users, e.g. --n 1e4,1e5)")
    a.rounds = a.rounds or [1]
    axes = _protocol_axes(a, gaussian=a.sigma is not None or a.noise_multiplier is not None,
                          cause="--sigma / --noise-multiplier")
    # rounds last: neighbouring points share a protocol, so the bounds' caches serve them.
    axes.update(delta=a.delta, rounds=a.rounds, lower=[bool(a.lower)])
    if a.bound:
        axes["bound"] = [a.bound]
    return Grid(**axes)


def _protocol_axes(a, *, gaussian: bool, cause: str) -> dict:
    """The protocol axes a sweep and a calibration grid share, from the flags given
    (mechanism; sigma, noise multiplier or eps0; n; sampling; deployment fields), after the
    checks on their combinations. ``cause``: the flag that selects the Gaussian mechanism,
    for the messages."""
    if a.sigma is not None and a.noise_multiplier is not None:
        raise ValueError("use at most one of --sigma and --noise-multiplier")
    if a.checkin is not None and a.sample_size is not None:
        raise ValueError("use at most one of --checkin and --sample-size")
    if gaussian and a.eps0 is not None:
        raise ValueError(f"--eps0 does not apply with {cause} (the Gaussian mechanism's "
                         "privacy is set by sigma)")
    if gaussian and a.mechanism not in (None, ["gaussian"]):
        raise ValueError(f"{cause} select the Gaussian mechanism; drop --mechanism (got "
                         f"{','.join(a.mechanism)})")
    axes = {"mechanism": ["gaussian"] if gaussian else (a.mechanism or ["ldp"])}
    for k in ("sigma", "noise_multiplier", "eps0", "n", "checkin", "sample_size",
              *_DEPLOY_KEYS):
        if getattr(a, k, None) is not None:
            axes[k] = getattr(a, k)
    return axes


def _cli_cal_grid(a) -> Grid:
    """The grid of ``--calibrate WHAT``: the calibrated parameter's flag must be absent."""
    what = a.calibrate
    if a.epsilon is None:
        raise ValueError(f"--calibrate {what} needs --epsilon TARGETS, e.g. --epsilon 1")
    clash = {"eps0": ["eps0"], "sigma": ["sigma", "noise_multiplier"], "rounds": ["rounds"],
             "users": ["n", "honest"]}[what]
    given = [k for k in clash if getattr(a, k, None) is not None]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise ValueError(f"--calibrate {what} finds {CALIBRATED[what]}: drop {flag}")
    if what != "users" and a.n is None:
        raise ValueError(f"--calibrate {what} needs --n (comma-separated numbers of users)")
    if a.bound or a.lower:
        raise ValueError("--bound and --lower do not apply to --calibrate (a calibration "
                         "uses every valid upper bound)")
    gaussian = what == "sigma" or a.sigma is not None or a.noise_multiplier is not None
    if what in ("rounds", "users") and not gaussian and a.eps0 is None:
        raise ValueError(f"--calibrate {what} needs the randomizer's --eps0 (or --sigma / "
                         "--noise-multiplier for the Gaussian)")
    axes = {"calibrate": [what], "epsilon": a.epsilon,
            **_protocol_axes(a, gaussian=gaussian,
                             cause=("--calibrate sigma" if what == "sigma"
                                    else "--sigma / --noise-multiplier"))}
    axes["delta"] = a.delta
    if what != "rounds":
        axes["rounds"] = a.rounds or [1]
    return Grid(**axes)


def _validate_cal(g: Grid):
    """A calibration grid's values checked before it starts: targets, deltas, rounds and
    each distinct protocol (built at a stand-in for the calibrated parameter)."""
    from ..core import _validate as v
    ax = dict(zip(g.keys, g.values))
    what = ax["calibrate"][0]
    for e in ax["epsilon"]:
        v.real("epsilon", e, lo=0.0, lo_open=True)
    for d in ax["delta"]:
        v.probability("delta", d)
    for t in ax.get("rounds", []):
        v.integer("rounds", t, lo=1)
    stand_in = {"eps0": {"eps0": 1.0}, "sigma": {"sigma": 1.0}, "rounds": {},
                "users": {"n": 10**6}}[what]
    proto_axes = [k for k in g.keys if k in _PROTOCOL_KEYS]
    for combo in itertools.product(*(ax[k] for k in proto_axes)):
        pt = {**dict(zip(proto_axes, combo)), **stand_in}
        if what == "eps0":
            _eps0_family(str(pt["mechanism"]))
            if str(pt["mechanism"]).partition(":")[0].strip().lower() != "ldp":
                pt["eps0"] = 1.0
        _protocol(pt)


def _validate(g: Grid):
    """Every axis value checked before the sweep starts (an error names the parameter and
    exits 2 with nothing written), by building each distinct protocol once."""
    from ..core import _validate as v
    ax = dict(zip(g.keys, g.values))
    for d in ax["delta"]:
        v.probability("delta", d)
    for t in ax["rounds"]:
        v.integer("rounds", t, lo=1)
    if "bound" in ax:
        from ..bounds import get
        get(ax["bound"][0])
    proto_axes = [k for k in g.keys if k in _PROTOCOL_KEYS]
    mechs = {}
    for combo in itertools.product(*(ax[k] for k in proto_axes)):
        pt = dict(zip(proto_axes, combo))
        mk = (pt["mechanism"], pt.get("eps0"), pt.get("sigma"), pt.get("noise_multiplier"))
        if mk not in mechs:
            mechs[mk] = _mechanism(pt)
        sampling = (CheckIn(pt["checkin"]) if pt.get("checkin") is not None else
                    WithoutReplacement(pt["sample_size"]) if pt.get("sample_size") is not None
                    else None)
        Shuffle(mechs[mk], pt["n"], sampling=sampling, **_deployment(pt))


def _run_cli(a):
    import json
    g = _cli_grid(a)
    (_validate_cal if a.calibrate else _validate)(g)
    _check_out(a.out)
    progress = False if a.json else None
    try:
        s = to_csv(g, a.out, resume=not a.overwrite, backend=a.backend, jobs=a.jobs,
                   scheduler=a.scheduler, address=a.address, progress=progress)
    except ImportError as exc:            # an extra that is not installed: exit 2, no traceback
        raise ValueError(str(exc)) from None
    except OSError as exc:
        raise ValueError(f"--out: cannot write {a.out!r}: {exc.strerror or exc}") from None
    s["grid_points"] = len(g)
    if a.json:
        print(json.dumps(s))
    else:
        kept = f"; {s['skipped']} points already in the file kept" if s["skipped"] else ""
        print(f"wrote {s['rows']} rows for {s['points']} grid points to {a.out} in "
              f"{s['seconds']:g} s{kept}")
    return 0
