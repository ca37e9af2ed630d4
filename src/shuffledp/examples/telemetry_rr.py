"""Telemetry with k-ary randomized response: what does the shuffler buy, and what eps0 fits?

A deployment collects one of k = 4 categories from n = 50 000 devices per day with 4-RR at
local level eps0 = 2, through a shuffler, every day for a month.  Run:

    shuffledp example telemetry_rr > telemetry_rr.py && python telemetry_rr.py
"""

import shuffledp as sd

n, k, eps0, days, delta = 50_000, 4, 2.0, 30, 1e-7
proto = sd.Shuffle(sd.RandomizedResponse(eps0, k=k), n=n)

one = sd.epsilon(proto, delta=delta, lower=True)
print(one)                      # every applicable bound (lower=True: lower bounds too); fmt23 is valid for k-RR (docs/bounds.md)

month = sd.epsilon(proto, delta=delta, rounds=days)
print(f"\nafter {days} days: epsilon <= {month.epsilon:.4g} "
      f"({month.bound}, {month.composition}, valid for {month.valid_for})")

# The largest eps0 whose 30-day guarantee is (1, 1e-7); the value is on the safe side.
cal = sd.calibrate.eps0(n=n, epsilon=1.0, delta=delta, rounds=days, k=k)
print(f"largest eps0 for (1, {delta:g}) after {days} days: {cal.value:.4f}")
