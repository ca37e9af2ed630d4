"""Must-show for the ledger: the README's mixed budget at δ = 1e-6, timed, with breakdown.

Usage: python benchmarks/mustshow_ledger.py
(also: shuffledp example budget > budget.toml && shuffledp compose budget.toml — the same
budget from a TOML file)
"""

import time

import shuffledp as sd
from dp_accounting import dp_event as E

t0 = time.perf_counter()
acc = sd.Accountant()
acc.compose(sd.Shuffle(sd.RandomizedResponse(2.0, k=4), n=1_000_000), rounds=30)
acc.compose(sd.Shuffle(sd.LDP(1.0), n=10_000, sampling=sd.CheckIn(0.5)), rounds=52)
acc.compose(E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.1)), rounds=1000)
r = acc.epsilon(1e-6)
dt = time.perf_counter() - t0
print(r)
print(f"\nwall time (cold: pairs built, PLDs convolved): {dt:.2f} s")
