"""Any eps0-LDP randomizer, many rounds: compare the composition routes.

Run:  shuffledp example any_ldp_composition > any_ldp_composition.py
      python any_ldp_composition.py
"""

import shuffledp as sd

proto = sd.Shuffle(sd.LDP(1.0), n=100_000)
for T in (1, 10, 100, 1000):
    r = sd.epsilon(proto, delta=1e-6, rounds=T)
    routes = {f"{c.bound}/{c.composition}": c.epsilon for c in r.candidates if c.kind == "upper"}
    best = ", ".join(f"{k}={v:.4g}" for k, v in sorted(routes.items(), key=lambda kv: kv[1])[:3])
    print(f"T={T:5d}  answer {r.epsilon:.4g} via {r.bound} ({r.composition});  best routes: {best}")
