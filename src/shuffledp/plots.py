"""Plots (extra ``plots``: matplotlib), styled the same way in every figure.

* One colour per bound id, the same in every figure (``bound_colour``).
* Line style by kind: upper bounds solid, lower bounds dashed, estimates dotted — a reader
  can tell a guarantee from a comparison line without reading the legend.
* The accountant's answer (rows with ``chosen`` true, or ``kind == "answer"``) is drawn
  thick and black-edged on top of the others.
* Series with identical points are drawn once, their names joined in the legend.
* The legend sits outside the axes, so it never covers a curve; titles carry n and δ.
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict

__all__ = ["available", "line_plot", "KIND_STYLE", "bound_colour"]

KIND_STYLE = {"upper": "-", "lower": "--", "estimate": ":", "answer": "-"}

# Fixed colours for the bounds known today (tab10/tab20 entries); others get a stable
# colour from their id, so a bound keeps its colour across figures and runs.
_COLOURS = {
    "fmt20": "#1f77b4", "fmt23": "#d62728", "clone-specific": "#9467bd",
    "girgis-ub1": "#2ca02c", "girgis-ub2": "#98df8a", "girgis-simplified": "#bcbd22",
    "girgis-lower": "#8c564b", "krr-lower": "#e377c2", "trivial": "#7f7f7f",
    "fmt20-closed": "#aec7e8", "fmt23-closed": "#ff9896", "trimmed-clone": "#ff7f0e",
    "gaussian-unamplified": "#17becf", "liew-homogeneous": "#c5b0d5",
}
_SPARE = ["#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d",
          "#31a354", "#756bb1", "#636363"]
_MARKERS = ["o", "s", "^", "v", "D", "P", "X", "*"]


def bound_colour(bound: str) -> str:
    """The colour of ``bound`` in every figure."""
    if bound in _COLOURS:
        return _COLOURS[bound]
    return _SPARE[zlib.crc32(bound.encode()) % len(_SPARE)]


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def _key(pts):
    return tuple((float(x), float(f"{y:.10g}")) for x, y in pts)


def line_plot(rows, x, y, series, path, *, kind_key="kind", logx=False, logy=False,
              title="", xlabel=None, ylabel=None, note=None):
    """One line per distinct ``row[series]``; returns the path, or None without matplotlib.

    A row's bound (``row["bound"]``, else its series name) picks the colour, its kind the
    line style; rows with ``chosen`` true or kind ``"answer"`` are the emphasised answer.
    """
    if not available():
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = defaultdict(list)
    info = {}
    for r in rows:
        v = r.get(y)
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            continue
        if r.get("not_applicable"):
            continue
        groups[r[series]].append((r[x], v))
        info.setdefault(r[series], (r.get(kind_key, "upper"), r.get("bound") or r[series],
                                    bool(r.get("emphasis"))))
    # Identical curves (e.g. two bounds that coincide) are drawn once with both names.
    merged: dict = {}
    for name, pts in groups.items():
        pts.sort()
        merged.setdefault((_key(pts), info[name][0]), []).append(name)
    fig, ax = plt.subplots(figsize=(9.5, 4.8))
    used_markers: dict = defaultdict(int)
    handles = []
    for (key, kind), names in merged.items():
        name = names[0]
        _, bound, emph = info[name]
        xs, ys = zip(*key)
        m = _MARKERS[used_markers[bound] % len(_MARKERS)]
        used_markers[bound] += 1
        label = " = ".join(names) + f" ({kind})"
        if kind == "answer" or emph:
            h, = ax.plot(xs, ys, "-", color="black", lw=3.2, alpha=0.35, zorder=5)
            h, = ax.plot(xs, ys, "-", color="black", lw=1.4, marker="o", markersize=4,
                         zorder=6, label="answer: best valid upper bound"
                         + ("" if names == ["answer"] else f" ({' = '.join(names)})"))
        else:
            h, = ax.plot(xs, ys, KIND_STYLE.get(kind, "-"), color=bound_colour(bound),
                         marker=m, markersize=3.5, lw=1.4, label=label)
        handles.append(h)
    from matplotlib import ticker
    if logx:
        ax.set_xscale("log")
        # Plain numbers at the decades only: "2x10^0"-style minor labels collide.
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        lo, hi = ax.get_xlim()
        if hi / lo < 100:       # less than two decades: label the data's own x values
            xs_all = sorted({float(x) for (key, _k) in merged for x, _ in key})
            if len(xs_all) <= 12:
                ax.set_xticks(xs_all)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    ax.set_title(title, fontsize=9, wrap=True)
    ax.grid(True, which="both", alpha=0.3)
    ax.tick_params(labelsize=8)
    if handles:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  title="solid: upper, dashed: lower, dotted: estimate", title_fontsize=6.5)
    if note:
        fig.text(0.01, 0.01, note, fontsize=6, alpha=0.8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
