"""Latency of the questions users ask, asked the way users ask them.

Every question runs in its own Python process with a timeout (a hang is recorded as
"> TIMEOUT s" instead of blocking the run):

* **cold** — a fresh process: ``import shuffledp`` + the question (what a script pays);
* **warm** — the question timed inside a process that has already imported the library
  and answered a different question (what a notebook / a sweep pays).

Families: default ``sd.epsilon`` (every candidate), ``sd.delta``, calibration, and the CLI
``shuffledp epsilon`` as a fresh process. Mechanisms: any ε0-LDP randomizer, k-RR with
k ∈ {2, 4, 100}, a ``Randomizer`` matrix, the Gaussian with and without check-in; n from
10³ to 10⁹ and 10¹²; T ∈ {1, 10, 1000, 10⁶}; δ ∈ {1e-5, 1e-8, 1e-12}. The grid is a
fixed rotation through (T, δ) so every value of each axis meets every mechanism.

``--random N --seed S`` adds N default ``sd.epsilon`` questions drawn from the same families
(a different n, ε0, σ, check-in rate, T and δ each time; family "random", warm only), and
the family "named" holds issue 30's n = 10¹² check-in question.

The reference: ``dp_accounting``'s RDP accountant on a Poisson-subsampled Gaussian question
(q = 0.01, σ = 1.1, 1000 compositions, δ = 1e-5) and, as a second line, on a central
Gaussian question (σ = 1, 1000 compositions, δ = 1e-5), each timed warm (median of 7) in a
subprocess of the same run.

    PYTHONPATH=src python3 benchmarks/bench_latency.py [--timeout 60] [--out FILE.json]
        [--only FAMILIES] [--quick] [--random N [--seed S]] [--compare OLD.json]

Prints p50 / p95 / max per family (cold and warm wall, warm CPU), every question's time,
and one line per issue-30 target (met / not met; warm p50 as a ratio to the reference).
With ``--out`` the raw rows are written as JSON (``--compare OLD.json`` prints
before/after and counts answers that got larger).
"""

from __future__ import annotations

import argparse
import compileall
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

MECHS = {
    "ldp": "sd.LDP(1.0)",
    "krr2": "sd.RandomizedResponse(1.0, 2)",
    "krr4": "sd.RandomizedResponse(1.0, 4)",
    "krr100": "sd.RandomizedResponse(3.0, 100)",
    "matrix": "sd.Randomizer([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]])",
    "gauss": "sd.Gaussian(2.0)",
    "gauss-checkin": "sd.Gaussian(2.0)",
}
NS = [10**3, 10**4, 10**5, 10**6, 10**7, 10**8, 10**9, 10**12]
TS = [1, 10, 1000, 10**6]
DELTAS = [1e-5, 1e-8, 1e-12]


def _proto(mech, n):
    samp = ", sampling=sd.CheckIn(0.1)" if mech == "gauss-checkin" else ""
    return f"sd.Shuffle({MECHS[mech]}, n={n}{samp})"


def grid(quick=False):
    """[(family, label, python-expression or CLI argv)] — fixed, deterministic."""
    qs = []
    i = 0
    for mech in MECHS:
        for n in NS:
            T, d = TS[i % 4], DELTAS[(i // 4 + i) % 3]
            i += 1
            qs.append(("epsilon", f"{mech} n={n:.0e} T={T} d={d:g}",
                       f"sd.epsilon({_proto(mech, n)}, delta={d}, rounds={T})"))
    # Named slow cases reported in the issue.
    qs += [
        ("epsilon", "ldp n=1e9 T=10 d=1e-6",
         "sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=10**9), delta=1e-6, rounds=10)"),
        ("epsilon", "krr10 n=1e9 T=10 d=1e-6",
         "sd.epsilon(sd.Shuffle(sd.RandomizedResponse(1.0, 10), n=10**9), delta=1e-6, rounds=10)"),
        ("epsilon", "gauss(1) n=1e9 T=100 d=1e-6",
         "sd.epsilon(sd.Shuffle(sd.Gaussian(1.0), n=10**9), delta=1e-6, rounds=100)"),
        ("epsilon", "ldp n=1e12 T=1 d=1e-6",
         "sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=10**12), delta=1e-6)"),
        ("epsilon", "krr3 n=1e3 T=1e7 d=1e-6",
         "sd.epsilon(sd.Shuffle(sd.RandomizedResponse(1.0, 3), n=1000), delta=1e-6, rounds=10**7)"),
        ("epsilon", "krr4 n=1e6 T=30 d=1e-8",
         "sd.epsilon(sd.Shuffle(sd.RandomizedResponse(1.0, 4), n=10**6), delta=1e-8, rounds=30)"),
        ("epsilon", "ldp n=1e5 T=10 d=1e-6 (quick start)",
         "sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=100_000), delta=1e-6, rounds=10)"),
    ]
    j = 0
    for mech in ("ldp", "krr4", "gauss"):
        for n in (10**4, 10**6, 10**9):
            T, eps = TS[j % 4], (0.5, 1.0, 4.0)[j % 3]
            j += 1
            qs.append(("delta", f"{mech} n={n:.0e} T={T} eps={eps}",
                       f"sd.delta({_proto(mech, n)}, epsilon={eps}, rounds={T})"))
    qs += [
        ("calibrate", "eps0 n=1e5 T=10 (quick start)",
         "sd.calibrate.eps0(n=100_000, epsilon=1.0, delta=1e-6, rounds=10)"),
        ("calibrate", "eps0 n=1e6 T=52 d=1e-8",
         "sd.calibrate.eps0(n=10**6, epsilon=1.0, delta=1e-8, rounds=52)"),
        ("calibrate", "eps0 k=4 n=1e6 T=30 d=1e-8",
         "sd.calibrate.eps0(n=10**6, epsilon=1.0, delta=1e-8, rounds=30, k=4)"),
        ("calibrate", "eps0 n=1e9 T=1 d=1e-8",
         "sd.calibrate.eps0(n=10**9, epsilon=0.1, delta=1e-8)"),
        ("calibrate", "rounds ldp(0.01) n=1e6",
         "sd.calibrate.rounds(sd.Shuffle(sd.LDP(0.01), n=10**6), epsilon=1.0, delta=1e-6)"),
        ("calibrate", "rounds ldp(1) n=1e5",
         "sd.calibrate.rounds(sd.Shuffle(sd.LDP(1.0), n=10**5), epsilon=1.0, delta=1e-6)"),
        ("calibrate", "sigma n=1e4 T=10",
         "sd.calibrate.sigma(n=10**4, epsilon=1.0, delta=1e-6, rounds=10)"),
        ("calibrate", "users ldp(1) T=10",
         "sd.calibrate.users(sd.LDP(1.0), epsilon=1.0, delta=1e-6, rounds=10)"),
    ]
    cli = [
        ("--eps0 1 --n 100000 --delta 1e-6 --rounds 10", "ldp n=1e5 T=10"),
        ("--eps0 1 --n 1e9 --delta 1e-6 --rounds 30", "ldp n=1e9 T=30"),
        ("--eps0 1 --n 1e12 --delta 1e-8", "ldp n=1e12 T=1"),
        ("--eps0 1 --mechanism rr:4 --n 1000000 --delta 1e-8 --rounds 30", "krr4 n=1e6 T=30"),
        ("--eps0 2 --n 10000 --delta 1e-5 --rounds 1000", "ldp(2) n=1e4 T=1000"),
        ("--mechanism gaussian:2 --n 100000 --delta 1e-8 --rounds 100", "gauss n=1e5 T=100"),
        ("--eps0 0.5 --n 1000 --delta 1e-12 --rounds 1000000", "ldp(0.5) n=1e3 T=1e6"),
        ("--eps0 1 --n 100000 --delta 1e-6 --json", "ldp n=1e5 --json"),
    ]
    qs += [("cli", lab, ["epsilon"] + args.split()) for args, lab in cli]
    if quick:
        qs = qs[::3]
    return qs


def random_questions(count, seed):
    """``count`` default ``sd.epsilon`` questions drawn from the grid's families, each with
    its own n, ε0 / σ, check-in rate, T and δ (so no answer repeats a cached one).

    n log-uniform in [1e3, 1e9] (1e12 with probability 0.1), ε0 uniform in [0.1, 8],
    σ log-uniform in [0.5, 8], rate log-uniform in [1e-3, 0.5], T log-uniform in [1, 1e6],
    δ log-uniform in [1e-12, 1e-5]; the 3×3 matrix's rows are drawn uniform in
    [0.05, 1] and normalised. A fixed seed gives the same questions on every tree.
    """
    import random
    rng = random.Random(seed)

    def logu(lo, hi):
        return math.exp(rng.uniform(math.log(lo), math.log(hi)))

    qs = []
    fams = list(MECHS)
    for i in range(count):
        fam = fams[rng.randrange(len(fams))]
        n = 10**12 if rng.random() < 0.1 else round(logu(1e3, 1e9))
        eps0 = round(rng.uniform(0.1, 8.0), 4)
        sigma = round(logu(0.5, 8.0), 4)
        rate = float(f"{logu(1e-3, 0.5):.3g}")
        T = round(logu(1, 1e6))
        d = float(f"{logu(1e-12, 1e-5):.3g}")
        if fam == "ldp":
            mech, lab = f"sd.LDP({eps0})", f"ldp({eps0})"
        elif fam.startswith("krr"):
            k = int(fam[3:])
            mech, lab = f"sd.RandomizedResponse({eps0}, {k})", f"krr{k}({eps0})"
        elif fam == "matrix":
            rows = [[rng.uniform(0.05, 1.0) for _ in range(3)] for _ in range(3)]
            rows = [[round(x / sum(r), 4) for x in r] for r in rows]
            rows = [r[:2] + [round(1.0 - r[0] - r[1], 4)] for r in rows]
            mech, lab = f"sd.Randomizer({rows})", "matrix"
        else:
            mech, lab = f"sd.Gaussian({sigma})", f"gauss({sigma})"
        samp = f", sampling=sd.CheckIn({rate})" if fam == "gauss-checkin" else ""
        if samp:
            lab += f" ci={rate}"
        qs.append(("random", f"#{i} {lab} n={n:.2g} T={T} d={d:.3g}",
                   f"sd.epsilon(sd.Shuffle({mech}, n={n}{samp}), delta={d}, rounds={T})"))
    return qs


# The n = 1e12 check-in question of issue 30 (over 100 s when it was filed).
NAMED = [("named", "ldp(1) n=1e12 checkin(0.01) T=10 d=1e-6",
          ("sd.epsilon(sd.Shuffle(sd.LDP(1.0), 10**12, sampling=sd.CheckIn(0.01)), 1e-6, "
           "rounds=10)"))]


WARMUP = "sd.epsilon(sd.Shuffle(sd.LDP(0.7), n=12345), delta=1e-7, rounds=3)"

WORKER = r"""
import json, sys, time
t0 = time.perf_counter()
import shuffledp as sd
t1 = time.perf_counter()
mode, expr = sys.argv[1], sys.argv[2]
if mode == "warm":
    eval({warmup!r})
t2 = time.perf_counter()
c2 = time.process_time()
r = eval(expr)
t3 = time.perf_counter()
c3 = time.process_time()
val = getattr(r, "epsilon", None) if hasattr(r, "bound") and not hasattr(r, "parameter") else None
if hasattr(r, "parameter"):
    val = r.value
elif hasattr(r, "question"):
    val = r.epsilon if r.question == "epsilon" else r.delta
print(json.dumps({{"import": t1 - t0, "question": t3 - t2, "cpu": c3 - c2, "value": val,
                  "bound": getattr(r, "bound", None)}}))
""".format(warmup=WARMUP)

DPACC = r"""
import json, time
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp
def central():
    acc = rdp.RdpAccountant()
    acc.compose(dp_event.GaussianDpEvent(1.0), 1000)
    return acc.get_epsilon(1e-5)
def poisson():
    acc = rdp.RdpAccountant()
    acc.compose(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1)), 1000)
    return acc.get_epsilon(1e-5)
out = {}
for name, ask in (("poisson", poisson), ("central", central)):
    ask()
    ts, cs = [], []
    for _ in range(7):
        t0 = time.perf_counter(); c0 = time.process_time(); v = ask()
        ts.append(time.perf_counter() - t0); cs.append(time.process_time() - c0)
    ts.sort(); cs.sort()
    out[name] = {"question": ts[len(ts) // 2], "cpu": cs[len(cs) // 2], "value": v}
print(json.dumps(out))
"""


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_python(expr, mode, timeout):
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", WORKER, mode, expr], capture_output=True,
                           text=True, timeout=timeout, env=_env())
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"}
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["wall"] = wall
    return out


def run_cli(argv, timeout):
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-m", "shuffledp.apps.cli", *argv], capture_output=True,
                           text=True, timeout=timeout, env=_env())
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"}
    return {"wall": wall, "value": p.stdout.strip().splitlines()[0][:60] if p.stdout.strip() else ""}


def measure(qs, timeout, log=print):
    rows = []
    for fam, label, q in qs:
        row = {"family": fam, "label": label}
        if fam == "cli":
            r = run_cli(q, timeout)
            row["cold"] = None if "wall" not in r else r["wall"]
            row["warm"] = None
            row.update({k: r[k] for k in ("timeout", "error", "value") if k in r})
        elif fam in ("random", "named"):
            # Warm only (the targets are warm); one process per question, so nothing
            # computed for one question is reused by another.
            w = run_python(q, "warm", timeout)
            row["cold"] = None
            if "timeout" in w or "error" in w:
                row["warm"] = None
                row.update({k: w[k] for k in ("timeout", "error") if k in w})
            else:
                row.update({"warm": w["question"], "warm_cpu": w["cpu"], "value": w["value"],
                            "bound": w["bound"]})
        else:
            c = run_python(q, "cold", timeout)
            if "timeout" in c or "error" in c:
                row.update({"cold": None, "warm": None})
                row.update({k: c[k] for k in ("timeout", "error") if k in c})
            else:
                w = run_python(q, "warm", timeout)
                row.update({"cold": c["import"] + c["question"], "import": c["import"],
                            "warm": w.get("question"), "warm_cpu": w.get("cpu"),
                            "value": c["value"],
                            "bound": c["bound"]})
                if "timeout" in w:
                    row["warm_timeout"] = True
        rows.append(row)
        log(_fmt_row(row, timeout))
    return rows


def _fmt_t(t, timeout):
    return f"> {timeout:g} s" if t is None else f"{t:.3f} s"


def _fmt_row(row, timeout):
    if row.get("error"):
        return f"  {row['family']:9s} {row['label']:38s} ERROR {row['error'][:80]}"
    cold = "" if row["family"] in ("random", "named") else _fmt_t(row["cold"], timeout)
    warm = "" if row["family"] == "cli" else _fmt_t(row["warm"], timeout)
    if row.get("warm_cpu") is not None:
        warm += f" ({row['warm_cpu']:.3f} cpu)"
    v = row.get("value")
    vs = f"{v:.6g}" if isinstance(v, float) else str(v)
    return f"  {row['family']:9s} {row['label']:38s} cold {cold:>10s}  warm {warm:>10s}  {vs} {row.get('bound') or ''}"


def _pct(xs, q):
    """Nearest-rank percentile; a timed-out question counts as +inf."""
    xs = sorted(xs)
    k = max(0, math.ceil(q * len(xs)) - 1)
    return xs[k]


def summary(rows, timeout):
    out = []
    for fam in ("epsilon", "random", "named", "delta", "calibrate", "cli"):
        fr = [r for r in rows if r["family"] == fam and not r.get("error")]
        if not fr:
            continue
        for which in ("cold", "warm", "warm_cpu"):
            if fam == "cli" and which != "cold":
                continue
            if fam in ("random", "named") and which == "cold":
                continue
            if which == "warm_cpu" and not any(r.get("warm_cpu") is not None for r in fr):
                continue
            xs = [math.inf if r.get(which) is None else r[which] for r in fr]
            f = (lambda t: f"> {timeout:g}" if math.isinf(t) else f"{t:.3f}")
            out.append((fam, which, len(xs), f(_pct(xs, 0.5)), f(_pct(xs, 0.95)), f(max(xs))))
    return out


def _print_summary(rows, timeout, ref, old=None):
    """p50 / p95 / max per family: cold and warm wall time, and warm CPU time (the process's
    own seconds: what an idle machine would show when the machine is shared); then issue
    30's targets, met or not, against the dp_accounting reference timed in the same run."""
    print("\nfamily     kind      count       p50       p95       max   (seconds)")
    for fam, which, cnt, p50, p95, mx in summary(rows, timeout):
        print(f"{fam:10s} {which:9s} {cnt:5d} {p50:>9s} {p95:>9s} {mx:>9s}")
    if isinstance(ref, (int, float)):     # a JSON saved before session 13
        ref = {"central": {"question": ref}}
    ref = ref or {}
    refs = {which: {name: (ref.get(name) or {}).get("question" if which == "warm" else "cpu")
                    for name in ("poisson", "central")} for which in ("warm", "warm_cpu")}

    def times(fams, which="warm"):
        return [math.inf if r.get(which) is None else r[which]
                for r in rows if r["family"] in fams and not r.get("error")]

    print("\ntargets (issue 30)")
    for name, fams in (("grid", ("epsilon",)), ("random", ("random",)),
                       ("grid+random", ("epsilon", "random"))):
        if len(fams) > 1 and not all(times((f,)) for f in fams):
            continue                          # the union only when both were measured
        for which in ("warm", "warm_cpu"):
            ws = times(fams, which)
            if not ws:
                continue
            p50, p95, mx = _pct(ws, 0.5), _pct(ws, 0.95), max(ws)
            tag = "wall" if which == "warm" else "cpu "
            # wall against the reference's wall, CPU against its CPU (same run)
            for label, key in (("RDP Poisson-sampled Gaussian", "poisson"),
                               ("RDP central Gaussian", "central")):
                base = refs[which][key]
                if base:
                    r = p50 / base
                    met = " (target <= 1: " + ("met" if r <= 1 else "not met") + ")" \
                        if key == "poisson" else ""
                    print(f"  {name:11s} {tag} p50 {p50:.3f} s / dp_accounting {label} "
                          f"{base * 1e3:.1f} ms = {r:.1f}x{met}")
            print(f"  {name:11s} {tag} p95 {p95:.3f} s (target <= 0.25 s: "
                  f"{'met' if p95 <= 0.25 else 'not met'}); max {mx:.3f} s (target <= 2 s: "
                  f"{'met' if mx <= 2 else 'not met'})")
    cl = times(("cli",), "cold")
    if cl:
        p95 = _pct(cl, 0.95)
        print(f"  CLI fresh process p95 {p95:.3f} s (target <= 1 s: "
              f"{'met' if p95 <= 1 else 'not met'})")
    for r in rows:
        if r["family"] == "named":
            t = math.inf if r.get("warm") is None else r["warm"]
            print(f"  {r['label']}: {t:.3f} s warm (target <= 2 s: "
                  f"{'met' if t <= 2 else 'not met'})")
    if old is not None:
        om = {(r["family"], r["label"]): r.get("value") for r in old["rows"]}
        larger, same, smaller, cmp = [], 0, 0, 0
        for r in rows:
            o, v = om.get((r["family"], r["label"])), r.get("value")
            if not isinstance(o, float) or not isinstance(v, float):
                continue
            cmp += 1
            if v > o:
                larger.append(f"{r['label']}: {o!r} -> {v!r}")
            elif v == o:
                same += 1
            else:
                smaller += 1
        print(f"  answers vs --compare: {cmp} compared, {same} identical, {smaller} smaller, "
              f"{len(larger)} larger (target: none larger)")
        for x in larger:
            print("    LARGER " + x)


def dp_accounting_time(timeout):
    try:
        p = subprocess.run([sys.executable, "-c", DPACC], capture_output=True, text=True,
                           timeout=timeout, env=_env())
        return json.loads(p.stdout.strip().splitlines()[-1])
    except Exception:   # noqa: BLE001 — the reference is optional
        return None


def import_time(reps=5):
    ts = []
    for _ in range(reps):
        p = subprocess.run([sys.executable, "-c",
                            "import time; t=time.perf_counter(); import shuffledp; "
                            "print(time.perf_counter()-t)"],
                           capture_output=True, text=True, env=_env())
        ts.append(float(p.stdout.strip()))
    ts.sort()
    return ts[len(ts) // 2]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None,
                    help="families, comma-separated: epsilon, random, named, delta, "
                         "calibrate, cli")
    ap.add_argument("--random", type=int, default=0, metavar="N",
                    help="add N random default sd.epsilon questions (family 'random')")
    ap.add_argument("--seed", type=int, default=30, help="seed of --random (default 30)")
    ap.add_argument("--quick", action="store_true", help="every 3rd question only")
    ap.add_argument("--compare", default=None, help="a JSON file from an earlier run")
    ap.add_argument("--src", default=None, help="the source tree to time (default: ../src)")
    ap.add_argument("--summarize", default=None, help="print the summary of a saved JSON run")
    a = ap.parse_args(argv)
    if a.summarize:
        with open(a.summarize) as fh:
            saved = json.load(fh)
        old = None
        if a.compare:
            with open(a.compare) as fh:
                old = json.load(fh)
        _print_summary(saved["rows"], saved["timeout"], saved.get("dp_accounting"), old)
        return 0
    global SRC
    if a.src:
        SRC = os.path.abspath(a.src)
    only = None if a.only is None else set(a.only.split(","))
    # Time the tree as an installed package runs: with its modules compiled (pip writes
    # the .pyc files). Under PYTHONDONTWRITEBYTECODE=1 a source tree would otherwise be
    # recompiled at every fresh start (~0.1-0.15 s per CLI question).
    compileall.compile_dir(SRC, quiet=1)
    qs = grid(a.quick) + NAMED + random_questions(a.random, a.seed)
    qs = [q for q in qs if only is None or q[0] in only]
    print(f"load average at start: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f}")
    imp = import_time()
    print(f"import shuffledp (median of 5 fresh processes): {imp:.3f} s")
    ref = dp_accounting_time(a.timeout)
    for name, what in (("poisson", ("Poisson-sampled Gaussian (q=0.01, sigma=1.1, "
                                    "1000 rounds, delta=1e-5)")),
                       ("central", "central Gaussian (sigma=1, 1000 rounds, delta=1e-5)")):
        r = (ref or {}).get(name)
        print(f"dp_accounting RDP accountant, {what}, warm median of 7: "
              + ("n/a" if r is None else f"{r['question'] * 1e3:.1f} ms "
                 f"({r['cpu'] * 1e3:.1f} ms cpu), epsilon {r['value']:.6g}"))
    t0 = time.time()
    rows = measure(qs, a.timeout)
    old = None
    if a.compare:
        with open(a.compare) as fh:
            old = json.load(fh)
    _print_summary(rows, a.timeout, ref, old)
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"run {time.time() - t0:.0f} s")
    if a.out:
        with open(a.out, "w") as fh:
            json.dump({"import": imp, "dp_accounting": ref, "timeout": a.timeout,
                       "random": a.random, "seed": a.seed, "load_end": load,
                       "rows": rows}, fh, indent=1)
    if a.compare:
        om = {(r["family"], r["label"]): r for r in old["rows"]}
        print("\nbefore -> after (value, cold time; warm for random/named)")
        for r in rows:
            o = om.get((r["family"], r["label"]))
            if o is None:
                continue
            k = "warm" if r["family"] in ("random", "named") else "cold"
            print(f"  {r['family']:9s} {r['label']:38s} {o.get('value')!s:>24.24} -> "
                  f"{r.get('value')!s:<24.24} {_fmt_t(o[k], old['timeout'])} -> "
                  f"{_fmt_t(r[k], a.timeout)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
