"""Sweep throughput: the same `shuffledp sweep` run sequentially and on 2 local workers.

Each configuration runs the CLI as a fresh process (imports, worker start-up and the CSV
included: what a user pays), one after the other in the same run, and is reported against
the sequential run timed here:

* wall time and its speed-up over sequential;
* CPU seconds of the whole process tree (the CLI, its worker processes and, for Ray, its
  daemons): the sum of each process's last sampled CPU time, or the kernel's count of
  reaped children when that is larger;
* points per CPU-second, and its ratio to sequential (below 1: the workers' overhead);
* peak resident memory summed over the process tree (sampled every 0.1 s);
* whether the rows equal the sequential rows (every column but ``seconds``).

    PYTHONPATH=src python3 benchmarks/bench_sweep.py [--full] [--only seq,loky,dask,ray]
        [--out FILE.json]

Default grid: eps0 ∈ {0.5, 1, 2, 4} × n ∈ {1e3, 1e4, 1e5, 1e6} × T ∈ {1, 10, 100}, δ = 1e-6
(48 points, upper bounds only). ``--full``: the 300-point sweep of the issue (10 eps0 × 5 n
× 6 T). No pass/fail thresholds: timings on a shared machine are informational.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

GRIDS = {
    "default": ["--eps0", "0.5,1,2,4", "--n", "1e3,1e4,1e5,1e6", "--rounds", "1,10,100",
                "--delta", "1e-6"],
    "full": ["--eps0", "0.5,1,1.5,2,2.5,3,3.5,4,4.5,5", "--n", "1e3,1e4,1e5,1e6,1e7",
             "--rounds", "1,10,100,1000,1e4,1e5", "--delta", "1e-6"],
}
CONFIGS = {
    "seq": ("sequential", []),
    "loky": ("joblib loky, 2 workers", ["--jobs", "2"]),
    "dask": ("dask LocalCluster, 2 workers", ["--backend", "dask", "--scheduler", "local:2"]),
    "ray": ("ray local, 2 CPUs", ["--backend", "ray", "--jobs", "2"]),
}


def _available(name):
    mod = {"loky": "joblib", "dask": "distributed", "ray": "ray"}.get(name)
    if mod is None:
        return True
    try:
        __import__(mod)
        return True
    except ImportError:
        return False


def run_one(argv, out):
    """Run the CLI; (wall s, CPU s of the process tree, peak tree RSS in MB, stdout)."""
    import psutil
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-c", "import sys; from shuffledp.apps.cli import main; "
           "sys.exit(main())", "sweep", *argv, "--out", out, "--overwrite", "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    root = psutil.Process(p.pid)
    cpu, peak = {}, 0
    while p.poll() is None:
        try:
            procs = [root] + root.children(recursive=True)
        except psutil.Error:
            procs = []
        rss = 0
        for q in procs:
            try:
                with q.oneshot():
                    t = q.cpu_times()
                    cpu[q.pid] = t.user + t.system
                    rss += q.memory_info().rss
            except psutil.Error:
                pass
        peak = max(peak, rss)
        time.sleep(0.1)
    out_s, err_s = p.communicate()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    reaped = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({p.returncode}):\n{err_s[-2000:]}")
    return wall, max(sum(cpu.values()), reaped), peak / 2**20, out_s


def rows(path):
    with open(path, newline="") as f:
        return [{k: v for k, v in r.items() if k != "seconds"} for r in csv.DictReader(f)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true", help="the issue's 300-point sweep")
    ap.add_argument("--only", default="seq,loky,dask,ray",
                    help="configurations to run, from seq,loky,dask,ray (seq always runs)")
    ap.add_argument("--out", default=None, help="write the results as JSON")
    a = ap.parse_args()
    grid = GRIDS["full" if a.full else "default"]
    names = ["seq"] + [x for x in a.only.split(",") if x in CONFIGS and x != "seq"]
    tmp = tempfile.mkdtemp(prefix="bench_sweep_")
    res = []
    base = None
    print(f"grid: {' '.join(grid)}  (upper bounds only)  cores: {os.cpu_count()}")
    for name in names:
        label, extra = CONFIGS[name]
        if not _available(name):
            print(f"{label}: skipped (not installed)")
            continue
        out = os.path.join(tmp, f"{name}.csv")
        wall, cpu, peak, so = run_one(grid + extra, out)
        points = json.loads(so.strip().splitlines()[-1])["points"]
        r = rows(out)
        if base is None:
            base = {"wall": wall, "pps": points / cpu, "rows": r}
        res.append({"config": name, "label": label, "points": points, "wall_s": wall,
                    "cpu_s": cpu, "points_per_cpu_s": points / cpu, "peak_mb": peak,
                    "speedup_wall": base["wall"] / wall,
                    "cpu_efficiency": (points / cpu) / base["pps"],
                    "rows_identical": r == base["rows"]})
        print(f"{label}: {wall:.1f} s wall, {cpu:.1f} CPU s, peak {peak:.0f} MB", flush=True)
    print()
    print("| backend | points | wall (s) | wall speed-up | CPU (s) | points / CPU-s | "
          "ratio to sequential | peak tree RSS (MB) | rows = sequential |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for x in res:
        print(f"| {x['label']} | {x['points']} | {x['wall_s']:.1f} | {x['speedup_wall']:.2f}× "
              f"| {x['cpu_s']:.1f} | {x['points_per_cpu_s']:.2f} | {x['cpu_efficiency']:.2f} "
              f"| {x['peak_mb']:.0f} | {'yes' if x['rows_identical'] else 'NO'} |")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"grid": grid, "results": res}, f, indent=1)


if __name__ == "__main__":
    main()
