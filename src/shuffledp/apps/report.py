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
import re
import json
import math
import os
import time
from copy import deepcopy

from ..accounting import calibrate as _cal
from . import plots
from ..core._progress import Progress
from ..accounting.accountant import epsilon as _epsilon
from ..accounting.accountant import rdp as _rdp
from ..core.errors import NotApplicableError
from ..core.protocols import CheckIn, Shuffle, WithoutReplacement
from ..core.relations import adjacency_text, short as _short
from ..core.relations import relation as _relation
from ..core.results import KINDS
from .sweep import FIELDS, grid, run as _sweep, write_csv

__all__ = ["DEFAULT_SCENARIO", "load_scenario", "validate_scenario", "build", "add_cli"]

DEFAULT_SCENARIO = {
    "name": "default: 100,000 users, delta = 1e-6",
    "n": 100_000,
    "delta": 1e-6,
    "eps0": [0.25, 0.5, 1.0, 2.0, 4.0],
    "mechanisms": ["ldp", "rr:2", "rr:3"],
    # T up to 10^4 in half-decades: enough points to see the composition routes part.
    "rounds": [1, 3, 10, 30, 100, 300, 1000, 3000, 10000],
    "eps0_fixed": 1.0,
    "n_grid": [1_000, 10_000, 100_000, 1_000_000],
    "orders": [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64],
    "calibration": {"epsilon": 1.0, "rounds": 1},
    # The neighbouring relation of every number (docs/relations.md); add_or_remove_one
    # needs a sampled deployment (with everyone reporting the count gives the user away).
    "relation": "replace_one",
    # A sampled deployment of the ldp / rr mechanisms: {checkin = RATE} (each user takes
    # part independently with that probability each round) or {sample_size = M} (M of the
    # n users drawn without replacement each round); None: every user reports every round.
    "sampling": None,
    # A deployment of the ldp / rr / matrix mechanisms as it runs (docs/deployments.md), the
    # same for every mechanism and section but gaussian: k reports per user shuffled
    # together, D dummy reports per round on public inputs, h honest users of n (None: all).
    "reports_per_user": 1,
    "dummies": 0,
    "honest": None,
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
    "relation": "str",
    "sampling": {"checkin": "num", "sample_size": "int"},
    "reports_per_user": "int", "dummies": "int", "honest": "int",
    "gaussian": {"n": "int", "noise_multiplier": "num", "sigma": "num", "checkin": "num",
                 "sample_size": "int", "rounds": "int", "delta": "num"},
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
                if out[key] is None:
                    out[key] = {}
                out[key][sub] = sval
            if key == "gaussian":
                _one_noise_unit(out[key], val)
            if key in ("gaussian", "sampling"):
                _one_sampling(key, out[key], val)
        elif key == "honest" and val is None:
            out[key] = None                # every user honest (the default)
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
    try:
        out["relation"] = _relation(out["relation"])
    except ValueError:
        raise ValueError("scenario key 'relation': must be 'replace_one' (default) or "
                         f"'add_or_remove_one'; got {out['relation']!r}") from None
    if out["sampling"] == {}:
        out["sampling"] = None
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
    # The deployment keys, each through Shuffle's own validation (at n, and at the smallest
    # n of the n axis for honest, which must not exceed any n it is used with).
    checks += [(key, lambda key=key: Shuffle(_mech("ldp", 1.0), out["n"], **{key: out[key]}))
               for key in ("reports_per_user", "dummies", "honest") if key in sc]
    if out["honest"] is not None and "n" in out["sections"]:
        checks.append(("honest", lambda: [Shuffle(_mech("ldp", 1.0), x, honest=out["honest"])
                                          for x in out["n_grid"]]))
    if out["sampling"] is not None:
        sizes = [out["n"]] + (out["n_grid"] if "n" in out["sections"] else [])
        checks.append(("sampling", lambda: [Shuffle(_mech("ldp", 1.0), x,
                                                     sampling=_sampling(out["sampling"]))
                                             for x in sizes]))
        if out["honest"] is not None and out["sampling"].get("sample_size") is not None:
            checks.append(("honest", lambda: _raise(
                "colluding users with a sample size are refused by the library (the number "
                "of honest users sampled is random); use sampling = {checkin = RATE}; got "
                f"honest = {out['honest']!r}, sampling = {out['sampling']!r}")))
    ldp_sections = [x for x in out["sections"] if x != "gaussian"]
    if out["relation"] == "add_or_remove_one" and ldp_sections and (
            out["sampling"] is None or out["sampling"].get("checkin") is None):
        raise ValueError("scenario key 'relation': 'add_or_remove_one' needs a check-in "
                         "deployment for the sections " + ", ".join(ldp_sections)
                         + " (set 'sampling' = {checkin = RATE}): with every user reporting "
                         "the number of reports reveals whether the user is present; got "
                         f"sampling = {out['sampling']!r}")
    if out["calibration"] is not None:
        checks += [("calibration.epsilon", lambda: _pos(out["calibration"]["epsilon"])),
                   ("calibration.rounds", lambda: _pos_int(out["calibration"]["rounds"]))]
    if out["gaussian"] is not None:
        g = out["gaussian"]
        checks += [("gaussian", lambda: Shuffle(_gaussian_mech(g), g["n"],
                                                 sampling=_sampling(g))),
                   ("gaussian.rounds", lambda: _pos_int(g["rounds"])),
                   ("gaussian.delta", lambda: _prob(g["delta"]))]
    for key, fn in checks:
        try:
            fn()
        except ValueError as exc:
            raise ValueError(f"scenario key {key!r}: {exc}") from None
    return out


def _raise(msg):
    raise ValueError(msg)


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


def _one_sampling(key: str, g: dict, given: dict) -> None:
    """A sampled deployment is a check-in rate or a sample size, not both; the one the file
    gives replaces the default's."""
    if "checkin" in given and "sample_size" in given:
        raise ValueError(f"scenario key '{key}': give checkin (a rate in (0, 1]) or "
                         "sample_size (users drawn without replacement each round), not both; "
                         f"got checkin = {given['checkin']!r}, "
                         f"sample_size = {given['sample_size']!r}")
    if "checkin" in given:
        g.pop("sample_size", None)
    elif "sample_size" in given:
        g.pop("checkin", None)


def _sampling(g: dict | None):
    """The Sampling of a scenario table (``sampling`` or ``gaussian``), or None."""
    if not g:
        return None
    if g.get("checkin") is not None:
        return CheckIn(g["checkin"])
    if g.get("sample_size") is not None:
        return WithoutReplacement(int(g["sample_size"]))
    return None


def _sampling_text(g: dict | None, n: int | None = None) -> str:
    s = _sampling(g)
    if s is None:
        return "every user reports every round"
    if isinstance(s, CheckIn):
        return f"each user checks in independently with probability {s.rate:g} each round"
    return f"{s.size:,} users drawn uniformly without replacement each round"


def _deploy(sc) -> dict:
    """The scenario's deployment fields of ``Shuffle`` that are set (none for a plain round)."""
    out = {}
    if int(sc.get("reports_per_user", 1)) != 1:
        out["reports_per_user"] = int(sc["reports_per_user"])
    if int(sc.get("dummies", 0)):
        out["dummies"] = int(sc["dummies"])
    if sc.get("honest") is not None:
        out["honest"] = int(sc["honest"])
    return out


def _deploy_text(sc) -> str:
    """The deployment in words (a sentence fragment), or '' for a plain round."""
    d, parts = _deploy(sc), []
    if "reports_per_user" in d:
        parts.append(f"each user sends {d['reports_per_user']} reports per round, all "
                     "shuffled together (the guarantee protects the user's whole data)")
    if "dummies" in d:
        parts.append(f"{d['dummies']:,} dummy reports per round on public inputs fixed in "
                     "advance, randomized where the analyst cannot see it (valid for any "
                     "choice of those inputs)")
    if "honest" in d:
        parts.append(f"only {d['honest']:,} users are honest, the victim included; the "
                     "others collude with the analyst, who knows their inputs and reports")
    return "; ".join(parts)


def _deploy_tail(sc) -> str:
    """The deployment in a heading or plot title (', k = 2 reports/user, ...'), or ''."""
    d = _deploy(sc)
    return "".join([f", {d['reports_per_user']} reports/user" if "reports_per_user" in d else "",
                    f", {d['dummies']:,} dummies" if "dummies" in d else "",
                    f", {d['honest']:,} honest" if "honest" in d else ""])


def _gaussian_mech(g: dict):
    """The scenario's Gaussian: ``sigma`` (per unit diameter) or ``noise_multiplier``."""
    from ..core.mechanisms import Gaussian
    if g.get("sigma") is not None:
        return Gaussian(g["sigma"])
    return Gaussian.from_noise_multiplier(g["noise_multiplier"])


def _mech(spec, eps0):
    from .cli import mechanism_from_spec
    return mechanism_from_spec(spec, eps0)


def _prob(x):
    from ..core import _validate as v
    return v.probability("value", x)


def _pos(x):
    from ..core import _validate as v
    return v.real("value", x, lo=0.0, lo_open=True)


def _pos_int(x):
    from ..core import _validate as v
    return v.integer("value", x, lo=1)


def _order(x):
    from ..core import _validate as v
    return v.order("order", x)


def _jobs(x):
    from ..core import _validate as v
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
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, float):
        if math.isinf(x):
            return "inf"
        return f"{x:.4g}" if (x == 0 or 1e-3 <= abs(x) < 1e5) else f"{x:.3e}"
    if isinstance(x, int):
        return f"{x:,}" if abs(x) >= 1000 else str(x)
    return str(x)


# A plain string (not an f-string): braces are CSS, not placeholders.
CSS = ("body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em;line-height:1.4}"
       "table{border-collapse:collapse;font-size:13px;margin:0.5em 0}"
       "td,th{border:1px solid #999;padding:3px 6px;text-align:left;vertical-align:top}"
       "th{background:#e8e8e8}tr.answer td{font-weight:bold;background:#f4f8ff}"
       "img{max-width:100%}p.note{font-size:12px;color:#444}"
       "div.summary{border:2px solid #2a5d9f;background:#f4f8ff;padding:0.4em 1.2em 0.8em;"
       "margin:1em 0 1.5em;border-radius:6px}div.summary h2{margin-top:0.4em}"
       "div.summary h3{margin:0.9em 0 0.2em;font-size:1em}div.summary ul{margin:0.2em 0}"
       "div.summary td,div.summary th{background:#fff}div.summary th{background:#e4ecf7}")


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

    def box(self, title, parts, at=None):
        """A framed box (the summary): ``parts`` is a list of ("p", text), ("h", text),
        ("ul", [text, ...]) or ("t", (header, rows, emphasis)); ``at``: block index."""
        blk = ("box", (title, parts))
        if at is None:
            self.blocks.append(blk)
        else:
            self.blocks.insert(at, blk)

    @staticmethod
    def _md_table(b):
        hdr, rows, em = b
        out = ["| " + " | ".join(hdr) + " |", "|" + "|".join("---" for _ in hdr) + "|"]
        out += ["| " + " | ".join(f"**{_fmt(c)}**" if i == em else _fmt(c)
                                  for i, c in enumerate(r)) + " |" for r in rows]
        return out

    @staticmethod
    def _html_table(b):
        e = html.escape
        hdr, rows, em = b
        out = ["<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in hdr) + "</tr>"]
        out += ["<tr>" + "".join(f"<td><b>{e(_fmt(c))}</b></td>" if i == em
                                 else f"<td>{e(_fmt(c))}</td>"
                                 for i, c in enumerate(r)) + "</tr>" for r in rows]
        out.append("</table>")
        return out

    def markdown(self):
        out = [f"# {self.title}", ""]
        for kind, b in self.blocks:
            if kind == "h":
                out += [f"## {b}", ""]
            elif kind == "p":
                out += [b, ""]
            elif kind == "t":
                out += self._md_table(b) + [""]
            elif kind == "i":
                out += [f"![{b[1]}]({b[0]})", ""]
            elif kind == "box":
                title, parts = b
                body = [f"## {title}", ""]
                for k, x in parts:
                    if k == "h":
                        body += [f"**{x}**", ""]
                    elif k == "p":
                        body += [x, ""]
                    elif k == "ul":
                        body += [f"- {item}" for item in x] + [""]
                    elif k == "t":
                        body += self._md_table(x) + [""]
                out += [("> " + line).rstrip() for line in body[:-1]] + [""]
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
                out += self._html_table(b)
            elif kind == "i":
                out.append(f"<p><img src='{e(b[0])}' alt='{e(b[1])}'></p>")
            elif kind == "box":
                title, parts = b
                out.append(f"<div class='summary' id='summary'><h2>{e(title)}</h2>")
                for k, x in parts:
                    if k == "h":
                        out.append(f"<h3>{e(x)}</h3>")
                    elif k == "p":
                        out.append(f"<p>{e(x)}</p>")
                    elif k == "ul":
                        out.append("<ul>" + "".join(f"<li>{e(i)}</li>" for i in x) + "</ul>")
                    elif k == "t":
                        out += self._html_table(x)
                out.append("</div>")
        out.append("</body></html>")
        return "\n".join(out)


INTRO = ("Every number below is labelled with its kind — upper (a guarantee, rounded up), "
         "lower (what some randomizer and dataset provably leaks) or estimate (neither) — and "
         "with the class of randomizers it is valid for. The answer for a protocol is the "
         "smallest upper bound valid for its randomizer; bounds whose formulas are "
         "reconstructed or unconfirmed, and estimates, are shown but never chosen.")


def _g(x) -> str:
    """A number as people write it: 1e-6, not 1e-06."""
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", f"{x:g}").replace("e+", "e")


def _rel(sc) -> str:
    """'replace-one' or 'add/remove': the scenario's relation, as every number states it."""
    return _short(sc["relation"])


def _proto(sc, mech, eps0, n):
    """The scenario's protocol for one ldp / rr mechanism (with its sampling, if any)."""
    return Shuffle(_mech(mech, eps0), n, sampling=_sampling(sc["sampling"]), **_deploy(sc))


def _samp_axes(sc) -> dict:
    """The sweep axes of the scenario's sampling and deployment fields (one value each)."""
    s = sc["sampling"] or {}
    axes = {k: [v] for k, v in _deploy(sc).items()}
    if s.get("checkin") is not None:
        axes["checkin"] = [s["checkin"]]
    elif s.get("sample_size") is not None:
        axes["sample_size"] = [int(s["sample_size"])]
    return axes


def _plot_setting(sc) -> str:
    """The tail of every plot title: sampling (if any) and the relation."""
    s = sc["sampling"] or {}
    samp = (f", check-in {s['checkin']:g}" if s.get("checkin") is not None else
            f", {int(s['sample_size']):,} sampled/round" if s.get("sample_size") is not None
            else "")
    return f"{samp}{_deploy_tail(sc)}, {_rel(sc)} neighbours"


def _intro(doc, sc):
    doc.p(INTRO)
    adj = adjacency_text(sc["relation"])
    dep = _deploy_text(sc)
    doc.p(f"Deployment: {_sampling_text(sc['sampling'])}"
          + (f"; {dep} (every section but the federated-learning one; docs/deployments.md)"
             if dep else "") + f". {adj[0].upper()}{adj[1:]}.")


def _ylabel(sc, d):
    return f"ε at δ = {_g(d)} ({_rel(sc)})"


def section_eps0(doc, sc, out, jobs, ctx):
    """1. ε against ε0, every bound, each mechanism (one round)."""
    d, n = sc["delta"], sc["n"]
    pts = grid(mechanism=sc["mechanisms"], eps0=sc["eps0"], n=[n], delta=[d], rounds=[1],
               relation=[sc["relation"]], **_samp_axes(sc))
    rows = _sweep(pts, n_jobs=jobs, progress=False, backend=ctx.get("backend"))
    write_csv(rows, os.path.join(out, "eps_vs_eps0.csv"), FIELDS + ["relation"])
    ctx["eps0_answers"] = {(r["mechanism"], float(r["eps0"])): r["epsilon"]
                           for r in rows if r["chosen"]}
    doc.h(f"{ctx['num']}. epsilon against eps0 (n = {n:,}, delta = {_g(d)}, one round"
          f"{_deploy_tail(sc)}, {_rel(sc)} neighbours)")
    doc.table(["mechanism", "eps0", f"answer (upper, {_rel(sc)})", "bound", "valid for",
               "tightest lower", "lower bound", "gap"], _answer_rows(rows), emphasis=2)
    doc.p("Plots: the answer and the lower bounds set the vertical scale; bounds far above "
          "it (the trivial bound eps0, loose estimates) are named under the plot instead of "
          "setting the range.")
    for mech in sc["mechanisms"]:
        png = plots.line_plot(_with_answer(rows, mech), "eps0", "epsilon", "bound",
                              os.path.join(out, f"eps_vs_eps0_{_slug(mech)}.png"),
                              logx="auto", logy="auto", frame=True,
                              xlabel="ε0 of the local randomizer", ylabel=_ylabel(sc, d),
                              title=f"{mech}: ε vs ε0, n = {n:,}, δ = {_g(d)}, one round"
                                    + _plot_setting(sc))
        doc.img(png, f"epsilon vs eps0 for {mech}")


def _slug(mech):
    return mech.replace(":", "").replace("/", "_")


def _with_answer(rows, mech, kinds=KINDS):
    """A mechanism's rows of every kind, plus its chosen rows again as the answer series."""
    sub = [dict(r, emphasis=False) for r in rows if r["mechanism"] == mech and r["kind"] in kinds]
    sub += [dict(r, series="answer", kind="answer", bound="answer") for r in rows
            if r["mechanism"] == mech and r["chosen"]]
    return sub


def section_n(doc, sc, out, jobs, ctx):
    """2. ε against n at a fixed ε0, a plot per mechanism."""
    d, e0 = sc["delta"], sc["eps0_fixed"]
    pts = grid(mechanism=sc["mechanisms"], eps0=[e0], n=sc["n_grid"], delta=[d], rounds=[1],
               relation=[sc["relation"]], **_samp_axes(sc))
    rows_n = _sweep(pts, n_jobs=jobs, progress=False, backend=ctx.get("backend"))
    write_csv(rows_n, os.path.join(out, "eps_vs_n.csv"), FIELDS + ["relation"])
    doc.h(f"{ctx['num']}. epsilon against n (eps0 = {e0:g}, delta = {_g(d)}, one round"
          f"{_deploy_tail(sc)}, {_rel(sc)} neighbours)")
    doc.table(["mechanism", "n", f"answer (upper, {_rel(sc)})", "bound", "valid for",
               "tightest lower", "lower bound", "gap"], _answer_rows(rows_n, key="n"),
              emphasis=2)
    for mech in sc["mechanisms"]:
        doc.img(plots.line_plot(_with_answer(rows_n, mech, ("upper", "lower")), "n",
                                "epsilon", "bound",
                                os.path.join(out, f"eps_vs_n_{_slug(mech)}.png"),
                                logx="auto", logy="auto", frame=True,
                                xlabel="n (users)", ylabel=_ylabel(sc, d),
                                title=f"{mech}: ε vs n, ε0 = {e0:g}, δ = {_g(d)}, one round"
                                      + _plot_setting(sc)),
                f"epsilon vs n for {mech}")


_ROUTES = ("rdp", "kov15", "pld")
# KOV15 costs seconds per point and is far above the other routes: a few decades suffice.
_KOV15_T = (10, 100, 1000, 10_000)


def section_rounds(doc, sc, out, jobs, ctx):
    """3. ε against T for every mechanism: the best valid answer at every T (T = 1
    included) and, for comparison, the best bound through each composition route."""
    d, n, e0, rel = sc["delta"], sc["n"], sc["eps0_fixed"], sc["relation"]
    rows_t, table = [], []
    for mech in sc["mechanisms"]:
        proto = _proto(sc, mech, e0, n)
        for T in sc["rounds"]:
            try:
                ans = _epsilon(proto, d, T, relation=rel)
            except (NotApplicableError, ValueError) as exc:
                table.append([mech, T, None, str(exc), "-", "-", None, None, None])
                continue
            rows_t.append({"mechanism": mech, "rounds": T, "composition": ans.composition,
                           "epsilon": ans.epsilon, "bound": ans.bound, "kind": "answer",
                           "valid_for": ans.valid_for, "series": "answer",
                           "relation": _rel(sc)})
            per_route = {}
            for comp in _ROUTES:
                if T == 1 and comp != "pld":
                    # One round: nothing to compose (the rdp "route" would be another
                    # bound's one-round RDP conversion, a kink in the line, not a route).
                    continue
                if comp == "kov15" and (mech != sc["mechanisms"][0] or T not in _KOV15_T):
                    continue                   # seconds per point, far above the others
                try:
                    # The answer is the best over every route: when it came through this
                    # route it is this route's best too (no second search).
                    r = (ans if ans.composition == comp else
                         _epsilon(proto, d, T, composition=comp, relation=rel))
                except (NotApplicableError, ValueError):
                    continue
                per_route[comp] = r
                rows_t.append({"mechanism": mech, "rounds": T, "composition": comp,
                               "epsilon": r.epsilon, "bound": r.bound, "kind": r.kind,
                               "valid_for": r.valid_for, "relation": _rel(sc),
                               "series": f"best via {comp}"})
            table.append([mech, T, ans.epsilon, ans.bound, ans.composition, ans.scope]
                         + [per_route[c].epsilon if c in per_route else None
                            for c in _ROUTES])
            if mech == sc["mechanisms"][0]:
                ctx.setdefault("rounds_answers", {})[T] = ans.epsilon
    write_csv(rows_t, os.path.join(out, "eps_vs_rounds.csv"),
              ["mechanism", "rounds", "series", "composition", "epsilon", "bound", "kind",
               "valid_for", "relation"])
    doc.h(f"{ctx['num']}. epsilon against rounds T (eps0 = {e0:g}, n = {n:,}, delta = {_g(d)}"
          f"{_deploy_tail(sc)}, {_rel(sc)} neighbours)")
    doc.p("answer: the smallest valid upper bound at each T, over every bound and route "
          "(at T = 1 it is the answer of the epsilon-against-eps0 table). The route columns "
          "give the best bound through one composition route: rdp = per-round RDP summed and "
          "converted; kov15 = per-round (epsilon, delta) composed by Kairouz-Oh-Viswanath "
          "2015 with the delta split optimised; pld = the dominating pair's privacy-loss "
          "distribution composed numerically (dp_accounting). kov15 is computed for the "
          f"first mechanism ({sc['mechanisms'][0]}) at T = 10, 100, 1,000 and 10,000 only: "
          "seconds per point, and far above the other routes.")
    doc.table(["mechanism", "T", f"answer (upper, {_rel(sc)})", "bound", "route",
               "valid for", "best via rdp", "best via kov15", "best via pld"], table,
              emphasis=2)
    for mech in sc["mechanisms"]:
        sub = [dict(r, bound=r["composition"] if r["kind"] != "answer" else "answer")
               for r in rows_t if r["mechanism"] == mech]
        doc.img(plots.line_plot(sub, "rounds", "epsilon", "series",
                                os.path.join(out, f"eps_vs_rounds_{_slug(mech)}.png"),
                                logx="auto", logy="auto", frame=True,
                                xlabel="T (rounds, each a fresh shuffled release)",
                                ylabel=_ylabel(sc, d),
                                title=f"{mech}: ε vs T, ε0 = {e0:g}, n = {n:,}, δ = {_g(d)}"
                                      + _plot_setting(sc)),
                f"epsilon vs rounds for {mech}")


def section_rdp(doc, sc, out, jobs, ctx):
    """4. RDP curves of every bound with an RDP view."""
    from ..bounds import all_bounds
    n, e0, rel = sc["n"], sc["eps0_fixed"], sc["relation"]
    rows_r = []
    for mech in sc["mechanisms"]:
        proto = _proto(sc, mech, e0, n)
        for b in all_bounds():
            if not b.has_rdp or b.check(proto):
                continue
            try:
                c = _rdp(proto, [o for o in sc["orders"] if o <= b.max_order(proto)],
                         bound=b.id, relation=rel)
            except (NotApplicableError, ValueError):
                continue
            for o, v in zip(c.orders, c.values):
                rows_r.append({"mechanism": mech, "bound": b.id, "kind": c.kind,
                               "order": float(o), "rdp": float(v), "valid_for": c.valid_for,
                               "series": f"{b.id}", "relation": _rel(sc)})
    doc.h(f"{ctx['num']}. Rényi DP of one round (eps0 = {e0:g}, n = {n:,}"
          f"{_deploy_tail(sc)}, {_rel(sc)} neighbours)")
    if not rows_r:
        doc.p("No bound of this deployment has a Rényi-DP view under "
              f"{_rel(sc)} neighbours.")
        return
    write_csv(rows_r, os.path.join(out, "rdp_curves.csv"))
    doc.p("Each curve is a bound on the Rényi divergence of order alpha between the outputs "
          "on neighbouring datasets, for one round (T rounds add up). Lower-bound curves are "
          "exact Rényi divergences of a specific instance; converting them to (epsilon, delta) "
          "gives the best any RDP analysis could do, not a lower bound.")
    first = [r for r in rows_r if r["mechanism"] == sc["mechanisms"][0]]
    doc.img(plots.line_plot(first, "order", "rdp", "series", os.path.join(out, "rdp_curves.png"),
                            logx=True, logy=True, frame=True, xlabel="Rényi order α",
                            ylabel=f"Rényi DP ε(α) of one round ({_rel(sc)})",
                            title=f"{sc['mechanisms'][0]}: Rényi DP vs order α, ε0 = {e0:g}, "
                                  f"n = {n:,}, one round" + _plot_setting(sc)), "RDP curves")


def _cal_row(question, c, setting, integer=False):
    val = f"{int(c.value):,}" if integer else _fmt(c.value)
    return [question, val, c.epsilon, _short(c.relation), c.bound, c.runner_up_text() or "-",
            setting]


def section_calibration(doc, sc, out, jobs, ctx):
    """5. Calibration: the parameter that meets the scenario's target (every mechanism)."""
    d, n, e0, rel = sc["delta"], sc["n"], sc["eps0_fixed"], sc["relation"]
    tgt, T = sc["calibration"]["epsilon"], sc["calibration"]["rounds"]
    samp, dep = _sampling(sc["sampling"]), _deploy(sc)
    doc.h(f"{ctx['num']}. Calibration: the parameter that meets epsilon = {tgt:g} at "
          f"delta = {_g(d)} ({_deploy_tail(sc)[2:]}{', ' if _deploy(sc) else ''}"
          f"{_rel(sc)} neighbours)")
    cal_rows = []

    def ask(question, fn, setting, integer=False):
        try:
            cal_rows.append(_cal_row(question, fn(), setting, integer))
        except (NotApplicableError, ValueError) as exc:
            cal_rows.append([question, "-", None, _rel(sc), str(exc), "-", setting])

    for mech in sc["mechanisms"]:
        k = None if mech == "ldp" else int(mech.split(":")[1]) if ":" in mech else 2
        ask(f"largest eps0 ({mech})",
            lambda: _cal.eps0(n, tgt, d, T, k=k, sampling=samp, relation=rel, **dep),
            f"n = {n:,}, T = {T}, target eps = {tgt:g}")
    first = sc["mechanisms"][0]            # a T search costs seconds per mechanism
    ask(f"largest T ({first})",
        lambda: _cal.rounds(_proto(sc, first, e0, n), tgt, d, relation=rel),
        f"eps0 = {e0:g}, n = {n:,}, target eps = {tgt:g}", integer=True)
    if T * e0 <= tgt:
        # One user already meets the target: a row per mechanism saying "1" says nothing.
        doc.p(f"Smallest n: not asked, the answer is 1 user for every mechanism: eps0 = "
              f"{e0:g} over T = {T} round(s) already meets the target epsilon = {tgt:g} "
              "without shuffling (the trivial bound, T * eps0). A smaller target or more "
              "rounds in the scenario's calibration table asks for more users.")
    elif "honest" in dep:
        # Only the honest users hide the victim: n is not what the target asks for.
        doc.p(f"Smallest n: not asked: with honest = {dep['honest']:,} the guarantee depends "
              "on the honest users only (the colluders add nothing); remove 'honest' from "
              "the scenario to ask for the smallest number of (honest) users.")
    else:
        users_dep = {k: v for k, v in dep.items() if k != "honest"}
        for mech in sc["mechanisms"]:
            ask(f"smallest n ({mech})",
                lambda: _cal.users(_mech(mech, e0), tgt, d, T, sampling=samp, relation=rel,
                                   **users_dep),
                f"eps0 = {e0:g}, T = {T}, target eps = {tgt:g}", integer=True)
    hdr = ["question", "answer", "certified epsilon", "neighbours", "bound", "runner-up",
           "setting"]
    write_csv([dict(zip(["question", "answer", "epsilon", "relation", "bound", "runner_up",
                         "setting"], r)) for r in cal_rows], os.path.join(out, "calibration.csv"))
    doc.p(f"Every row meets the scenario's target epsilon = {tgt:g} at delta = {_g(d)}: "
          f"{_sampling_text(sc['sampling'])}"
          + (f"; {_deploy_text(sc)}" if dep else "") + ". runner-up: the parameter the next-best bound "
          "would allow on its own.")
    doc.table(hdr, cal_rows, emphasis=1)
    ctx["calibration_rows"] = cal_rows


def section_gaussian(doc, sc, out, jobs, ctx):
    """6. The federated-learning setting: a shuffled Gaussian with check-in, and the central
    DP-SGD baselines at the same noise multiplier, every number with its relation."""
    g = sc["gaussian"]
    mech = _gaussian_mech(g)
    z, s, T, d = mech.noise_multiplier, mech.sigma, g["rounds"], g["delta"]
    q = g.get("checkin")
    samp = _sampling(g)
    proto = Shuffle(mech, g["n"], sampling=samp)
    how = (f"check-in rate {q:g}" if q is not None else
           f"{samp.size:,} users sampled without replacement per round")
    doc.h(f"{ctx['num']}. Federated learning: shuffled Gaussian (n = {g['n']:,}, noise "
          f"multiplier {z:g} = sigma {s:g} per unit l2 diameter, {how}, T = {T:,}, "
          f"delta = {_g(d)})")
    doc.p(f"The setting of the shuffle-Gaussian learning experiment (Liew & Takahashi, "
          f"arXiv:2206.09569, MNIST): every round, of the n = {g['n']:,} users, "
          f"{_sampling_text(g)}; each participant clips its gradient to l2 norm C and adds "
          f"N(0, z^2 C^2 I) itself, with noise multiplier z = {z:g}; a shuffler hides who sent "
          "which report and "
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
        lead = ("Answer" if sc["relation"] == "replace_one"
                else "For comparison, under replace-one neighbours")
        doc.p(f"{lead}: epsilon = {_fmt(r.epsilon)} ({r.kind} bound '{r.bound}', replace-one "
              "neighbours). A valid amplified bound: it covers any pair of datasets differing "
              "in one user's vector, and assumes the server sees the participants' shuffled "
              "reports and their number, not who took part.")
        if sc["relation"] == "replace_one":
            ctx["gaussian_answer"] = r
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
        lead = ("Answer (add/remove neighbours: " if sc["relation"] == "add_or_remove_one"
                else "Under add/remove neighbours (")
        doc.p(f"{lead}the victim's data present or absent, the relation Opacus and "
              f"dp_accounting use): epsilon = {_fmt(ra.epsilon)} ({ra.kind} bound "
              f"'{ra.bound}').")
        if sc["relation"] == "add_or_remove_one":
            ctx["gaussian_answer"] = ra
        comparison.append([f"shuffled: each user adds noise multiplier {z:g} to its own "
                           "report", "each user, before the shuffler", "add/remove",
                           ra.epsilon, ra.kind, f"shuffledp '{ra.bound}'"])
    except (NotApplicableError, ValueError) as exc:
        doc.p(f"Under add/remove neighbours no bound applies: {exc}")
    try:
        from ..accounting.baselines import central_baselines
        if q is None:
            doc.p("Central DP-SGD baselines are computed for Poisson (check-in) sampling "
                  "only; this deployment samples a fixed number of users per round.")
            b = None
        else:
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
        doc.p(f"Shuffled and central at the same noise multiplier z = {z:g} and delta = {_g(d)} "
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


_RELATION_SENTENCE = {
    "replace_one": ("replace-one: the two datasets compared have the same n users and differ "
                    "in one user's input. Numbers under this relation are not comparable with "
                    "add/remove numbers (the relation of Opacus and dp_accounting's DP-SGD "
                    "accounting); see docs/relations.md."),
    "add_or_remove_one": ("add/remove: one dataset holds the victim's data and the other does "
                          "not (n is the size of the larger one). Numbers under this relation "
                          "are not comparable with replace-one numbers; see "
                          "docs/relations.md."),
}


def summary(doc, sc, ctx):
    """The box a review board reads first: the answer, what it assumes, the neighbouring
    relation and what it does not cover. Every number comes from ``sd.epsilon`` /
    ``sd.calibrate`` (the same calls as the sections below)."""
    d, n, e0, rel = sc["delta"], sc["n"], sc["eps0_fixed"], sc["relation"]
    ldp_sections = [x for x in sc["sections"] if x != "gaussian"]
    parts = []
    if ldp_sections:
        t_max = max(sc["rounds"]) if "rounds" in sc["sections"] else 1
        rows = []
        for mech in sc["mechanisms"]:
            proto = _proto(sc, mech, e0, n)
            try:
                r1 = _epsilon(proto, d, 1, relation=rel)
                rt = _epsilon(proto, d, t_max, relation=rel) if t_max > 1 else None
            except (NotApplicableError, ValueError) as exc:
                rows.append([mech, e0, None, None, str(exc), "-"])
                continue
            bound = r1.bound if rt is None or rt.bound == r1.bound else f"{r1.bound}; {rt.bound}"
            rows.append([mech, e0, r1.epsilon, rt.epsilon if rt else None, bound,
                         r1.scope or r1.valid_for])
        first = rows[0]
        if first[2] is not None:
            tail = (f"; after T = {t_max:,} rounds, epsilon <= {_fmt(first[3])}"
                    if first[3] is not None else "")
            dep = _deploy_text(sc)
            parts.append(("p", f"{n:,} users, each report from a local randomizer with "
                               f"eps0 = {e0:g} ({first[0]}), shuffled; "
                               f"{_sampling_text(sc['sampling'])}"
                               + (f"; {dep}" if dep else "") + ". One round is "
                               f"(epsilon, delta)-DP with epsilon <= {_fmt(first[2])} at "
                               f"delta = {_g(d)}{tail} (upper bounds, {_rel(sc)} neighbours)."))
        tail = _deploy_tail(sc)
        hdr = ["mechanism", "eps0", f"epsilon, one round (upper{tail}, {_rel(sc)})"]
        if t_max > 1:
            hdr.append(f"epsilon after T = {t_max:,} rounds (upper{tail}, {_rel(sc)})")
        hdr += ["bound", "valid for"]
        parts.append(("t", (hdr, [r if t_max > 1 else r[:3] + r[4:] for r in rows], 2)))
    if "calibration" in sc["sections"] and ctx.get("calibration_rows"):
        c = sc["calibration"]
        first = sc["mechanisms"][0]
        got = [f"{r[0]} = {r[1]}" for r in ctx["calibration_rows"]
               if r[1] != "-" and r[0].endswith(f"({first})")]
        parts.append(("p", f"Calibration at the target epsilon = {c['epsilon']:g}, delta = "
                           f"{_g(d)} ({_rel(sc)}; section "
                           f"{sc['sections'].index('calibration') + 1}): " + "; ".join(got)
                           + "."))
    g, ga = sc["gaussian"], ctx.get("gaussian_answer")
    if g is not None and ga is not None:
        z = ga.protocol.mechanism.noise_multiplier
        parts.append(("p", f"Federated learning (section {sc['sections'].index('gaussian') + 1}"
                           f"): n = {g['n']:,}, noise multiplier {z:g}, {_sampling_text(g)}: after T = {g['rounds']:,} rounds epsilon <= "
                           f"{_fmt(ga.epsilon)} at delta = {_g(g['delta'])} (upper bound "
                           f"'{ga.bound}', {_short(ga.relation)} neighbours)."))
    parts.append(("h", "What it assumes"))
    parts.append(("ul", [
        "A trusted shuffler: the analyst sees the multiset of each round's reports (and how "
        "many there are), never who sent which report, and no metadata that links a report "
        "to its sender (addresses, timing, order of arrival).",
        "Each user runs the stated local randomizer on its own input with fresh, independent "
        "randomness in every round. 'valid for' names the randomizers a number holds for: "
        "ldp = any eps0-LDP randomizer; class-S and this-randomizer = only the named one.",
        f"The population is as stated: n = {n:,} users in the main sections"
        + (f", {sc['gaussian']['n']:,} in the federated-learning section"
           if sc["gaussian"] is not None and "gaussian" in sc["sections"] else "")
        + "; " + _sampling_text(sc["sampling"]) + ". A guarantee for n users also holds "
        "for more users, not for fewer.",
        "Several rounds are composed as separate releases (RDP, KOV15 or PLD composition, "
        "each valid when a round's randomizer is chosen after seeing earlier outputs).",
    ] + _deploy_assumptions(sc)))
    parts.append(("h", "Neighbouring relation"))
    parts.append(("p", _RELATION_SENTENCE[rel] + " Every number in this report is stated "
                  "with its relation."))
    not_covered = [
        "A shuffler that colludes with the analyst or is compromised: each report is then "
        "protected only by its local randomizer (eps0 per report).",
        ("One person behind several users (group privacy): the guarantee is per user, over "
         f"the user's {int(sc['reports_per_user'])} reports per round."
         if int(sc["reports_per_user"]) > 1 else
         "A user who sends more than one report per round, or one person behind several "
         "users (group privacy): the guarantee is per user as modelled (a deployment with "
         "several reports per user sets the scenario key reports_per_user)."),
        "Releases outside this scenario about the same users: compose them in one ledger "
        "(shuffledp compose, docs/ledger.md).",
        "Lower bounds and estimates: shown for comparison, never a guarantee; only numbers "
        "labelled upper are.",
    ]
    if g is not None and "gaussian" in sc["sections"]:
        not_covered.append("The central DP-SGD rows of the federated-learning section: a "
                           "different trust model (a trusted server adds the noise).")
    parts.append(("h", "What it does not cover"))
    parts.append(("ul", not_covered))
    doc.box("Summary", parts, at=0)


def _deploy_assumptions(sc) -> list:
    """The summary's assumptions of the scenario's deployment fields (docs/deployments.md)."""
    d, out = _deploy(sc), []
    if "reports_per_user" in d:
        out.append(f"Each user's {d['reports_per_user']} reports of a round go to the same "
                   "shuffler and are shuffled with everyone's; neighbouring datasets replace "
                   "one user's whole data (all its reports).")
    if "dummies" in d:
        out.append(f"The {d['dummies']:,} dummy reports per round come from the mechanism on "
                   "inputs fixed in advance, independent of the data, with randomness the "
                   "analyst does not see; the analyst cannot tell them from users' reports.")
    if "honest" in d:
        out.append(f"At least {d['honest']:,} of the n users are honest (the victim "
                   "included); the analyst may know the others' inputs and reports.")
    return out


_SECTION_FUNCS = {"eps0": section_eps0, "n": section_n, "rounds": section_rounds,
                  "rdp": section_rdp, "calibration": section_calibration,
                  "gaussian": section_gaussian}


def build(scenario: dict | None = None, out: str = "report", progress: bool | None = None,
          *, backend=None, scheduler=None, address=None) -> dict:
    """Compute the report for a (validated) scenario into directory ``out``.

    ``backend`` / ``scheduler`` / ``address``: where the eps0 and n sections' sweeps run
    (as in ``shuffledp.apps.sweep.stream``; docs/scale.md); the other sections run here.

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
            summary(doc, sc, ctx)
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
    from .cli import version_text
    return version_text()


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
