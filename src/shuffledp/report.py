"""``shuffledp report``: a report directory for a scenario.

Writes ``report.md`` and ``report.html`` plus CSV tables and PNG plots: ε against ε0 for
every bound with the lower bounds, ε against n, ε against T (the best valid answer at every
T, and the best bound per composition route), RDP curves, calibration answers and the
federated-learning (shuffle Gaussian) setting. Every number is printed with its kind and
the class of randomizers it is valid for.

A scenario is a TOML or JSON file whose keys are those of ``DEFAULT_SCENARIO``; unknown
keys, wrong types and out-of-range values are errors that name the key. A scenario file
gets only the sections it asks for: the ``sections`` key lists them explicitly; without
it, the sections whose own keys the file sets (``eps0`` → "eps0", ``n_grid`` → "n",
``rounds`` → "rounds", ``orders`` → "rdp", ``calibration`` → "calibration",
``gaussian`` → "gaussian"); a file that sets none of those gets every section. The schema,
with an example, is in docs/report.md.
"""

from __future__ import annotations

import contextlib
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
from .results import ADJACENCY, KINDS
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
    # The MNIST run of Liew & Takahashi (arXiv:2206.09569): noise multiplier 5, i.e.
    # Gaussian(2.5) per unit diameter (a file may give ``sigma`` instead).
    "gaussian": {"n": 60_000, "noise_multiplier": 5.0, "checkin": 0.1, "rounds": 5540,
                 "delta": 1e-5},
    "jobs": 1,
    "sections": ["eps0", "n", "rounds", "rdp", "calibration", "gaussian"],
}

#: Sections in report order, and the scenario key that selects each one implicitly.
SECTIONS = ("eps0", "n", "rounds", "rdp", "calibration", "gaussian")
_SECTION_KEY = {"eps0": "eps0", "n_grid": "n", "rounds": "rounds", "orders": "rdp",
                "calibration": "calibration", "gaussian": "gaussian"}

_SCHEMA = {
    "name": "str", "n": "int", "delta": "num", "eps0": "numlist", "mechanisms": "strlist",
    "rounds": "intlist", "eps0_fixed": "num", "n_grid": "intlist", "orders": "numlist",
    "calibration": {"epsilon": "num", "rounds": "int"},
    "gaussian": {"n": "int", "noise_multiplier": "num", "sigma": "num", "checkin": "num",
                 "rounds": "int", "delta": "num"},
    "jobs": "int",
    "sections": "strlist",
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
            if key == "gaussian":
                _one_noise_unit(out[key], val)
        else:
            if not _type_ok(kind, val):
                raise ValueError(f"scenario key {key!r}: expected {_DESCR[kind]}; got {val!r}")
            out[key] = val
    if "sections" in sc:
        bad = [x for x in out["sections"] if x not in SECTIONS]
        if bad:
            raise ValueError(f"scenario key 'sections': each must be one of "
                             f"{', '.join(SECTIONS)}; got {bad[0]!r}")
    else:
        # Setting a section's table to null/false is a "no", not a request.
        asked = {_SECTION_KEY[k] for k in sc if k in _SECTION_KEY and sc[k] not in (None, False)}
        if asked:
            out["sections"] = [x for x in SECTIONS if x in asked]
    if out["calibration"] is None and "calibration" in out["sections"]:
        out["sections"] = [x for x in out["sections"] if x != "calibration"]
    if out["gaussian"] is None and "gaussian" in out["sections"]:
        out["sections"] = [x for x in out["sections"] if x != "gaussian"]
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
        checks += [("gaussian", lambda: Shuffle(_gaussian_mech(g), g["n"],
                                                 sampling=CheckIn(g["checkin"]))),
                   ("gaussian.rounds", lambda: _pos_int(g["rounds"])),
                   ("gaussian.delta", lambda: _prob(g["delta"]))]
    for key, fn in checks:
        try:
            fn()
        except ValueError as exc:
            raise ValueError(f"scenario key {key!r}: {exc}") from None
    return out


def _one_noise_unit(g: dict, given: dict) -> None:
    """Keep the noise unit the file gives (``sigma`` per unit l2 diameter or
    ``noise_multiplier`` = 2·sigma); both given must agree."""
    if "sigma" in given and "noise_multiplier" in given:
        sigma, z = float(given["sigma"]), float(given["noise_multiplier"])
        if abs(2.0 * sigma - z) > 1e-12 * abs(z):
            raise ValueError("scenario key 'gaussian': noise_multiplier must equal 2 * sigma "
                             f"when both are given; got sigma = {given['sigma']!r}, "
                             f"noise_multiplier = {given['noise_multiplier']!r}")
        g.pop("noise_multiplier")
    elif "sigma" in given:
        g.pop("noise_multiplier", None)
    elif "noise_multiplier" in given:
        g.pop("sigma", None)


def _gaussian_mech(g: dict):
    """The scenario's Gaussian: ``sigma`` (per unit diameter) or ``noise_multiplier``."""
    from .mechanisms import Gaussian
    if g.get("sigma") is not None:
        return Gaussian(g["sigma"])
    return Gaussian.from_noise_multiplier(g["noise_multiplier"])


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
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:          # missing file, a directory, no permission
        raise ValueError(f"--scenario: cannot read the scenario file {path!r}: "
                         f"{exc.strerror or exc}") from None
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


# A plain string (not an f-string): braces are CSS, not placeholders.
CSS = ("body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}"
       "table{border-collapse:collapse;font-size:13px;margin:0.5em 0}"
       "td,th{border:1px solid #999;padding:3px 6px;text-align:left;vertical-align:top}"
       "th{background:#e8e8e8}tr.answer td{font-weight:bold;background:#f4f8ff}"
       "img{max-width:100%}p.note{font-size:12px;color:#444}")


class _Doc:
    """Sections rendered both as Markdown and as HTML."""

    def __init__(self, title):
        self.title = title
        self.blocks = []

    def h(self, text):
        self.blocks.append(("h", text))

    def p(self, text):
        self.blocks.append(("p", text))

    def table(self, header, rows, emphasis=None):
        """``emphasis``: index of a column shown in bold (the answer)."""
        self.blocks.append(("t", (header, rows, emphasis)))

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
                hdr, rows, em = b
                out.append("| " + " | ".join(hdr) + " |")
                out.append("|" + "|".join("---" for _ in hdr) + "|")
                out += ["| " + " | ".join(f"**{_fmt(c)}**" if i == em else _fmt(c)
                                          for i, c in enumerate(r)) + " |" for r in rows]
                out.append("")
            elif kind == "i":
                out += [f"![{b[1]}]({b[0]})", ""]
        return "\n".join(out)

    def html(self):
        e = html.escape
        out = ["<!doctype html><html><head><meta charset='utf-8'>",
               f"<title>{e(self.title)}</title>", f"<style>{CSS}</style></head><body>",
               f"<h1>{e(self.title)}</h1>"]
        for kind, b in self.blocks:
            if kind == "h":
                out.append(f"<h2>{e(b)}</h2>")
            elif kind == "p":
                out.append(f"<p>{e(b)}</p>")
            elif kind == "t":
                hdr, rows, em = b
                out.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in hdr) + "</tr>")
                out += ["<tr>" + "".join(f"<td><b>{e(_fmt(c))}</b></td>" if i == em
                                         else f"<td>{e(_fmt(c))}</td>"
                                         for i, c in enumerate(r)) + "</tr>" for r in rows]
                out.append("</table>")
            elif kind == "i":
                out.append(f"<p><img src='{e(b[0])}' alt='{e(b[1])}'></p>")
        out.append("</body></html>")
        return "\n".join(out)


INTRO = ("Every number below is labelled with its kind — upper (a guarantee, rounded up), "
         "lower (what some randomizer and dataset provably leaks) or estimate (neither) — and "
         "with the class of randomizers it is valid for. The answer for a protocol is the "
         "smallest upper bound valid for its randomizer; bounds whose formulas are "
         "reconstructed or unconfirmed, and estimates, are shown but never chosen.")


def _intro(doc, sc):
    doc.p(INTRO)
    doc.p(ADJACENCY + ".")


def section_eps0(doc, sc, out, jobs, ctx):
    """1. ε against ε0, every bound, each mechanism (one round)."""
    d, n = sc["delta"], sc["n"]
    pts = grid(mechanism=sc["mechanisms"], eps0=sc["eps0"], n=[n], delta=[d], rounds=[1])
    rows = _sweep(pts, n_jobs=jobs, progress=False, backend=ctx.get("backend"))
    write_csv(rows, os.path.join(out, "eps_vs_eps0.csv"))
    ctx["eps0_answers"] = {(r["mechanism"], float(r["eps0"])): r["epsilon"]
                           for r in rows if r["chosen"]}
    doc.h(f"{ctx['num']}. epsilon against eps0 (n = {n}, delta = {d:g}, one round)")
    doc.table(["mechanism", "eps0", "answer (upper)", "bound", "valid for",
               "tightest lower", "lower bound", "gap"], _answer_rows(rows))
    for mech in sc["mechanisms"]:
        sub = [dict(r, emphasis=False) for r in rows
               if r["mechanism"] == mech and r["kind"] in KINDS]
        sub += [dict(r, series="answer", kind="answer", bound="answer") for r in rows
                if r["mechanism"] == mech and r["chosen"]]
        png = plots.line_plot(sub, "eps0", "epsilon", "bound",
                              os.path.join(out, f"eps_vs_eps0_{mech.replace(':', '')}.png"),
                              logy=True, title=f"{mech}: epsilon vs eps0, n = {n}, "
                                               f"delta = {d:g}, one round")
        doc.img(png, f"epsilon vs eps0 for {mech}")


def section_n(doc, sc, out, jobs, ctx):
    """2. ε against n at a fixed ε0."""
    d, e0 = sc["delta"], sc["eps0_fixed"]
    pts = grid(mechanism=sc["mechanisms"], eps0=[e0], n=sc["n_grid"], delta=[d], rounds=[1])
    rows_n = _sweep(pts, n_jobs=jobs, progress=False, backend=ctx.get("backend"))
    write_csv(rows_n, os.path.join(out, "eps_vs_n.csv"))
    doc.h(f"{ctx['num']}. epsilon against n (eps0 = {e0:g}, delta = {d:g}, one round)")
    doc.table(["mechanism", "n", "answer (upper)", "bound", "valid for", "tightest lower",
               "lower bound", "gap"], _answer_rows(rows_n, key="n"))
    first = sc["mechanisms"][0]
    sub = [r for r in rows_n if r["kind"] in ("upper", "lower") and r["mechanism"] == first]
    sub += [dict(r, series="answer", kind="answer", bound="answer") for r in rows_n
            if r["mechanism"] == first and r["chosen"]]
    doc.img(plots.line_plot(sub, "n", "epsilon", "bound", os.path.join(out, "eps_vs_n.png"),
                            logx=True, logy=True,
                            title=f"{first}: epsilon vs n, eps0 = {e0:g}, delta = {d:g}"),
            "epsilon vs n")


def section_rounds(doc, sc, out, jobs, ctx):
    """3. ε against T: the best valid answer at every T (T = 1 included) and, for
    comparison, the best bound through each composition route."""
    d, n, e0 = sc["delta"], sc["n"], sc["eps0_fixed"]
    mech = sc["mechanisms"][0]      # each multi-round point of a clone pair costs seconds
    proto = _protocol({"mechanism": mech, "eps0": e0, "n": n})
    rows_t, table = [], []
    for T in sc["rounds"]:
        ans = _epsilon(proto, d, T)
        rows_t.append({"mechanism": mech, "rounds": T, "composition": ans.composition,
                       "epsilon": ans.epsilon, "bound": ans.bound, "kind": "answer",
                       "valid_for": ans.valid_for, "series": "answer"})
        per_route = {}
        for comp in ("rdp", "kov15", "pld"):
            if T == 1 and comp == "kov15":
                continue                       # nothing to compose in one round
            try:
                r = _epsilon(proto, d, T, composition=comp)
            except NotApplicableError:
                continue
            per_route[comp] = r
            rows_t.append({"mechanism": mech, "rounds": T, "composition": comp,
                           "epsilon": r.epsilon, "bound": r.bound, "kind": r.kind,
                           "valid_for": r.valid_for, "series": f"{r.bound} via {comp}"})
        table.append([T, ans.epsilon, ans.bound, ans.composition, ans.scope]
                     + [per_route[c].epsilon if c in per_route else None
                        for c in ("rdp", "kov15", "pld")])
    ctx["rounds_answers"] = {T: row[1] for T, row in zip(sc["rounds"], table)}
    write_csv(rows_t, os.path.join(out, "eps_vs_rounds.csv"),
              ["mechanism", "rounds", "series", "composition", "epsilon", "bound", "kind",
               "valid_for"])
    doc.h(f"{ctx['num']}. epsilon against rounds T ({mech}, eps0 = {e0:g}, n = {n}, "
          f"delta = {d:g})")
    doc.p("answer: the smallest valid upper bound at each T, over every bound and route "
          "(at T = 1 it is the answer of the epsilon-against-eps0 table). The route columns "
          "give the best bound through one composition route: rdp = per-round RDP summed and "
          "converted; kov15 = per-round (epsilon, delta) composed by Kairouz-Oh-Viswanath "
          "2015 with the delta split optimised; pld = the dominating pair's privacy-loss "
          "distribution composed numerically (dp_accounting).")
    doc.table(["T", "answer (upper)", "bound", "route", "valid for", "best via rdp",
               "best via kov15", "best via pld"], table, emphasis=1)
    doc.img(plots.line_plot(rows_t, "rounds", "epsilon", "series",
                            os.path.join(out, "eps_vs_rounds.png"), logx=True, logy=True,
                            title=f"{mech}: epsilon vs rounds, eps0 = {e0:g}, n = {n}, "
                                  f"delta = {d:g}"), "epsilon vs rounds")


def section_rdp(doc, sc, out, jobs, ctx):
    """4. RDP curves of every bound with an RDP view."""
    from .bounds import all_bounds
    n, e0 = sc["n"], sc["eps0_fixed"]
    rows_r = []
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
    doc.h(f"{ctx['num']}. RDP curves (eps0 = {e0:g}, n = {n}, one round)")
    doc.p("Lower-bound curves are exact Rényi divergences of a specific instance; converting "
          "them to (epsilon, delta) gives the best any RDP analysis could do, not a lower bound.")
    first = [r for r in rows_r if r["mechanism"] == sc["mechanisms"][0]]
    doc.img(plots.line_plot(first, "order", "rdp", "series", os.path.join(out, "rdp_curves.png"),
                            logx=True, logy=True,
                            title=f"{sc['mechanisms'][0]}: RDP vs order, eps0 = {e0:g}, "
                                  f"n = {n}, one round"), "RDP curves")


def _cal_row(question, c, setting, integer=False):
    val = str(int(c.value)) if integer else _fmt(c.value)
    return [question, val, c.epsilon, c.bound, c.runner_up_text() or "-", setting]


def section_calibration(doc, sc, out, jobs, ctx):
    """5. Calibration: the parameter that meets a target."""
    d, n, e0 = sc["delta"], sc["n"], sc["eps0_fixed"]
    doc.h(f"{ctx['num']}. Calibration: the parameter that meets a target (delta = {d:g})")
    tgt, T = sc["calibration"]["epsilon"], sc["calibration"]["rounds"]
    cal_rows = []
    for mech in sc["mechanisms"]:
        k = None if mech == "ldp" else int(mech.split(":")[1]) if ":" in mech else 2
        try:
            c = _cal.eps0(n, tgt, d, T, k=k)
            cal_rows.append(_cal_row(f"largest eps0 ({mech})", c,
                                     f"n={n}, T={T}, target eps={tgt:g}"))
        except (NotApplicableError, ValueError) as exc:
            cal_rows.append([f"largest eps0 ({mech})", "-", None, str(exc), "-", ""])
    try:
        c = _cal.rounds(_protocol({"mechanism": "ldp", "eps0": e0, "n": n}), tgt, d)
        cal_rows.append(_cal_row("largest T (ldp)", c,
                                 f"eps0={e0:g}, n={n}, target eps={tgt:g}", integer=True))
    except (NotApplicableError, ValueError) as exc:
        cal_rows.append(["largest T (ldp)", "-", None, str(exc), "-", ""])
    try:
        c = _cal.users(_mech("ldp", e0), tgt / 4, d, 1)
        cal_rows.append(_cal_row("smallest n (ldp)", c,
                                 f"eps0={e0:g}, T=1, target eps={tgt / 4:g}", integer=True))
    except (NotApplicableError, ValueError) as exc:
        cal_rows.append(["smallest n (ldp)", "-", None, str(exc), "-", ""])
    write_csv([dict(zip(["question", "answer", "epsilon", "bound", "runner_up", "setting"], r))
               for r in cal_rows], os.path.join(out, "calibration.csv"))
    doc.p("runner-up: the parameter the next-best bound would allow on its own.")
    doc.table(["question", "answer", "certified epsilon", "bound", "runner-up", "setting"],
              cal_rows)


def section_gaussian(doc, sc, out, jobs, ctx):
    """6. The federated-learning setting: a shuffled Gaussian with check-in, and the central
    DP-SGD baselines at the same noise multiplier, every number with its relation."""
    g = sc["gaussian"]
    mech = _gaussian_mech(g)
    z, s, q, T, d = mech.noise_multiplier, mech.sigma, g["checkin"], g["rounds"], g["delta"]
    proto = Shuffle(mech, g["n"], sampling=CheckIn(q))
    doc.h(f"{ctx['num']}. Federated learning: shuffled Gaussian with check-in (n = {g['n']}, "
          f"noise multiplier {z:g} = sigma {s:g} per unit l2 diameter, check-in rate {q:g}, "
          f"T = {T}, delta = {d:g})")
    doc.p(f"The setting of the shuffle-Gaussian learning experiment (Liew & Takahashi, "
          f"arXiv:2206.09569, MNIST): every round each of the n = {g['n']} users checks in "
          f"with probability {q:g}, clips its gradient to l2 norm C and adds N(0, z^2 C^2 I) "
          f"itself, with noise multiplier z = {z:g}; a shuffler hides who sent which report and "
          f"the server averages the reports. Two clipped gradients are up to 2C apart, so in "
          f"this library's unit the per-user mechanism is Gaussian({s:g}) = "
          f"Gaussian.from_noise_multiplier({z:g}) (sigma per unit l2 diameter). The central "
          f"baselines below use the same noise multiplier z = {z:g}.")
    comparison = []
    try:
        r = _epsilon(proto, d, T, lower=True)
        doc.table(["bound", "epsilon", "kind", "composition", "neighbours", "valid for"],
                  [[c.bound, c.epsilon, c.kind, c.composition, "replace-one", c.valid_for]
                   for c in r.candidates])
        doc.p(f"Answer: epsilon = {_fmt(r.epsilon)} ({r.kind} bound '{r.bound}', replace-one "
              "neighbours). A valid amplified bound: it covers any pair of datasets differing "
              "in one user's vector, and assumes the server sees the participants' shuffled "
              "reports and their number, not who took part.")
        est = [c for c in r.candidates if c.kind == "estimate"]
        if est:
            doc.p(f"Estimate: epsilon = {_fmt(min(c.epsilon for c in est))} "
                  f"('{est[0].bound}', replace-one): it assumes all other users hold the same "
                  "vector (the homogeneous pair), which is not the worst case in dimension >= 2, "
                  "so it is not a guarantee.")
        write_csv([dict(c.to_dict(), relation="replace-one") for c in r.candidates],
                  os.path.join(out, "gaussian.csv"),
                  ["bound", "kind", "epsilon", "delta", "composition", "relation", "valid_for",
                   "seconds"])
        comparison.append([f"shuffled: each user adds noise multiplier {z:g} to its own "
                           "report", "each user, before the shuffler", "replace-one",
                           r.epsilon, r.kind, f"shuffledp '{r.bound}'"])
    except (NotApplicableError, ValueError) as exc:
        doc.p(f"No bound applies to this protocol: {exc}")
    try:
        # The same protocol under add/remove neighbours (the victim present or absent; the
        # relation of the central baselines and of the learning paper): docs/relations.md.
        ra = _epsilon(proto, d, T, relation="add_or_remove_one")
        doc.p(f"Under add/remove neighbours (the victim's data present or absent, the relation "
              f"Opacus and dp_accounting use): epsilon = {_fmt(ra.epsilon)} ({ra.kind} bound "
              f"'{ra.bound}').")
        comparison.append([f"shuffled: each user adds noise multiplier {z:g} to its own "
                           "report", "each user, before the shuffler", "add/remove",
                           ra.epsilon, ra.kind, f"shuffledp '{ra.bound}'"])
    except (NotApplicableError, ValueError) as exc:
        doc.p(f"Under add/remove neighbours no bound applies: {exc}")
    try:
        from .baselines import central_baselines
        b = central_baselines(q, z, T, d)
    except ImportError:
        doc.p("Central baselines omitted: they need the optional package dp-accounting "
              "(pip install 'shuffledp[pld]').")
        b = None
    if b is not None:
        central = (f"central DP-SGD: Poisson-subsampled Gaussian, noise multiplier {z:g} "
                   "added once to the sum")
        comparison += [
            [central, "trusted server", "add/remove", b["rdp"], "upper",
             "dp_accounting RdpAccountant"],
            [central, "trusted server", "add/remove", b["pld"], "upper",
             "dp_accounting PLDAccountant"],
            [central, "trusted server", "replace-one", b["pld_replace_one"], "upper",
             "dp_accounting PLDAccountant (REPLACE_ONE)"]]
    if comparison:
        doc.p(f"Shuffled and central at the same noise multiplier z = {z:g} and delta = {d:g} "
              "(upper bounds, each with its neighbouring relation):")
        doc.table(["protocol", "who adds the noise", "neighbours", "epsilon", "kind",
                   "computed by"], comparison, emphasis=3)
        write_csv([dict(zip(["protocol", "noise_added_by", "relation", "epsilon", "kind",
                             "source"], row)) for row in comparison],
                  os.path.join(out, "gaussian_baselines.csv"))
    if b is not None:
        doc.p("The central rows assume a trusted server that sees every clipped gradient and "
              "adds the noise once (what Opacus and dp_accounting account, add/remove being "
              "their default relation); they are reference points under a different trust "
              "model, not bounds for the shuffled protocol. Like for like, compare rows with "
              "the same relation: shuffled and central add/remove, shuffled and central "
              "replace-one.")


_SECTION_FUNCS = {"eps0": section_eps0, "n": section_n, "rounds": section_rounds,
                  "rdp": section_rdp, "calibration": section_calibration,
                  "gaussian": section_gaussian}


def build(scenario: dict | None = None, out: str = "report", progress: bool | None = None,
          *, backend=None, scheduler=None, address=None) -> dict:
    """Compute the report for a (validated) scenario into directory ``out``.

    ``backend`` / ``scheduler`` / ``address``: where the eps0 and n sections' sweeps run
    (as in ``shuffledp.sweep.stream``; docs/scale.md); the other sections run here.

    Returns ``{"out", "seconds", "files", "sections", "checks"}``; ``checks`` holds the
    cross-section consistency facts (the T = 1 answer of the rounds section against the
    eps0 section's answer for the same protocol).
    """
    sc = validate_scenario(scenario or {})
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    doc = _Doc(f"shuffledp report — {sc['name']}")
    _intro(doc, sc)
    ctx: dict = {}
    with contextlib.ExitStack() as stack:
        if backend is not None or scheduler is not None or address is not None:
            from ._cluster import open_backend
            jobs = None if sc["jobs"] == 1 else sc["jobs"]
            ctx["backend"] = stack.enter_context(open_backend(
                backend, jobs=jobs, scheduler=scheduler, address=address))
        with Progress(len(sc["sections"]) + 1, "report", enabled=progress) as bar:
            for num, name in enumerate(sc["sections"], start=1):
                ctx["num"] = num
                _SECTION_FUNCS[name](doc, sc, out, sc["jobs"], ctx)
                bar.update(note=name)
            bar.update(note="writing")
    checks = {}
    ans1 = ctx.get("rounds_answers", {}).get(1)
    key = (sc["mechanisms"][0], float(sc["eps0_fixed"]))
    if ans1 is not None and key in ctx.get("eps0_answers", {}):
        checks["rounds_T1_equals_eps0_answer"] = (ans1, ctx["eps0_answers"][key])
    secs = time.perf_counter() - t0
    doc.p(f"Computed in {secs:.1f} s by shuffledp {_version()}.")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(doc.markdown())
    with open(os.path.join(out, "report.html"), "w") as f:
        f.write(doc.html())
    with open(os.path.join(out, "scenario.json"), "w") as f:
        json.dump(sc, f, indent=2)
    return {"out": out, "seconds": round(secs, 1), "files": sorted(os.listdir(out)),
            "sections": list(sc["sections"]), "checks": checks}


def _version():
    from .cli import _version as v
    return v()


def _answer_rows(rows, key="eps0"):
    out = []
    groups = {}
    for r in rows:
        groups.setdefault((r["mechanism"], r[key]), []).append(r)
    for (mech, x), rs in groups.items():
        chosen = next((r for r in rs if r["chosen"]), None)
        lows = [r for r in rs if r["kind"] == "lower" and r["epsilon"] is not None]
        lo = max(lows, key=lambda r: r["epsilon"]) if lows else None
        gap = (chosen["epsilon"] / lo["epsilon"]) if chosen and lo and lo["epsilon"] > 0 else None
        out.append([mech, x, chosen["epsilon"] if chosen else None, chosen["bound"] if chosen else "-",
                    chosen.get("scope") or chosen["valid_for"] if chosen else "-",
                    lo["epsilon"] if lo else None,
                    lo["bound"] if lo else "-", gap])
    return out


def add_cli(sub, protocol_args, num, int_like):
    import argparse
    p = sub.add_parser("report", help="a report directory (Markdown, HTML, CSV, PNG) for a "
                                      "scenario", formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="examples:\n"
                              "  shuffledp report --out report\n"
                              "  shuffledp report --scenario my.toml --out my-report\n\n"
                              "A scenario file sets any keys of the built-in scenario "
                              "(n, delta, eps0,\nmechanisms, rounds, ...) and gets only "
                              "the sections it asks for (docs/report.md).")
    p.add_argument("--scenario", default=None,
                   help="TOML or JSON scenario file, e.g. --scenario my.toml (default: the "
                        "built-in scenario, every section)")
    p.add_argument("--out", default="report", help="output directory, e.g. --out report")
    from . import _cluster
    p.add_argument("--backend", default=None, choices=_cluster.BACKENDS,
                   help="where the eps0 and n sections' sweeps run, as for shuffledp sweep "
                        "(loky and ray take the scenario's jobs), e.g. --backend dask")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="Dask scheduler address or local:N, e.g. --scheduler local:2")
    p.add_argument("--address", default=None,
                   help="Ray cluster address, e.g. --address ray://10.0.0.5:10001")

    def run(a):
        sc = load_scenario(a.scenario) if a.scenario else {}
        try:
            info = build(sc, a.out, backend=a.backend, scheduler=a.scheduler,
                         address=a.address)
        except ImportError as exc:        # an extra that is not installed: exit 2
            raise ValueError(str(exc)) from None
        print(f"report written to {info['out']}/report.md and report.html in {info['seconds']} s "
              f"({len(info['files'])} files)")
        return 0

    p.set_defaults(func=run)
