"""Plots (extra ``plots``: matplotlib). Kinds have fixed styles everywhere:
upper bounds solid, lower bounds dashed, estimates dotted — a reader can tell a guarantee
from a comparison line without reading the legend."""

from __future__ import annotations

import math
from collections import defaultdict

__all__ = ["available", "line_plot", "KIND_STYLE"]

KIND_STYLE = {"upper": "-", "lower": "--", "estimate": ":"}


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def line_plot(rows, x, y, series, path, *, kind_key="kind", logx=False, logy=False,
              title="", xlabel=None, ylabel=None, note=None):
    """One line per distinct ``row[series]``; returns the path, or None without matplotlib."""
    if not available():
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = defaultdict(list)
    kinds = {}
    for r in rows:
        v = r.get(y)
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            continue
        groups[r[series]].append((r[x], v))
        kinds[r[series]] = r.get(kind_key, "upper")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, pts in groups.items():
        pts.sort()
        xs, ys = zip(*pts)
        k = kinds[name]
        ax.plot(xs, ys, KIND_STYLE.get(k, "-"), marker="o", markersize=3,
                label=f"{name} ({k})")
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    if note:
        fig.text(0.01, 0.01, note, fontsize=6, alpha=0.8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
