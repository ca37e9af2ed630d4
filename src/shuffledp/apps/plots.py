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

__all__ = ["available", "line_plot", "tick_label", "KIND_STYLE", "bound_colour"]

KIND_STYLE = {"upper": "-", "lower": "--", "estimate": ":", "answer": "-"}

# Fixed colours for the bounds known today (tab10/tab20 entries); others get a stable
# colour from their id, so a bound keeps its colour across figures and runs.
_COLOURS = {
    "fmt20": "#1f77b4", "fmt23": "#d62728", "clone-specific": "#9467bd",
    "girgis-ub1": "#2ca02c", "girgis-ub2": "#98df8a", "girgis-simplified": "#bcbd22",
    "girgis-lower": "#8c564b", "krr-lower": "#e377c2", "trivial": "#7f7f7f",
    "fmt20-closed": "#aec7e8", "fmt23-closed": "#ff9896", "trimmed-clone": "#ff7f0e",
    "gaussian-unamplified": "#17becf", "liew-homogeneous": "#c5b0d5",
    # composition routes (the report's epsilon-against-T plots)
    "rdp": "#9467bd", "pld": "#1f77b4", "kov15": "#ff7f0e",
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


def _span_decades(values) -> float:
    vals = [float(v) for v in values if v is not None and float(v) > 0]
    if len(vals) < 2:
        return 0.0
    return math.log10(max(vals) / min(vals))


def tick_label(v: float, plain: bool = True) -> str:
    """One tick format: plain digits with thousands separators ("1,000", "1,000,000") and
    up to 4 significant digits below 1 ("0.25", "0.001") when ``plain``; otherwise powers
    of ten ("$10^{-5}$"). An axis uses one of the two for all its ticks (``_AxisFormatter``),
    so it never mixes "100000" with "1e+06"."""
    if v == 0:
        return "0"
    a = abs(v)
    if plain:
        if a < 1:
            return f"{v:.4g}"
        return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.4g}"
    k = math.log10(a)
    if abs(k - round(k)) < 1e-9:
        return ("-" if v < 0 else "") + f"$10^{{{int(round(k))}}}$"
    m = v / 10 ** math.floor(k)
    return f"${m:.2g}\\times10^{{{int(math.floor(k))}}}$"


def axis_formatter():
    """Plain labels when the axis' visible range lies within [0.001, 10^7), powers of ten
    for every tick otherwise (decided per axis, from its limits)."""
    from matplotlib import ticker

    class _AxisFormatter(ticker.Formatter):
        def __call__(self, v, pos=None):
            lo, hi = sorted(abs(x) for x in self.axis.get_view_interval())
            return tick_label(v, plain=(lo >= 1e-3 or lo == 0) and hi < 1e7)

    return _AxisFormatter()


def _near(a, b, rel=1e-2) -> bool:
    """Same x values and every y within ``rel``: one curve drawn over the other hides it."""
    if len(a) != len(b):
        return False
    return all(xa == xb and abs(ya - yb) <= rel * max(abs(ya), abs(yb))
               for (xa, ya), (xb, yb) in zip(a, b))


def _frame(groups, info):
    """The y-range set by the answer (or, without one, the pointwise smallest upper bound)
    and the lower bounds, with some headroom: other curves may leave it, never set it."""
    ans, low, uppers = [], [], defaultdict(list)
    for name, pts in groups.items():
        kind, _, emph = info[name]
        ys = [float(y) for _, y in pts if y is not None and float(y) > 0]
        if kind == "answer" or emph:
            ans += ys
        elif kind == "lower":
            low += ys
        elif kind == "upper":
            for x, y in pts:
                if y is not None and float(y) > 0:
                    uppers[x].append(float(y))
    if not ans:
        ans = [min(v) for v in uppers.values()]
    vals = ans + low
    if not vals:
        return None
    lo, hi = min(vals), max(ans or vals)
    return lo, hi


def line_plot(rows, x, y, series, path, *, kind_key="kind", logx=False, logy=False,
              title="", xlabel=None, ylabel=None, note=None, frame=False):
    """One line per distinct ``row[series]``; returns the path, or None without matplotlib.

    A row's bound (``row["bound"]``, else its series name) picks the colour, its kind the
    line style; rows with ``chosen`` true or kind ``"answer"`` are the emphasised answer.
    ``logx`` / ``logy``: True, False or ``"auto"`` (log when the values span at least a
    decade). ``frame``: the y-range is set by the answer and the lower bounds (``_frame``);
    a curve entirely outside it is not drawn and is named under the plot instead of in the
    legend. A curve equal to the answer at every point is named in the answer's legend
    entry (it would be hidden under it).
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
    if logx == "auto":
        logx = _span_decades(px for pts in groups.values() for px, _ in pts) >= 1.0
    ylim = _frame(groups, info) if frame else None
    if ylim is not None:
        lo, hi = ylim
        if logy == "auto":
            logy = math.log10(hi / lo) >= 1.0 if lo > 0 else False
        if logy:
            span = max(math.log10(hi / lo), 0.3)
            ylim = (lo / 10 ** (0.12 * span), hi * 10 ** (0.35 * span))
        else:
            ylim = ((max(0.0, lo - 0.1 * (hi - lo)), hi + 0.5 * (hi - lo)) if hi > lo
                    else (0.5 * lo, 1.5 * hi) if hi > 0 else (0.0, 1.0))
    elif logy == "auto":
        logy = _span_decades(py for pts in groups.values() for _, py in pts) >= 1.0
    # Identical curves (e.g. two bounds that coincide) are drawn once with both names; a
    # curve identical to the answer is named in the answer's entry.
    merged: dict = {}
    for name, pts in groups.items():
        pts.sort()
        kind, _, emph = info[name]
        merged.setdefault((_key(pts), "answer" if emph else kind), []).append(name)
    answer_keys = {k for (k, kind) in merged if kind == "answer"}
    same, near = [], []
    for (key, kind), names in list(merged.items()):
        if kind == "answer":
            continue
        if key in answer_keys:
            same += [f"{nm} ({kind})" for nm in names]
        elif any(_near(key, ak) for ak in answer_keys):
            near += [f"{nm} ({kind})" for nm in names]
        else:
            continue
        del merged[(key, kind)]
    off_scale = []
    fig, ax = plt.subplots(figsize=(9.5, 4.8))
    used_markers: dict = defaultdict(int)
    handles = []
    for (key, kind), names in merged.items():
        name = names[0]
        _, bound, emph = info[name]
        xs, ys = zip(*key)
        if ylim is not None and kind != "answer" and (
                min(ys) > ylim[1] or max(ys) < ylim[0]):
            off_scale.append(" = ".join(names) + f" ({kind}, "
                             + ("above" if min(ys) > ylim[1] else "below") + ")")
            continue
        m = _MARKERS[used_markers[bound] % len(_MARKERS)]
        used_markers[bound] += 1
        label = " = ".join(names) + f" ({kind})"
        if kind == "answer":
            shown = [nm for nm in names if nm != "answer"]
            h, = ax.plot(xs, ys, "-", color="black", lw=3.2, alpha=0.35, zorder=5)
            h, = ax.plot(xs, ys, "-", color="black", lw=1.4, marker="o", markersize=4,
                         zorder=6, label="answer: best valid upper bound"
                         + (f" ({' = '.join(shown)})" if shown else "")
                         + (f"\n  = {', '.join(same)} at every point" if same else "")
                         + (f"\n  within 1% of {', '.join(near)} at every point"
                            if near else ""))
        else:
            h, = ax.plot(xs, ys, KIND_STYLE.get(kind, "-"), color=bound_colour(bound),
                         marker=m, markersize=3.5, lw=1.4, label=label)
        handles.append(h)
    from matplotlib import ticker
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    if ylim is not None:
        ax.set_ylim(*ylim)
    for axis, is_log in ((ax.xaxis, logx), (ax.yaxis, logy)):
        axis.set_major_formatter(axis_formatter())
        if is_log:
            axis.set_minor_formatter(ticker.NullFormatter())
    if logx:
        lo_x, hi_x = ax.get_xlim()
        if hi_x / lo_x < 100:       # less than two decades: label the data's own x values
            xs_all = sorted({float(x) for (key, _k) in merged for x, _ in key})
            if len(xs_all) <= 12:
                ax.set_xticks(xs_all)
                ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    if logy:
        lo_y, hi_y = ax.get_ylim()
        if hi_y / lo_y < 30:        # under ~1.5 decades: label 1-2-5 steps too
            ax.yaxis.set_minor_locator(ticker.LogLocator(subs=(2.0, 5.0)))
            ax.yaxis.set_minor_formatter(axis_formatter())
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    ax.set_title(title, fontsize=9, wrap=True)
    ax.grid(True, which="both", alpha=0.3)
    ax.tick_params(which="both", labelsize=8)
    if handles:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                  title="solid: upper, dashed: lower, dotted: estimate", title_fontsize=6.5)
    notes = []
    if off_scale:
        notes.append("off the scale (the answer and the lower bounds set it): "
                     + "; ".join(off_scale))
    if note:
        notes.append(note)
    if notes:
        import textwrap
        text = "\n".join(textwrap.fill(t, 150) for t in notes)
        fig.text(0.01, 0.01, text, fontsize=7, color="#333333", va="bottom")
        fig.tight_layout(rect=(0, 0.04 + 0.03 * text.count("\n"), 1, 1))
    else:
        fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
