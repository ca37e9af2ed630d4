"""Shuffled Gaussian with check-in: the valid bound, the estimate, and the central baseline.

The shuffle-Gaussian paper's learning setting (Liew & Takahashi, arXiv:2206.09569):
n = 60 000 users, check-in rate 0.1, each user clips its gradient to norm C and adds
N(0, z²C²I) with noise multiplier z = 5 (the library's Gaussian(2.5): sigma per unit l2
diameter), T = 5540 rounds, delta = 1e-5. Replace-one neighbours.
Run:

    shuffledp example gaussian_checkin > gaussian_checkin.py && python gaussian_checkin.py
"""

import shuffledp as sd

proto = sd.Shuffle(sd.Gaussian.from_noise_multiplier(5.0), n=60_000, sampling=sd.CheckIn(0.1))
r = sd.epsilon(proto, delta=1e-5, rounds=5540, lower=True)   # lower=True: show the estimate too
print(r)   # 'upper' rows are guarantees; liew-homogeneous is an estimate (homogeneous pair only)
