"""Files a federated run writes: ``fl_demo.csv``, ``accuracy_vs_epsilon.png``, ``summary.md``."""

from __future__ import annotations

import csv
import math
import pathlib

from ...accounting.fl import METHODS, fmt

__all__ = ["write_csv", "write_png", "write_summary", "CSV_NAME", "PNG_NAME", "SUMMARY_NAME"]

CSV_NAME, PNG_NAME, SUMMARY_NAME = "fl_demo.csv", "accuracy_vs_epsilon.png", "summary.md"


def _cell(x):
    return "" if x is None else repr(float(x))


def rows(history: dict, eps: dict) -> list:
    """One row per measured round: round, test accuracy, ε of every method, the upper bound's id.

    Round 0 (before training, nothing released) has ε = 0 for every method.
    """
    out = []
    for t, acc in zip(history["rounds"], history["accuracy"]):
        row = {"round": t, "test_accuracy": acc}
        e = eps.get(t)
        for m in METHODS:
            row[f"eps_{m.key}"] = 0.0 if t == 0 else (e[m.key][0] if e else None)
        row["upper_bound_id"] = "" if t == 0 or not e else e["upper"][1]
        out.append(row)
    return out


def write_csv(path, table: list) -> None:
    cols = ["round", "test_accuracy"] + [f"eps_{m.key}" for m in METHODS] + ["upper_bound_id"]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for r in table:
            w.writerow([r["round"], f"{r['test_accuracy']:.6f}"]
                       + [_cell(r[f"eps_{m.key}"]) for m in METHODS] + [r["upper_bound_id"]])


def write_png(path, table: list, delta: float, title: str) -> None:
    """Test accuracy against ε, one line per method (estimates dashed), log ε axis."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 6.6), dpi=120)
    last_upper = next((r["upper_bound_id"] for r in reversed(table) if r["upper_bound_id"]), "")
    colors = {"upper": "tab:red", "estimate": "tab:blue", "estimate_addremove": "tab:cyan",
              "central": "tab:green", "central_replace_one": "tab:olive"}
    for m in METHODS:
        pts = [(r[f"eps_{m.key}"], r["test_accuracy"]) for r in table
               if r["round"] > 0 and r[f"eps_{m.key}"] is not None and r[f"eps_{m.key}"] > 0
               and math.isfinite(r[f"eps_{m.key}"])]
        if not pts:
            continue
        x, y = zip(*pts)
        ax.plot(x, y, linestyle="--" if m.dashed else "-", marker="." if not m.dashed else None,
                color=colors.get(m.key), linewidth=1.8,
                label=f"{m.label} [{m.kind}" + (f": {last_upper}]" if m.key == "upper" and last_upper
                                                else "]"))
    ax.set_xscale("log")
    ax.set_xlabel(f"ε at δ = {delta:g} (log scale)")
    ax.set_ylabel("test accuracy")
    ax.set_ylim(0, 1)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7.5, loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_summary(path, *, setting: dict, table: list, final: dict, timing: dict,
                  command: str, notes: list) -> None:
    last = table[-1]
    lines = ["# Federated learning with shuffled check-in: run summary", ""]
    lines.append(f"Command: `{command}`")
    lines.append("")
    lines.append("## Setting")
    lines.append("")
    for k, v in setting.items():
        lines.append(f"- {k}: {v}")
    lines.append("")
    lines.append("## Result")
    lines.append("")
    best = max(r["test_accuracy"] for r in table)
    lines.append(f"- test accuracy after round {last['round']}: {last['test_accuracy']:.4f} "
                 f"(best measured: {best:.4f})")
    lines.append(f"- wall time {timing['wall']:.1f} s (training {timing['train_wall']:.1f} s, "
                 f"accounting {timing['account_wall']:.1f} s); CPU time {timing['cpu']:.1f} s")
    lines.append("")
    lines.append(f"## Privacy after {last['round']} rounds at δ = {setting['delta']}")
    lines.append("")
    lines.append("| method | ε | kind | bound | assumptions |")
    lines.append("|---|---|---|---|---|")
    for m in METHODS:
        e, bound, kind, note = final[m.key]
        lines.append(f"| {m.label} | {fmt(e)} | {kind} | {bound} | {m.assumptions}; {note} |")
    lines.append("")
    lines.append("Noise and neighbours: replace-one (a user's example is replaced, n fixed). A "
                 "clipped gradient has norm at most C, so two users' reports before noise can be "
                 "2C apart; with noise N(0, z²C²I) (noise multiplier z) this is the library's "
                 "`Gaussian.from_noise_multiplier(z)` = `Gaussian(z/2)` (σ = z/2 per unit ℓ2 "
                 "diameter). The add/remove reading (distance C, `Gaussian(z)`) is what the "
                 "shuffle-Gaussian paper reports and is shown only for comparison. Estimates are "
                 "neither guarantees nor lower bounds. The central baselines use the same noise "
                 "multiplier and assume a trusted server that adds the noise once to the sum; "
                 "they are given under add/remove (dp_accounting's and Opacus' default) and "
                 "replace-one neighbours.")
    lines.append("")
    lines += [f"- {n}" for n in notes]
    lines.append("")
    lines.append(f"Files: `{CSV_NAME}` (per measured round), `{PNG_NAME}` (accuracy against ε).")
    pathlib.Path(path).write_text("\n".join(lines) + "\n")


# -- the trade-off: accuracy against ε over several noise levels --------------------------
TRADEOFF_CSV, TRADEOFF_PNG = "tradeoff.csv", "tradeoff.png"

#: The three lines of the trade-off figure: (method key, label, line style, colour).
TRADEOFF_LINES = (
    ("upper", "upper: shuffle, valid bound (replace-one)", "-", "tab:red"),
    ("estimate", "estimate: shuffle, homogeneous pair (replace-one; not a guarantee)", ":",
     "tab:blue"),
    ("central_replace_one", "central: DP-SGD, trusted server (replace-one)", "--", "tab:green"),
)
# Where each line's "z = ..." labels sit (points of different lines can coincide).
_LABEL_OFFSET = {"upper": (6, -12), "estimate": (-14, 7), "central_replace_one": (6, 6)}


def _g(x) -> str:
    """1e-5, not 1e-05."""
    import re
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", f"{x:g}").replace("e+", "e")


def write_tradeoff_csv(path, runs: list) -> None:
    cols = (["noise_multiplier", "sigma_per_unit_diameter", "rounds", "test_accuracy",
             "learned"] + [f"eps_{m.key}" for m in METHODS] + ["upper_bound_id"])
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for r in runs:
            w.writerow([repr(float(r["z"])), repr(float(r["z"]) / 2), r["rounds"],
                        f"{r['accuracy']:.6f}", r["learned"]]
                       + [_cell(r["final"][m.key][0]) for m in METHODS]
                       + [r["final"]["upper"][1]])


def write_tradeoff_png(path, runs: list, delta: float, title: str) -> None:
    """Final test accuracy against ε, one line per accounting method (upper / estimate /
    central), one point per noise multiplier (labelled z = ...); runs that did not learn
    are drawn hollow."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..plots import axis_formatter

    fig, ax = plt.subplots(figsize=(9, 5.6), dpi=120)
    for key, label, style, colour in TRADEOFF_LINES:
        pts = [(r["final"][key][0], r["accuracy"], r) for r in runs
               if r["final"][key][0] is not None and math.isfinite(r["final"][key][0])
               and r["final"][key][0] > 0]
        if not pts:
            continue
        pts.sort(key=lambda p: p[0])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=colour, lw=1.8,
                label=label, zorder=3)
        for e, acc, r in pts:
            ax.plot([e], [acc], "o", color=colour, zorder=4, markersize=6,
                    markerfacecolor=colour if r["learned"] else "white")
            ax.annotate(f"z = {r['z']:g}", (e, acc), textcoords="offset points",
                        xytext=_LABEL_OFFSET[key], fontsize=7, color=colour)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(axis_formatter())
    from matplotlib import ticker
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel(f"ε at δ = {_g(delta)} after the last round (log scale)")
    ax.set_ylabel("test accuracy after the last round")
    ax.set_ylim(0, 1)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), frameon=False)
    if any(not r["learned"] for r in runs):
        fig.text(0.01, 0.01, "hollow points: the run did not learn (see summary.md)",
                 fontsize=7, color="#333333")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def tradeoff_lines(runs: list) -> list:
    """The trade-off table as Markdown lines (summary.md and the docs quote it)."""
    out = ["| noise multiplier z | test accuracy | ε upper (shuffle, replace-one) | "
           "ε estimate (replace-one) | ε central DP-SGD (replace-one) | "
           "ε central DP-SGD (add/remove) | upper bound |",
           "|---|---|---|---|---|---|---|"]
    for r in runs:
        f = r["final"]
        out.append(f"| {r['z']:g} | {r['accuracy']:.4f}{'' if r['learned'] else ' (did not learn)'}"
                   f" | {fmt(f['upper'][0])} | {fmt(f['estimate'][0])} | "
                   f"{fmt(f['central_replace_one'][0])} | {fmt(f['central'][0])} | "
                   f"{f['upper'][1]} |")
    return out


def write_tradeoff_summary(path, *, setting: dict, runs: list, timing: dict, command: str,
                           notes: list) -> None:
    lines = ["# Federated learning with shuffled check-in: accuracy against ε", ""]
    lines += [f"Command: `{command}`", "", "## Setting", ""]
    lines += [f"- {k}: {v}" for k, v in setting.items()]
    lines += ["", f"## Trade-off after {runs[0]['rounds']} rounds at δ = {setting['delta']}", ""]
    lines += tradeoff_lines(runs)
    lines += ["", f"- wall time {timing['wall']:.1f} s (training {timing['train_wall']:.1f} s, "
              f"accounting {timing['account_wall']:.1f} s); CPU time {timing['cpu']:.1f} s", ""]
    lines += [f"- {n}" for n in notes]
    lines += ["", f"Files: `{TRADEOFF_CSV}` (one row per noise multiplier), `{TRADEOFF_PNG}` "
              "(test accuracy against ε, one line per accounting method)."]
    pathlib.Path(path).write_text("\n".join(lines) + "\n")
