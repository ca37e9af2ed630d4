"""Shuffled Gaussian with check-in: the valid bound, the estimate, and the central baseline.

The learning setting of Liew & Takahashi: n = 60 000 users, check-in rate 0.1,
sigma = 5, T = 5540 rounds, delta = 1e-5.  Run:

    shuffledp example gaussian_checkin > gaussian_checkin.py && python gaussian_checkin.py
"""

import shuffledp as sd

proto = sd.Shuffle(sd.Gaussian(5.0), n=60_000, sampling=sd.CheckIn(0.1))
r = sd.epsilon(proto, delta=1e-5, rounds=5540, lower=True)   # lower=True: show the estimate too
print(r)   # 'upper' rows are guarantees; liew-homogeneous is an estimate (homogeneous pair only)
