"""An Opacus accountant that reports the shuffle model's valid upper bound.

``ShuffleAccountant(n_users)`` implements ``opacus.accountants.IAccountant`` (optional
extra ``opacus``; torch and opacus are imported only when this module is used) for
*per-user-noise shuffled check-in training*: in every step each of the ``n_users`` users
checks in with probability ``sample_rate``, clips its update to norm C, adds Gaussian
noise of standard deviation ``noise_multiplier · C`` itself, and a shuffler hides who sent
which report. Neighbouring datasets differ in one user's data (replacement): two clipped
updates are at most 2C apart, so in the unit-diameter convention of ``sd.Gaussian`` a step
is ``Shuffle(Gaussian(noise_multiplier / 2), n_users, sampling=CheckIn(sample_rate))``.

``get_epsilon(delta)`` returns the tightest valid *upper* bound ``sd.epsilon`` gives for
the history (a ledger when σ or the rate changed); never an estimate. The last full answer
is kept in ``last_result``.

Usage::

    engine = opacus.PrivacyEngine()
    engine.accountant = ShuffleAccountant(n_users=len(dataset))   # before make_private
    model, optimizer, loader = engine.make_private(...)
    ... train ...
    engine.accountant.get_epsilon(delta=1e-5)
"""

from __future__ import annotations

from opacus.accountants import IAccountant

from . import _validate as v
from .ledger import Accountant
from .mechanisms import Gaussian
from .protocols import CheckIn, Shuffle

__all__ = ["ShuffleAccountant", "step_protocol"]


def step_protocol(noise_multiplier: float, sample_rate: float, n_users: int) -> Shuffle:
    """One step as a shuffled protocol: Gaussian(z/2) (replacement, clip C), check-in q."""
    z = v.real("noise_multiplier", noise_multiplier, lo=0.0, lo_open=True)
    q = v.real("sample_rate", sample_rate, lo=0.0, hi=1.0, lo_open=True)
    return Shuffle(Gaussian(z / 2.0), n=n_users, sampling=None if q == 1.0 else CheckIn(q))


class ShuffleAccountant(IAccountant):
    """Opacus accountant for shuffled check-in training with per-user noise (see module)."""

    def __init__(self, n_users: int):
        super().__init__()
        self.n_users = v.integer("n_users", n_users, lo=1)
        self.last_result = None

    @classmethod
    def mechanism(cls) -> str:
        return "shuffledp"

    def step(self, *, noise_multiplier: float, sample_rate: float):
        step_protocol(noise_multiplier, sample_rate, self.n_users)     # validates
        if self.history and self.history[-1][:2] == (noise_multiplier, sample_rate):
            z, q, k = self.history[-1]
            self.history[-1] = (z, q, k + 1)
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def __len__(self) -> int:
        return sum(k for _, _, k in self.history)

    def ledger(self) -> Accountant:
        acc = Accountant(answer_only=True)
        for z, q, k in self.history:
            acc.compose(step_protocol(z, q, self.n_users), k)
        return acc

    def get_epsilon(self, delta: float, **kwargs) -> float:
        if not self.history:
            return 0.0
        self.last_result = self.ledger().epsilon(delta)
        return float(self.last_result.epsilon)

    def state_dict(self, destination=None):
        d = super().state_dict(destination)
        d["n_users"] = self.n_users
        return d

    def load_state_dict(self, state_dict):
        n = state_dict.get("n_users") if state_dict else None
        if n is not None and int(n) != self.n_users:
            raise ValueError(f"state_dict n_users must equal this accountant's n_users={self.n_users}; got {n!r}")
        super().load_state_dict(state_dict)
        self.history = [tuple(h) for h in self.history]
