"""Reproductions of the reference papers' figures (analogues, computed by this library).

``shuffledp figure NAME [--out DIR]`` writes NAME.csv and NAME.png. Series refer to bound
ids; a bound that does not apply (or is not available) is skipped and the CSV says why.

* ``fmt23-fig1``  — ε against ε0 (n = 1e4, 1e5; δ = 1e-6): fmt20, fmt23 and the 2RR/3RR
  lower bounds (FMT23, arXiv:2208.04591, Fig. 1).
* ``fmt23-fig2``  — RDP against λ (n = 1e4, ε0 = 1): fmt20 and fmt23 pairs, Girgis UB1,
  binary-RR lower bound (FMT23 Fig. 2).
* ``fmt23-fig3``  — ε against T: fmt23 via RDP, fmt23 via approximate DP + KOV15, fmt20
  via RDP (FMT23 Fig. 3).
* ``fmt23-fig5``  — ε against ε0 for k-RR, k ∈ {2, 3, 10}: the valid upper bounds (fmt23
  pair, privacy blanket) and each k's lower bound (FMT23 Fig. 5; its k-RR upper bound is
  retracted).
* ``blanket-krr``  — ε against k for k-RR (n = 1e4, ε0 = 1): fmt20, fmt23, the privacy
  blanket of k-RR and the k-RR lower bound (the gap closes).
* ``blanket-encoders`` — ε against ε0 for OUE and RAPPOR (d = 1000, n = 1e5): the blanket
  of each encoder against fmt20.
* ``girgis-composition`` — UB1 (RDP) against FMT20 + KOV15 over T, with their ratio
  (Girgis et al., arXiv:2105.05180, the composition comparison).
* ``liew-fig1a``  — Gaussian, ε against T: homogeneous-pair estimate with orders ≤ 30
  and with the order search, the valid trimmed-clone bound, and the unamplified Gaussian
  (Liew–Takahashi, arXiv:2206.09569, Fig. 1(a)).
"""

from __future__ import annotations

import os
import time

import numpy as np

from . import plots
from ..core._progress import Progress
from ..accounting.accountant import epsilon as _epsilon
from ..accounting.accountant import rdp as _rdp
from ..core.errors import NotApplicableError
from ..core.mechanisms import Gaussian, LDP, RandomizedResponse
from ..core.protocols import Shuffle
from .sweep import write_csv

__all__ = ["FIGURES", "make", "add_cli"]


def _eps_row(proto, delta, T, bound, composition=None, label=None, **extra):
    t0 = time.perf_counter()
    if T == 1:
        composition = None     # one round: nothing to compose; every route is the same bound
    try:
        r = _epsilon(proto, delta, T, bound=bound, composition=composition)
        return {"series": label or bound, "bound": bound, "kind": r.kind, "epsilon": r.epsilon,
                "composition": r.composition, "valid_for": r.valid_for,
                "seconds": round(time.perf_counter() - t0, 4), **extra}
    except (NotApplicableError, ValueError) as exc:
        return {"series": label or bound, "bound": bound, "kind": "", "epsilon": None,
                "composition": composition or "", "valid_for": "",
                "not_applicable": str(exc), "seconds": 0.0, **extra}


def _fmt23_fig1(out, bar):
    rows = []
    eps0s = [0.25, 0.5, 1, 1.5, 2, 3, 4, 5, 6, 8]
    for n in (10_000, 100_000):
        for e0 in eps0s:
            rows.append(_eps_row(Shuffle(LDP(e0), n), 1e-6, 1, "fmt20", n=n, eps0=e0))
            rows.append(_eps_row(Shuffle(RandomizedResponse(e0, 2), n), 1e-6, 1, "fmt23", n=n, eps0=e0))
            rows.append(_eps_row(Shuffle(RandomizedResponse(e0, 2), n), 1e-6, 1, "krr-lower",
                                 label="2RR lower", n=n, eps0=e0))
            rows.append(_eps_row(Shuffle(RandomizedResponse(e0, 3), n), 1e-6, 1, "krr-lower",
                                 label="3RR lower", n=n, eps0=e0))
            bar.update()
    return rows, dict(x="eps0", y="epsilon", facet="n", logy=True,
                      title="epsilon vs eps0, delta=1e-6, one round (FMT23 Fig. 1 analogue)"), len(eps0s) * 2


def _fmt23_fig2(out, bar):
    rows = []
    orders = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
    n, e0 = 10_000, 1.0
    for bound, mech in (("fmt20", LDP(e0)), ("fmt23", RandomizedResponse(e0, 2)),
                        ("girgis-ub1", LDP(e0)), ("girgis-lower", RandomizedResponse(e0, 2))):
        try:
            c = _rdp(Shuffle(mech, n), orders, bound=bound)
            for o, v in zip(c.orders, c.values):
                rows.append({"series": bound, "bound": bound, "kind": c.kind, "order": float(o),
                             "rdp": float(v), "valid_for": c.valid_for})
        except (NotApplicableError, ValueError) as exc:
            rows.append({"series": bound, "bound": bound, "kind": "", "order": None,
                         "rdp": None, "valid_for": "", "not_applicable": str(exc)})
        bar.update()
    return rows, dict(x="order", y="rdp", logx=True, logy=True,
                      title=f"RDP vs order, n={n}, eps0={e0}, one round (FMT23 Fig. 2 analogue)"), 4


def _fmt23_fig3(out, bar):
    rows = []
    Ts = [1, 3, 10, 30, 100, 300, 1000]
    n, e0, d = 10_000, 1.0, 1e-6
    for T in Ts:
        p23 = Shuffle(RandomizedResponse(e0, 2), n)
        rows.append(_eps_row(p23, d, T, "fmt23", "rdp", label="fmt23 via RDP", rounds=T))
        rows.append(_eps_row(p23, d, T, "fmt23", "kov15", label="fmt23 via approx DP + KOV15", rounds=T))
        rows.append(_eps_row(Shuffle(LDP(e0), n), d, T, "fmt20", "rdp", label="fmt20 via RDP", rounds=T))
        bar.update()
    return rows, dict(x="rounds", y="epsilon", logx=True, logy=True,
                      title=f"epsilon vs rounds, n={n}, eps0={e0}, delta={d} (FMT23 Fig. 3 analogue)"), len(Ts)


def _fmt23_fig5(out, bar):
    rows = []
    eps0s = [0.5, 1, 2, 3, 4, 6]
    n = 10_000
    for e0 in eps0s:
        rows.append(_eps_row(Shuffle(LDP(e0), n), 1e-6, 1, "fmt20", label="general (fmt20)", eps0=e0))
        for k in (2, 3, 10):
            p = Shuffle(RandomizedResponse(e0, k), n)
            rows.append(_eps_row(p, 1e-6, 1, "fmt23", label=f"{k}RR upper (fmt23 pair)", eps0=e0))
            rows.append(_eps_row(p, 1e-6, 1, "blanket", label=f"{k}RR upper (blanket)", eps0=e0))
            rows.append(_eps_row(p, 1e-6, 1, "krr-lower", label=f"{k}RR lower", eps0=e0))
        bar.update()
    return rows, dict(x="eps0", y="epsilon", logy=True,
                      title=f"k-RR, n={n}, delta=1e-6, one round (FMT23 Fig. 5 analogue, with the privacy blanket)"), len(eps0s)


def _blanket_krr(out, bar):
    """ε against k for k-RR: fmt20, fmt23, blanket and the k-RR lower bound."""
    rows = []
    ks = [2, 3, 5, 10, 30, 100, 300]
    n, e0 = 10_000, 1.0
    for k in ks:
        p = Shuffle(RandomizedResponse(e0, k), n)
        rows.append(_eps_row(Shuffle(LDP(e0), n), 1e-6, 1, "fmt20", label="fmt20 (any LDP)", k=k))
        rows.append(_eps_row(p, 1e-6, 1, "fmt23", label="fmt23 (class S)", k=k))
        rows.append(_eps_row(p, 1e-6, 1, "blanket", label="blanket (this k-RR)", k=k))
        rows.append(_eps_row(p, 1e-6, 1, "krr-lower", label="k-RR lower bound", k=k))
        bar.update()
    return rows, dict(x="k", y="epsilon", logx=True, logy=True,
                      title=f"k-RR, n={n}, eps0={e0}, delta=1e-6: epsilon against k"), len(ks)


def _blanket_encoders(out, bar):
    """ε against ε0 for OUE and RAPPOR (d = 1000), n = 1e5: blanket against fmt20."""
    from ..core.mechanisms import OUE, RAPPOR
    rows = []
    eps0s = [0.5, 1, 2, 3, 4]
    n, d = 100_000, 1000
    for e0 in eps0s:
        rows.append(_eps_row(Shuffle(LDP(e0), n), 1e-6, 1, "fmt20", label="fmt20 (any LDP)", eps0=e0))
        rows.append(_eps_row(Shuffle(OUE(e0, d), n), 1e-6, 1, "blanket", label=f"OUE d={d} (blanket)", eps0=e0))
        rows.append(_eps_row(Shuffle(RAPPOR(e0, d), n), 1e-6, 1, "blanket", label=f"RAPPOR d={d} (blanket)", eps0=e0))
        bar.update()
    return rows, dict(x="eps0", y="epsilon", logy=True,
                      title=f"unary encodings, n={n}, delta=1e-6: blanket against fmt20"), len(eps0s)


def _girgis_comp(out, bar):
    rows = []
    Ts = [1, 10, 100, 1000, 10_000, 100_000]
    n, e0, d = 100_000, 1.0, 1e-6
    p = Shuffle(LDP(e0), n)
    for T in Ts:
        a = _eps_row(p, d, T, "girgis-ub1", "rdp", label="UB1 via RDP", rounds=T)
        b = _eps_row(p, d, T, "fmt20", "kov15", label="FMT20 + KOV15", rounds=T)
        c = _eps_row(p, d, T, "fmt20", "rdp", label="FMT20 pair via RDP", rounds=T)
        ratio = (b["epsilon"] / a["epsilon"] if a["epsilon"] and b["epsilon"] is not None
                 else None)
        for r in (a, b, c):
            r["ratio_fmt20kov15_over_ub1"] = ratio
        rows.extend([a, b, c])
        bar.update()
    return rows, dict(x="rounds", y="epsilon", logx=True, logy=True,
                      title=f"composition, n={n}, eps0={e0}, delta={d} (Girgis et al. comparison)"), len(Ts)


def _liew_fig1a(out, bar):
    rows = []
    Ts = [1, 10, 100, 1000, 5540]
    n, sigma, d = 60_000, 9.48, 1.0 / 60_000
    p = Shuffle(Gaussian(sigma), n)
    for T in Ts:
        rows.append(_eps_row(p, d, T, "gaussian-unamplified", label="unamplified", rounds=T))
        rows.append(_eps_row(p, d, T, "trimmed-clone", label="trimmed-clone", rounds=T))
        rows.append(_eps_row(p, d, T, "liew-homogeneous", label="homogeneous pair, order search", rounds=T))
        try:
            from ..compose.conversions import eps_from_rdp
            o = np.arange(2, 31)
            cur = _rdp(p, o, bound="liew-homogeneous", rounds=T)
            capped = float(np.min(eps_from_rdp(o, cur.values, d)))
            rows.append({"series": "homogeneous pair, orders <= 30", "bound": "liew-homogeneous",
                         "kind": "estimate", "epsilon": capped, "composition": "rdp",
                         "valid_for": "homogeneous datasets only", "seconds": 0.0, "rounds": T})
        except (ImportError, AttributeError, NotApplicableError, ValueError):
            pass
        bar.update()
    return rows, dict(x="rounds", y="epsilon", logx=True, logy=True,
                      title=f"Gaussian sigma={sigma}, n={n}, delta=1/n (Liew-Takahashi Fig. 1(a) analogue)"), len(Ts)


FIGURES = {
    "fmt23-fig1": _fmt23_fig1,
    "fmt23-fig2": _fmt23_fig2,
    "fmt23-fig3": _fmt23_fig3,
    "fmt23-fig5": _fmt23_fig5,
    "blanket-krr": _blanket_krr,
    "blanket-encoders": _blanket_encoders,
    "girgis-composition": _girgis_comp,
    "liew-fig1a": _liew_fig1a,
}

_STEPS = {"fmt23-fig1": 20, "fmt23-fig2": 4, "fmt23-fig3": 7, "fmt23-fig5": 6,
          "blanket-krr": 7, "blanket-encoders": 5,
          "girgis-composition": 6, "liew-fig1a": 5}


def make(name: str, out: str = "figures", progress: bool | None = None) -> dict:
    """Compute figure ``name``; write ``out/name.csv`` and (with matplotlib) ``out/name.png``."""
    if name not in FIGURES:
        raise ValueError(f"figure must be one of {', '.join(FIGURES)}; got {name!r}")
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    with Progress(_STEPS[name], name, enabled=progress) as bar:
        rows, spec = FIGURES[name](out, bar)[:2]
    csv_path = os.path.join(out, f"{name}.csv")
    fields = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("series", spec["x"], spec["y"]), k))
    write_csv(rows, csv_path, fields)
    png = None
    facet = spec.get("facet")
    if facet:
        pngs = []
        for val in sorted({r[facet] for r in rows}):
            sub = [r for r in rows if r[facet] == val]
            path = os.path.join(out, f"{name}-{facet}{val}.png")
            pngs.append(plots.line_plot(sub, spec["x"], spec["y"], "series", path,
                                        logx=spec.get("logx", False), logy=spec.get("logy", False),
                                        title=f"{spec['title']}, {facet}={val}"))
        png = [p for p in pngs if p] or None
    else:
        png = plots.line_plot(rows, spec["x"], spec["y"], "series", os.path.join(out, f"{name}.png"),
                              logx=spec.get("logx", False), logy=spec.get("logy", False),
                              title=spec["title"])
    skipped = sorted({r["series"] for r in rows if r.get("not_applicable")})
    return {"name": name, "csv": csv_path, "png": png, "rows": len(rows),
            "seconds": round(time.perf_counter() - t0, 2), "skipped_series": skipped}


def add_cli(sub, protocol_args, num, int_like):
    import argparse
    p = sub.add_parser("figure", help="reproduce a reference paper's figure (CSV + PNG)",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="examples:\n  shuffledp figure fmt23-fig1 --out figures\n"
                              "  shuffledp figure all --out figures")
    p.add_argument("name", choices=list(FIGURES) + ["all"],
                   help="which figure, e.g. fmt23-fig1 (all: every figure)")
    p.add_argument("--out", default="figures", help="output directory, e.g. --out figures")

    def run(a):
        names = list(FIGURES) if a.name == "all" else [a.name]
        for nm in names:
            info = make(nm, a.out)
            print(f"{nm}: {info['rows']} rows in {info['seconds']} s -> {info['csv']}"
                  + (f", {info['png']}" if info["png"] else " (install the 'plots' extra for PNG)"))
            if info["skipped_series"]:
                print(f"  skipped (bound not applicable or not available): {', '.join(info['skipped_series'])}")
        return 0

    p.set_defaults(func=run)
