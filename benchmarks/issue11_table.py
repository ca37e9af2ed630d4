"""Issue 11 table: each call's returned value against the exact binary-RR value (mpmath).

Run: PYTHONPATH=src python benchmarks/issue11_table.py
Exact: binary RR on X0 = (0, …, 0), X1 = (1, 0, …, 0), output = number of reported 1s,
laws at 60 digits; ε(δ) by bisection in mpmath (100 steps), δ(ε) as the hockey-stick sum.
"""

import mpmath as mp

import shuffledp as sd

mp.mp.dps = 60


def laws(eps0, n):
    e = mp.e ** mp.mpf(eps0)
    a, b = e / (e + 1), 1 / (e + 1)
    p0 = [mp.binomial(n, k) * b ** k * a ** (n - k) for k in range(n + 1)]
    p1 = []
    for k in range(n + 1):
        t = mp.mpf(0)
        if k >= 1:
            t += a * mp.binomial(n - 1, k - 1) * b ** (k - 1) * a ** (n - k)
        if k <= n - 1:
            t += b * mp.binomial(n - 1, k) * b ** k * a ** (n - 1 - k)
        p1.append(t)
    return p0, p1


def delta(p0, p1, eps):
    E = mp.e ** mp.mpf(eps)
    return max(mp.fsum(max(x - E * y, 0) for x, y in zip(p0, p1)),
               mp.fsum(max(y - E * x, 0) for x, y in zip(p0, p1)))


def epsilon(p0, p1, d, hi):
    lo, hi = mp.mpf(0), mp.mpf(hi)
    for _ in range(200):
        mid = (lo + hi) / 2
        if delta(p0, p1, mid) <= d:
            hi = mid
        else:
            lo = mid
    return hi


CALLS = [
    ("sd.epsilon(sd.Shuffle(sd.LDP(30.0), n=1000), delta=1e-6)", "eps", 30.0, 1000, 1e-6),
    ("sd.epsilon(sd.Shuffle(sd.LDP(50.0), n=3), delta=1e-6)", "eps", 50.0, 3, 1e-6),
    ("sd.epsilon(sd.Shuffle(sd.LDP(100.0), n=2), delta=1e-6)", "eps", 100.0, 2, 1e-6),
    ("sd.delta(sd.Shuffle(sd.LDP(100.0), n=2), epsilon=50.0)", "delta", 100.0, 2, 50.0),
    ("sd.epsilon(sd.Shuffle(sd.RandomizedResponse(700.0), n=2), delta=1e-6, bound='fmt23')",
     "eps", 700.0, 2, 1e-6),
]

if __name__ == "__main__":
    print(f"{'call':<92} {'returned':>20} {'bound':>8} {'fmt20/fmt23 own':>20} "
          f"{'exact (mpmath)':>20}  ok")
    for call, q, e0, n, x in CALLS:
        r = eval(call)
        p0, p1 = laws(e0, n)
        if q == "eps":
            got, ex = r.epsilon, epsilon(p0, p1, mp.mpf(x), e0)
            ok = got >= float(ex) * (1 - 1e-9)
        else:
            got, ex = r.delta, delta(p0, p1, x)
            ok = got >= float(ex) * (1 - 1e-9)
        own = [c for c in r.candidates if c.bound in ("fmt20", "fmt23")][0]
        ov = own.epsilon if q == "eps" else own.delta
        ok = ok and ov >= float(ex) * (1 - 1e-9)
        print(f"{call:<92} {got:>20.15g} {r.bound:>8} {ov:>20.15g} {mp.nstr(ex, 15):>20}  {ok}")
