"""``shuffledp report``: the main job — a report directory for a scenario.

Writes ``report.md`` and ``report.html`` plus CSV tables and PNG plots: ε against ε0 for
every bound with the lower bounds, ε against n, ε against T per composition route, RDP
curves, calibration answers and the federated-learning (shuffle Gaussian) setting. Every
number is printed with its kind and the class of randomizers it is valid for.

A scenario is a TOML or JSON file whose keys are those of ``DEFAULT_SCENARIO``; unknown
keys, wrong types and out-of-range values are errors that name the key.
"""

from __future__ import annotations

import html
import json
import math
import os
import time
from copy import deepcopy

from . import calibrate as _cal
from . import plots
from ._progress import Progress
from .accountant import epsilon as _epsilon
from .accountant import rdp as _rdp
from .errors import NotApplicableError
from .protocols import CheckIn, Shuffle
from .sweep import _protocol, grid, run as _sweep, write_csv

__all__ = ["DEFAULT_SCENARIO", "load_scenario", "validate_scenario", "build", "add_cli"]

DEFAULT_SCENARIO = {
    "name": "default: 100,000 users, delta = 1e-6",
    "n": 100_000,
    "delta": 1e-6,
    "eps0": [0.25, 0.5, 1.0, 2.0, 4.0],
    "mechanisms": ["ldp", "rr:2", "rr:3"],
    "rounds": [1, 10, 100, 1000],
    "eps0_fixed": 1.0,
    "n_grid": [1_000, 10_000, 100_000, 1_000_000],
    "orders": [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64],
    "calibration": {"epsilon": 1.0, "rounds": 1},
    "gaussian": {"n": 60_000, "sigma": 5.0, "checkin": 0.1, "rounds": 5540, "delta": 1e-5},
    "jobs": 1,
}

_SCHEMA = {
    "name": "str", "n": "int", "delta": "num", "eps0": "numlist", "mechanisms": "strlist",
    "rounds": "intlist", "eps0_fixed": "num", "n_grid": "intlist", "orders": "numlist",
    "calibration": {"epsilon": "num", "rounds": "int"},
    "gaussian": {"n": "int", "sigma": "num", "checkin": "num", "rounds": "int", "delta": "num"},
    "jobs": "int",
}


def _type_ok(kind, val):
    num = (int, float)
    if kind == "str":
        return isinstance(val, str)
    if kind == "int":
        return isinstance(val, int) and not isinstance(val, bool) or (
            isinstance(val, float) and val.is_integer())
    if kind == "num":
        return isinstance(val, num) and not isinstance(val, bool)
    if kind in ("numlist", "intlist", "strlist"):
        if not isinstance(val, list) or not val:
            return False
        inner = {"numlist": "num", "intlist": "int", "strlist": "str"}[kind]
        return all(_type_ok(inner, x) for x in val)
    return False


_DESCR = {"str": "a string", "int": "an integer", "num": "a number",
          "numlist": "a non-empty list of numbers", "intlist": "a non-empty list of integers",
          "strlist": "a non-empty list of strings"}


def validate_scenario(sc: dict) -> dict:
    """Merge ``sc`` over the default and check it; errors name the key and the problem."""
    if not isinstance(sc, dict):
        raise ValueError(f"scenario must be a table/object of keys; got {type(sc).__name__}")
    out = deepcopy(DEFAULT_SCENARIO)
    for key, val in sc.items():
        if key not in _SCHEMA:
            raise ValueError(f"scenario: unknown key {key!r} (known keys: {', '.join(_SCHEMA)})")
        kind = _SCHEMA[key]
        if isinstance(kind, dict):
            if val is None or val is False:
                out[key] = None
                continue
            if not isinstance(val, dict):
                raise ValueError(f"scenario key {key!r}: expected a table with keys "
                                 f"{', '.join(kind)}; got {val!r}")
            for sub, sval in val.items():
                if sub not in kind:
                    raise ValueError(f"scenario: unknown key '{key}.{sub}' (known: {', '.join(kind)})")
                if not _type_ok(kind[sub], sval):
                    raise ValueError(f"scenario key '{key}.{sub}': expected {_DESCR[kind[sub]]}; got {sval!r}")
                out[key][sub] = sval
        else:
            if not _type_ok(kind, val):
                raise ValueError(f"scenario key {key!r}: expected {_DESCR[kind]}; got {val!r}")
            out[key] = val
    # Range checks through the library's own validation, re-labelled with the key.
    checks = [("n", lambda: Shuffle(_mech("ldp", 1.0), out["n"])),
              ("delta", lambda: _prob(out["delta"])),
              ("eps0", lambda: [_mech("ldp", e) for e in out["eps0"]]),
              ("eps0_fixed", lambda: _mech("ldp", out["eps0_fixed"])),
              ("mechanisms", lambda: [_mech(m, 1.0) for m in out["mechanisms"]]),
              ("rounds", lambda: [_pos_int(t) for t in out["rounds"]]),
              ("n_grid", lambda: [Shuffle(_mech("ldp", 1.0), x) for x in out["n_grid"]]),
              ("orders", lambda: [_order(o) for o in out["orders"]]),
              ("jobs", lambda: _jobs(out["jobs"]))]
    if out["calibration"] is not None:
        checks += [("calibration.epsilon", lambda: _pos(out["calibration"]["epsilon"])),
                   ("calibration.rounds", lambda: _pos_int(out["calibration"]["rounds"]))]
    if out["gaussian"] is not None:
        g = out["gaussian"]
        checks += [("gaussian", lambda: Shuffle(_mech(f"gaussian:{g['sigma']}", None), g["n"],
                                                 sampling=CheckIn(g["checkin"]))),
                   ("gaussian.rounds", lambda: _pos_int(g["rounds"])),
                   ("gaussian.delta", lambda: _prob(g["delta"]))]
    for key, fn in checks:
        try:
            fn()
        except ValueError as exc:
            raise ValueError(f"scenario key {key!r}: {exc}") from None
    return out


def _mech(spec, eps0):
    from .cli import mechanism_from_spec
    return mechanism_from_spec(spec, eps0)


def _prob(x):
    from . import _validate as v
    return v.probability("value", x)


def _pos(x):
    from . import _validate as v
    return v.real("value", x, lo=0.0, lo_open=True)


def _pos_int(x):
    from . import _validate as v
    return v.integer("value", x, lo=1)


def _order(x):
    from . import _validate as v
    return v.order("order", x)


def _jobs(x):
    from . import _validate as v
    if int(x) == -1:
        return -1
    return v.integer("jobs", x, lo=1)


def load_scenario(path: str) -> dict:
    """Read a TOML or JSON scenario file and validate it."""
    with open(path, "rb") as f:
        raw = f.read()
    if path.endswith(".json"):
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"scenario file {path!r} is not valid JSON: {exc}") from None
    else:
        try:
            import tomllib
        except ImportError:  # Python 3.10
            import tomli as tomllib
        try:
            data = tomllib.loads(raw.decode())
        except Exception as exc:  # tomllib.TOMLDecodeError
            raise ValueError(f"scenario file {path!r} is not valid TOML: {exc}") from None
    return validate_scenario(data)


# ----------------------------------------------------------------------------------------
def _fmt(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, float):
        if math.isinf(x):
            return "inf"
        return f"{x:.4g}" if (x == 0 or 1e-3 <= abs(x) < 1e5) else f"{x:.3e}"
    return str(x)


class _Doc:
    """Sections rendered both as Markdown and as HTML."""

    def __init__(self, title):
        self.title = title
        self.blocks = []

    def h(self, text):
        self.blocks.append(("h", text))

    def p(self, text):
        self.blocks.append(("p", text))

    def table(self, header, rows):
        self.blocks.append(("t", (header, rows)))

    def img(self, path, alt):
        if path:
            self.blocks.append(("i", (os.path.basename(path), alt)))

    def markdown(self):
        out = [f"# {self.title}", ""]
        for kind, b in self.blocks:
            if kind == "h":
                out += [f"## {b}", ""]
            elif kind == "p":
                out += [b, ""]
            elif kind == "t":
                hdr, rows = b
                out.append("| " + " | ".join(hdr) + " |")
                out.append("|" + "|".join("---" for _ in hdr) + "|")
                out += ["| " + " | ".join(_fmt(c) for c in r) + " |" for r in rows]
                out.append("")
            elif kind == "i":
                out += [f"![{b[1]}]({b[0]})", ""]
        return "\n".join(out)

    def html(self):
        e = html.escape
        out = ["<!doctype html><html><head><meta charset='utf-8'>",
               f"<title>{e(self.title)}</title><style>body{{font-family:sans-serif;max-width:1100px;"
               "margin:auto;padding:1em}}table{{border-collapse:collapse;font-size:13px}}"
               "td,th{{border:1px solid #ccc;padding:3px 6px;text-align:left}}"
               "th{{background:#eee}}img{{max-width:100%}}</style></head><body>",
               f"<h1>{e(self.title)}</h1>"]
        for kind, b in self.blocks:
            if kind == "h":
                out.append(f"<h2>{e(b)}</h2>")
            elif kind == "p":
                out.append(f"<p>{e(b)}</p>")
            elif kind == "t":
                hdr, rows = b
                out.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in hdr) + "</tr>")
                out += ["<tr>" + "".join(f"<td>{e(_fmt(c))}</td>" for c in r) + "</tr>" for r in rows]
                out.append("</table>")
            elif kind == "i":
                out.append(f"<p><img src='{e(b[0])}' alt='{e(b[1])}'></p>")
        out.append("</body></html>")
        return "\n".join(out)


def build(scenario: dict | None = None, out: str = "report", progress: bool | None = None) -> dict:
    """Compute the report for a (validated) scenario into directory ``out``."""
    sc = validate_scenario(scenario or {})
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    d, n, jobs = sc["delta"], sc["n"], sc["jobs"]
    doc = _Doc(f"shuffledp report — {sc['name']}")
    doc.p("Every number below is labelled with its kind — upper (a guarantee, rounded up), "
          "lower (what some randomizer and dataset provably leaks) or estimate (neither) — and "
          "with the class of randomizers it is valid for. The answer for a protocol is the "
          "smallest upper bound valid for its randomizer; bounds tagged [R]/[U] in the "
          "specification and estimates are shown but never chosen.")
    steps = 6 + (1 if sc["gaussian"] else 0)
    with Progress(steps, "report", enabled=progress) as bar:
        # 1. ε against ε0, every bound, each mechanism.
        pts = grid(mechanism=sc["mechanisms"], eps0=sc["eps0"], n=[n], delta=[d], rounds=[1])
        rows = _sweep(pts, n_jobs=jobs, progress=False)
        write_csv(rows, os.path.join(out, "eps_vs_eps0.csv"))
        doc.h(f"1. epsilon against eps0 (n = {n}, delta = {d:g}, one round)")
        doc.table(["mechanism", "eps0", "answer (upper)", "bound", "valid for",
                   "tightest lower", "lower bound", "gap"], _answer_rows(rows))
        for mech in sc["mechanisms"]:
            sub = [r for r in rows if r["mechanism"] == mech and r["kind"] != "n/a"]
            png = plots.line_plot(sub, "eps0", "epsilon", "bound",
                                  os.path.join(out, f"eps_vs_eps0_{mech.replace(':', '')}.png"),
                                  logy=True, title=f"{mech}: epsilon vs eps0, n={n}, delta={d:g}")
            doc.img(png, f"epsilon vs eps0 for {mech}")
        bar.update(note="eps vs eps0")

        # 2. ε against n.
        e0 = sc["eps0_fixed"]
        pts = grid(mechanism=sc["mechanisms"], eps0=[e0], n=sc["n_grid"], delta=[d], rounds=[1])
        rows_n = _sweep(pts, n_jobs=jobs, progress=False)
        write_csv(rows_n, os.path.join(out, "eps_vs_n.csv"))
        doc.h(f"2. epsilon against n (eps0 = {e0:g}, delta = {d:g})")
        doc.table(["mechanism", "n", "answer (upper)", "bound", "valid for", "tightest lower",
                   "lower bound", "gap"], _answer_rows(rows_n, key="n"))
        sub = [dict(r, series=f"{r['mechanism']} {r['bound']}") for r in rows_n
               if r["kind"] in ("upper", "lower") and r["mechanism"] == sc["mechanisms"][0]]
        doc.img(plots.line_plot(sub, "n", "epsilon", "series", os.path.join(out, "eps_vs_n.png"),
                                logx=True, logy=True, title=f"epsilon vs n, eps0={e0:g}"), "epsilon vs n")
        bar.update(note="eps vs n")

        # 3. ε against T, per composition route.
        rows_t = []
        # The first mechanism only: each multi-round point of a clone pair costs seconds.
        for mech in sc["mechanisms"][:1]:
            proto = _protocol({"mechanism": mech, "eps0": e0, "n": n})
            for T in sc["rounds"]:
                for comp in ("rdp", "kov15", "pld"):
                    try:
                        r = _epsilon(proto, d, T, composition=comp, lower=True)
                    except NotApplicableError:
                        continue
                    rows_t.append({"mechanism": mech, "rounds": T, "composition": comp,
                                   "epsilon": r.epsilon, "bound": r.bound, "kind": r.kind,
                                   "valid_for": r.valid_for, "series": f"{mech} via {comp}"})
        write_csv(rows_t, os.path.join(out, "eps_vs_rounds.csv"))
        doc.h(f"3. epsilon against rounds T ({sc['mechanisms'][0]}, eps0 = {e0:g}, n = {n}, "
              f"delta = {d:g}), per composition route")
        doc.p("rdp: per-round RDP summed and converted (CKS20); kov15: per-round (eps, delta) "
              "composed by Kairouz-Oh-Viswanath 2015 with the delta split optimised; pld: the "
              "dominating pair's privacy-loss distribution composed exactly (dp_accounting).")
        doc.table(["mechanism", "T", "route", "epsilon", "bound", "kind", "valid for"],
                  [[r["mechanism"], r["rounds"], r["composition"], r["epsilon"], r["bound"],
                    r["kind"], r["valid_for"]] for r in rows_t])
        doc.img(plots.line_plot(rows_t, "rounds", "epsilon", "series",
                                os.path.join(out, "eps_vs_rounds.png"), logx=True, logy=True,
                                title=f"epsilon vs rounds, eps0={e0:g}, n={n}"), "epsilon vs rounds")
        bar.update(note="eps vs T")

        # 4. RDP curves.
        rows_r = []
        from .bounds import all_bounds
        for mech in sc["mechanisms"]:
            proto = _protocol({"mechanism": mech, "eps0": e0, "n": n})
            for b in all_bounds():
                if not b.has_rdp or b.check(proto):
                    continue
                try:
                    c = _rdp(proto, [o for o in sc["orders"] if o <= b.max_order(proto)], bound=b.id)
                except (NotApplicableError, ValueError):
                    continue
                for o, v in zip(c.orders, c.values):
                    rows_r.append({"mechanism": mech, "bound": b.id, "kind": c.kind,
                                   "order": float(o), "rdp": float(v), "valid_for": c.valid_for,
                                   "series": f"{b.id}"})
        write_csv(rows_r, os.path.join(out, "rdp_curves.csv"))
        doc.h(f"4. RDP curves (eps0 = {e0:g}, n = {n}, one round)")
        doc.p("Lower-bound curves are exact Rényi divergences of a specific instance; converting "
              "them to (epsilon, delta) gives the best any RDP analysis could do, not a lower bound.")
        first = [r for r in rows_r if r["mechanism"] == sc["mechanisms"][0]]
        doc.img(plots.line_plot(first, "order", "rdp", "series", os.path.join(out, "rdp_curves.png"),
                                logx=True, logy=True, title=f"RDP vs order, {sc['mechanisms'][0]}"),
                "RDP curves")
        bar.update(note="RDP curves")

        # 5. Calibration.
        doc.h("5. Calibration: the parameter that meets a target")
        cal_rows = []
        if sc["calibration"] is not None:
            tgt, T = sc["calibration"]["epsilon"], sc["calibration"]["rounds"]
            for mech in sc["mechanisms"]:
                k = None if mech == "ldp" else int(mech.split(":")[1]) if ":" in mech else 2
                try:
                    c = _cal.eps0(n, tgt, d, T, k=k)
                    cal_rows.append([f"largest eps0 ({mech})", _fmt(c.value), c.epsilon, c.bound,
                                     c.runner_up or "-", f"n={n}, T={T}, target eps={tgt:g}"])
                except (NotApplicableError, ValueError) as exc:
                    cal_rows.append([f"largest eps0 ({mech})", "-", None, str(exc), "-", ""])
            try:
                c = _cal.rounds(_protocol({"mechanism": "ldp", "eps0": e0, "n": n}), tgt, d)
                cal_rows.append(["largest T (ldp)", str(int(c.value)), c.epsilon, c.bound,
                                 c.runner_up or "-", f"eps0={e0:g}, n={n}, target eps={tgt:g}"])
            except (NotApplicableError, ValueError) as exc:
                cal_rows.append(["largest T (ldp)", "-", None, str(exc), "-", ""])
            try:
                c = _cal.users(_mech("ldp", e0), tgt / 4, d, 1)
                cal_rows.append(["smallest n (ldp)", str(int(c.value)), c.epsilon, c.bound,
                                 c.runner_up or "-", f"eps0={e0:g}, T=1, target eps={tgt / 4:g}"])
            except (NotApplicableError, ValueError) as exc:
                cal_rows.append(["smallest n (ldp)", "-", None, str(exc), "-", ""])
            write_csv([dict(zip(["question", "answer", "epsilon", "bound", "runner_up", "setting"], r))
                       for r in cal_rows], os.path.join(out, "calibration.csv"))
            doc.table(["question", "answer", "certified epsilon", "bound", "runner-up", "setting"], cal_rows)
        bar.update(note="calibration")

        # 6. Gaussian / federated learning setting.
        if sc["gaussian"] is not None:
            g = sc["gaussian"]
            proto = Shuffle(_mech(f"gaussian:{g['sigma']}", None), g["n"], sampling=CheckIn(g["checkin"]))
            doc.h(f"6. Federated learning: shuffle Gaussian (n = {g['n']}, sigma = {g['sigma']:g}, "
                  f"check-in rate {g['checkin']:g}, T = {g['rounds']}, delta = {g['delta']:g})")
            try:
                r = _epsilon(proto, g["delta"], g["rounds"], lower=True)
                doc.table(["bound", "epsilon", "kind", "composition", "valid for"],
                          [[c.bound, c.epsilon, c.kind, c.composition, c.valid_for] for c in r.candidates])
                doc.p(f"Answer: epsilon = {_fmt(r.epsilon)} ({r.kind} bound '{r.bound}'). "
                      "Estimate rows (homogeneous-pair analysis) are not guarantees: the "
                      "homogeneous pair is not the worst case in dimension >= 2.")
                write_csv([c.to_dict() for c in r.candidates], os.path.join(out, "gaussian.csv"),
                          ["bound", "kind", "epsilon", "delta", "composition", "valid_for", "seconds"])
            except (NotApplicableError, ValueError) as exc:
                doc.p(f"No bound available for this protocol yet: {exc}")
            try:
                from .baselines import central_baselines
                b = central_baselines(g["checkin"], g["sigma"], g["rounds"], 1.0 / g["n"])
                doc.p("Central (trusted server, no shuffling) Poisson-subsampled Gaussian "
                      f"baselines via dp_accounting at delta = 1/n: RDP accountant epsilon = "
                      f"{b['rdp']:.4g}, PLD accountant epsilon = {b['pld']:.4g} (upper bounds).")
            except Exception:  # optional extra; its absence is not an error
                pass
            bar.update(note="gaussian")
        bar.update(note="writing")
    secs = time.perf_counter() - t0
    doc.p(f"Computed in {secs:.1f} s by shuffledp.")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(doc.markdown())
    with open(os.path.join(out, "report.html"), "w") as f:
        f.write(doc.html())
    with open(os.path.join(out, "scenario.json"), "w") as f:
        json.dump(sc, f, indent=2)
    return {"out": out, "seconds": round(secs, 1), "files": sorted(os.listdir(out))}


def _answer_rows(rows, key="eps0"):
    out = []
    groups = {}
    for r in rows:
        groups.setdefault((r["mechanism"], r[key]), []).append(r)
    for (mech, x), rs in groups.items():
        chosen = next((r for r in rs if r["chosen"]), None)
        lows = [r for r in rs if r["kind"] == "lower"]
        lo = max(lows, key=lambda r: r["epsilon"]) if lows else None
        gap = (chosen["epsilon"] / lo["epsilon"]) if chosen and lo and lo["epsilon"] > 0 else None
        out.append([mech, x, chosen["epsilon"] if chosen else None, chosen["bound"] if chosen else "-",
                    chosen["valid_for"] if chosen else "-", lo["epsilon"] if lo else None,
                    lo["bound"] if lo else "-", gap])
    return out


def add_cli(sub, protocol_args, num, int_like):
    p = sub.add_parser("report", help="the main job: a report directory for a scenario")
    p.add_argument("--scenario", default=None, help="TOML or JSON file (default: built-in scenario)")
    p.add_argument("--out", default="report")

    def run(a):
        sc = load_scenario(a.scenario) if a.scenario else {}
        info = build(sc, a.out)
        print(f"report written to {info['out']}/report.md and report.html in {info['seconds']} s "
              f"({len(info['files'])} files)")
        return 0

    p.set_defaults(func=run)
