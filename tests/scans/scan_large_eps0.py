"""Scan for unsafe candidates at large ε0 with participation (not collected by pytest).

    python tests/scans/scan_large_eps0.py [--eps0 16:40] [--n 2,3,4]

For every ε0 in the range (step 1), n, sampling ∈ {none, CheckIn(0.5), CheckIn(0.9),
CheckIn(1.0), WithoutReplacement(1), WithoutReplacement(n − 1)} and mechanism ∈ {LDP, 2-RR,
3-RR}: ε(1e-6), ε(1e-3) and δ(ε0/2) of the default accountant with every candidate listed
(``lower=True``), each upper/lower candidate checked against the exact leak
(``oracle.SampledLeak``, strict: δ_exact(ε_upper) ≤ δ). Prints the unsafe candidates and
the totals; exit status 1 if any.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))

import shuffledp as sd  # noqa: E402
import oracle  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eps0", default="16:40")
    ap.add_argument("--n", default="2,3,4")
    a = ap.parse_args(argv)
    lo, hi = (int(x) for x in a.eps0.split(":"))
    ns = [int(x) for x in a.n.split(",")]
    unsafe, checked, answers_unsafe = 0, 0, 0
    t0 = time.time()
    for e0 in range(lo, hi + 1):
        e0 = float(e0)
        for n in ns:
            samplings = [None, sd.CheckIn(0.5), sd.CheckIn(0.9), sd.CheckIn(1.0),
                         sd.WithoutReplacement(1)]
            if n - 1 != 1:
                samplings.append(sd.WithoutReplacement(n - 1))
            for samp in samplings:
                kw = ({} if samp is None else {"rate": samp.rate}
                      if isinstance(samp, sd.CheckIn) else {"size": samp.size})
                for mname, mech, ks in (("ldp", sd.LDP(e0), (2, 3)),
                                        ("rr2", sd.RandomizedResponse(e0), (2,)),
                                        ("rr3", sd.RandomizedResponse(e0, 3), (3,))):
                    leaks = [oracle.SampledLeak(e0, k, n, **kw) for k in ks]
                    proto = sd.Shuffle(mech, n, sampling=samp)
                    for q, x in (("epsilon", 1e-6), ("epsilon", 1e-3), ("delta", e0 / 2)):
                        fn = sd.epsilon if q == "epsilon" else sd.delta
                        r = fn(proto, x, lower=True)
                        for c in r.candidates:
                            if c.kind not in ("upper", "lower"):
                                continue
                            checked += 1
                            lk = leaks if c.kind == "upper" else leaks[:1]
                            if q == "epsilon":
                                d = max(L.delta(c.epsilon) for L in lk)
                                bad = (d > x * (1 + 1e-12) if c.kind == "upper"
                                       else c.epsilon > 0 and d < x * (1 - 1e-12))
                            else:
                                d = max(L.delta(x) for L in lk)
                                bad = (c.delta < d * (1 - 1e-12) if c.kind == "upper"
                                       else c.delta > d * (1 + 1e-12) + 1e-300)
                            if bad:
                                unsafe += 1
                                chosen = c.bound == r.bound
                                answers_unsafe += chosen
                                print(f"UNSAFE {mname}({e0:g}) n={n} {samp} {q}({x:g}) "
                                      f"{c.bound}/{c.kind}: eps={c.epsilon!r} delta={c.delta!r} "
                                      f"exact δ={d!r}{' (the answer)' if chosen else ''}")
    print(f"checked {checked} candidates in {time.time() - t0:.0f} s: {unsafe} unsafe, "
          f"{answers_unsafe} of them the answer")
    return 1 if unsafe else 0


if __name__ == "__main__":
    sys.exit(main())
