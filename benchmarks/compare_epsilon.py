"""sd.epsilon / sd.delta on a grid of protocols: this tree against a baseline tree.

Usage: python benchmarks/compare_epsilon.py BASELINE_SRC_DIR
Prints one row per (protocol, rounds, question) with both values and "same"/"smaller"/
"LARGER"; exits 1 if any value is larger than the baseline's (relative 1e-12).
"""

import json
import subprocess
import sys

GRID = r'''
import json, shuffledp as sd
P = [sd.Shuffle(sd.LDP(1.0), n=1000), sd.Shuffle(sd.LDP(3.0), n=10_000),
     sd.Shuffle(sd.RandomizedResponse(1.0, k=2), n=500), sd.Shuffle(sd.RandomizedResponse(2.0, k=3), n=2000),
     sd.Shuffle(sd.Gaussian(3.0), n=1000), sd.Shuffle(sd.Gaussian(5.0), n=1000, sampling=sd.CheckIn(0.2)),
     sd.Shuffle(sd.LDP(1.0), n=1000, sampling=sd.CheckIn(0.5))]
out = []
for p in P:
    for T in (1, 5):
        e = sd.epsilon(p, 1e-6, rounds=T)
        out.append([p.describe(), T, "epsilon", e.epsilon, e.bound, e.composition])
        d = sd.delta(p, e.epsilon * 1.1, rounds=T)
        out.append([p.describe(), T, "delta", d.delta, d.bound, d.composition])
print(json.dumps(out))
'''


def run(src):
    r = subprocess.run([sys.executable, "-c", GRID], env={"PYTHONPATH": src},
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    base, ours = run(sys.argv[1]), run("src")
    bad = 0
    for b, o in zip(base, ours):
        x, y = b[3], o[3]
        tag = "same" if x == y else ("smaller" if y < x * (1 + 1e-12) else "LARGER")
        bad += tag == "LARGER"
        print(f"{tag:8s} {o[2]:8s} T={o[1]:<3d} base={x:.10g} ({b[4]}/{b[5]})  "
              f"ours={y:.10g} ({o[4]}/{o[5]})  {o[0]}")
    print(f"{len(ours)} values, {bad} larger")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
