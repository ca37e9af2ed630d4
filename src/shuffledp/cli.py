"""Command line: ``shuffledp epsilon | delta | rdp | bounds | calibrate | report | figure | sweep``.

Human output is a table of every applicable bound with the chosen one marked; ``--json``
prints one JSON object on stdout (spec/api.md). Errors go to stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from . import accountant
from .mechanisms import Gaussian, LDP, Randomizer, RandomizedResponse
from .protocols import CheckIn, Shuffle, WithoutReplacement

__all__ = ["main", "build_parser", "protocol_from_args"]


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as 'shuffledp: error: ...' with exit status 2."""

    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"shuffledp: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _load_matrix(path: str):
    import csv
    import pathlib

    text = pathlib.Path(path).read_text()
    if path.endswith(".json"):
        return json.loads(text)
    return [[float(x) for x in row if x.strip()] for row in csv.reader(text.splitlines()) if row]


def mechanism_from_spec(spec: str, eps0):
    """Parse ``ldp``, ``rr:K``, ``gaussian:SIGMA`` or ``matrix:FILE``."""
    kind, _, arg = spec.partition(":")
    kind = kind.strip().lower()
    if kind in ("gaussian", "gauss"):
        if not arg:
            raise ValueError("mechanism gaussian:SIGMA needs sigma, e.g. gaussian:5; got 'gaussian'")
        try:
            sigma = float(arg)
        except ValueError:
            raise ValueError(f"sigma must be a real number > 0; got {arg!r}") from None
        return Gaussian(sigma)
    if kind == "matrix":
        if not arg:
            raise ValueError("mechanism matrix:FILE needs a CSV or JSON file path")
        try:
            m = _load_matrix(arg)
        except OSError as exc:
            raise ValueError(f"matrix file {arg!r} cannot be read: {exc.strerror}") from None
        return Randomizer(m, eps0=eps0)
    if eps0 is None:
        raise ValueError(f"--eps0 is required for mechanism {spec!r}")
    if kind == "ldp":
        return LDP(eps0)
    if kind in ("rr", "krr"):
        try:
            k = int(arg) if arg else 2
        except ValueError:
            raise ValueError(f"k must be an integer in [2, inf); got {arg!r}") from None
        return RandomizedResponse(eps0, k=k)
    raise ValueError(f"mechanism must be one of ldp, rr:K, gaussian:SIGMA, matrix:FILE; got {spec!r}")


def protocol_from_args(a) -> Shuffle:
    mech = mechanism_from_spec(a.mechanism, a.eps0)
    sampling = None
    if getattr(a, "checkin", None) is not None and getattr(a, "sample_size", None) is not None:
        raise ValueError("use at most one of --checkin and --sample-size")
    if getattr(a, "checkin", None) is not None:
        sampling = CheckIn(a.checkin)
    elif getattr(a, "sample_size", None) is not None:
        sampling = WithoutReplacement(a.sample_size)
    return Shuffle(mech, n=a.n, sampling=sampling)


def _num(s: str) -> float:
    """Numbers as typed by people: 1e6, 100000, 0.5 (validation happens in the library)."""
    try:
        return float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}") from None


def _int_like(s: str):
    x = _num(s)
    return int(x) if float(x).is_integer() else x


def _protocol_args(p, need_eps0=True):
    p.add_argument("--eps0", type=_num, help="local privacy level eps0 (LDP mechanisms)")
    p.add_argument("--n", type=_int_like, required=True, help="number of users per round")
    p.add_argument("--mechanism", default="ldp",
                   help="ldp (default: any eps0-LDP randomizer), rr:K, gaussian:SIGMA, matrix:FILE")
    p.add_argument("--checkin", type=_num, default=None, metavar="RATE",
                   help="each user checks in independently with this probability")
    p.add_argument("--sample-size", type=_int_like, default=None, metavar="M",
                   help="M users sampled without replacement per round")
    p.add_argument("--rounds", type=_int_like, default=1, help="number of adaptive rounds T (default 1)")
    p.add_argument("--bound", default=None, help="one bound id (default: all; see `shuffledp bounds`)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="shuffledp", description="Privacy accounting for the shuffle model.")
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    p = sub.add_parser("epsilon", help="smallest certified epsilon for a delta")
    _protocol_args(p)
    p.add_argument("--delta", type=_num, required=True)
    p.add_argument("--composition", default=None, choices=["rdp", "kov15", "pld", "none"])
    _add_lower(p)

    p = sub.add_parser("delta", help="smallest certified delta for an epsilon")
    _protocol_args(p)
    p.add_argument("--epsilon", type=_num, required=True)
    p.add_argument("--composition", default=None, choices=["rdp", "kov15", "pld", "none"])
    _add_lower(p)

    p = sub.add_parser("rdp", help="RDP curve at given orders")
    _protocol_args(p)
    p.add_argument("--orders", required=True, help="comma-separated orders > 1, e.g. 2,3,4.5")

    p = sub.add_parser("bounds", help="list every bound with its kind and reference")
    p.add_argument("--json", action="store_true")

    _extra_commands(sub)
    return ap


def _add_lower(p):
    p.add_argument("--lower", action="store_true",
                   help="also compute lower bounds, estimates and comparison-only bounds "
                        "(slower; by default only the bounds that can be the answer)")


def _extra_commands(sub):
    """Sub-commands that live in their own modules (registered when those modules exist)."""
    try:
        from . import calibrate as _cal
        _cal.add_cli(sub, _protocol_args, _num, _int_like)
    except ImportError:
        pass
    for modname in ("report", "figures", "sweep"):
        try:
            mod = __import__(f"shuffledp.{modname}", fromlist=["add_cli"])
        except ImportError:
            continue
        mod.add_cli(sub, _protocol_args, _num, _int_like)


def _cmd_bounds(a) -> int:
    from .bounds import all_bounds
    rows = [{"bound": b.id, "kind": b.kind, "default": b.default, "title": b.title,
             "reference": b.reference} for b in all_bounds()]
    if a.json:
        print(json.dumps(rows))
        return 0
    w = max(len(r["bound"]) for r in rows)
    for r in rows:
        tag = r["kind"] + ("" if r["default"] or r["kind"] != "upper" else " (not default)")
        print(f"{r['bound'].ljust(w)}  {tag.ljust(22)}  {r['title']}")
        print(f"{' ' * w}  {'':22}  {r['reference']}")
    return 0


GAUSSIAN_NOTE = ("note: 'upper' rows hold for every pair of neighbouring datasets; "
                 "'liew-homogeneous' is exact only when all other users hold the same vector "
                 "(an estimate, not a guarantee; docs/bounds.md).")


def _gaussian_baselines(proto, a):
    """Central Poisson-subsampled Gaussian ε (dp_accounting) beside a shuffled Gaussian.

    Only for check-in or unsampled protocols (Poisson sampling is what the central
    accountants model) and only when the ``pld`` extra is installed; otherwise None.
    """
    if not isinstance(proto.mechanism, Gaussian) or isinstance(proto.sampling, WithoutReplacement):
        return None
    q = proto.sampling.rate if isinstance(proto.sampling, CheckIn) else 1.0
    try:
        from .baselines import central_baselines
        return central_baselines(q, proto.mechanism.sigma, int(a.rounds), a.delta)
    except ImportError:
        return None


def _run(a) -> int:
    if a.cmd == "bounds":
        return _cmd_bounds(a)
    if a.cmd in ("epsilon", "delta"):
        proto = protocol_from_args(a)
        if a.cmd == "epsilon":
            r = accountant.epsilon(proto, a.delta, a.rounds, bound=a.bound,
                                   composition=a.composition, lower=a.lower)
        else:
            r = accountant.delta(proto, a.epsilon, a.rounds, bound=a.bound,
                                 composition=a.composition, lower=a.lower)
        base = _gaussian_baselines(proto, a) if a.cmd == "epsilon" else None
        if a.json:
            d = r.to_dict()
            if base is not None:
                d["central_baselines"] = base
            print(json.dumps(d))
        else:
            print(r.table())
            if isinstance(proto.mechanism, Gaussian):
                print(GAUSSIAN_NOTE)
            if base is not None:
                print(f"central baselines at delta = {base['delta']:g} (trusted server, no "
                      f"shuffler; {base['source']}): RDP epsilon = {base['rdp']:.4g}, "
                      f"PLD epsilon = {base['pld']:.4g}")
        return 0
    if a.cmd == "rdp":
        proto = protocol_from_args(a)
        try:
            orders = [float(x) for x in a.orders.split(",") if x.strip()]
        except ValueError:
            raise ValueError(f"orders must be comma-separated numbers > 1; got {a.orders!r}") from None
        c = accountant.rdp(proto, orders, rounds=a.rounds, bound=a.bound)
        if a.json:
            print(json.dumps(c.to_dict()))
        else:
            print(f"{proto.describe()}  rounds={c.rounds}")
            print(f"bound: {c.bound} ({c.kind}, valid for {c.valid_for})")
            print(f"{'order':>10}  {'RDP epsilon':>14}")
            for o, v in zip(c.orders, c.values):
                print(f"{o:>10g}  {v:>14.6g}")
        return 0
    return a.func(a)


def main(argv=None) -> int:
    """Entry point; returns the exit status (0 ok, 2 bad input)."""
    ap = build_parser()
    try:
        a = ap.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        return _run(a)
    except ValueError as exc:
        print(f"shuffledp: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("shuffledp: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
