r"""Shuffle Gaussian bounds.

* ``liew-homogeneous`` — Liew & Takahashi, "Shuffle Gaussian Mechanism for Differential
  Privacy", arXiv:2206.09569v1, Theorem 1 (all orders, exact for n < λ), Theorem 2
  (subsampling without replacement = WBK19 Thm 9, here with the per-order min) and the
  check-in value of the same pair computed exactly (gaussian_rdp.checkin_exact). Kind
  ``estimate``: the homogeneous pair is not a worst case in dimension ≥ 2
  (gaussian.md §3), so it is never the accountant's answer.
* ``gaussian-unamplified`` — the Gaussian mechanism itself (shuffling and sampling are
  post-processing): RDP λ/(2σ²), exact δ(ε) (Balle & Wang 2018, Theorem 8); T rounds are
  a Gaussian with σ/√T, composed exactly.

Reverse direction. D_λ(Q‖P) of the homogeneous pair has no closed form; it was smaller than
the forward value in every case checked by quadrature (n = 2, 3; tests/test_gaussian.py).
The estimate reports the forward direction only.
"""

from __future__ import annotations

import math

import numpy as np

from ..pairs import gaussian_rdp as K
from ..compose import conversions as _rdp
from ..numerics import round_up
from ..core.protocols import CheckIn, WithoutReplacement
from ..core.views import EpsilonAt
from ._common import gaussian_reason, participation
from .base import Bound, Outcome, register

__all__ = ["HOMOGENEOUS_VALID_FOR", "homogeneous_rdp_for", "table1_epsilon",
           "paper_checkin_rdp"]

HOMOGENEOUS_VALID_FOR = ("homogeneous neighbouring datasets (as analysed by Liew–Takahashi); "
                         "not a worst case in dimension ≥ 2")

#: Orders beyond which the all-orders kernel is not run (O(λ²) recurrence, or O(λ² log n)
#: powering when λ > n + 1). The search reports ``order_limit_hit`` when it stops here.
RECURRENCE_MAX_ORDER = 16384
POWERING_MAX_ORDER = 2048
CHECKIN_MAX_ORDER = 1024




def _base_max_order(n: int) -> int:
    return min(n + 1, RECURRENCE_MAX_ORDER) if n + 1 >= POWERING_MAX_ORDER else POWERING_MAX_ORDER


def homogeneous_rdp_for(proto, orders) -> np.ndarray:
    """The homogeneous-pair RDP of one round of ``proto`` (any sampling), forward direction."""
    lam = np.asarray(orders, dtype=np.int64)
    L = int(lam.max())
    sigma = proto.mechanism.sigma
    s = proto.sampling
    if s is None:
        return K.rdp_from_log_em1(K.kernel(proto.n, sigma).log_em1(L), lam)
    if isinstance(s, WithoutReplacement):
        m = s.size
        base = K.rdp_from_log_em1(K.kernel(m, sigma).log_em1(L), np.arange(L + 1).clip(2))
        return K.wbk_subsample(m / proto.n, base, lam)
    if isinstance(s, CheckIn):
        if s.rate == 1.0:
            return K.rdp_from_log_em1(K.kernel(proto.n, sigma).log_em1(L), lam)
        return K.checkin_exact(proto.n, s.rate, sigma, lam)
    raise ValueError(f"unknown sampling {s!r}")


def paper_checkin_rdp(n: int, gamma: float, sigma: float, orders, err: float | None = None) -> np.ndarray:
    """Liew–Takahashi Theorem 3 (Chernoff split), WBK19 floor removed by the per-order min.

    Fall-back term: the single-user value (the Gaussian itself, λ/(2σ²)); main term: WBK19
    Thm 9 at rate γ on the shuffle of ⌊(1−Δ)nγ⌋ + 1 users. An estimate, like its input.
    """
    lam = np.asarray(orders, dtype=np.int64)
    L = int(lam.max())

    def sub(m, o):
        base = K.rdp_from_log_em1(K.kernel(m, sigma).log_em1(L), np.arange(L + 1).clip(2))
        return K.wbk_subsample(gamma, base, o)

    return K.checkin_chernoff(n, gamma, sub, lam, err=err,
                              single_rdp=lambda o: K.gaussian_rdp(sigma, o))


def table1_epsilon(n: int, sigma: float, delta: float, max_order: int = 30) -> tuple[float, int]:
    """The paper's Table 1 recipe: integer orders 2…max_order (30 in the paper), CKS20
    conversion, homogeneous pair. Returns (ε, order). An estimate, capped on purpose."""
    o = np.arange(2, max_order + 1)
    eps = _rdp.eps_from_rdp(o, K.rdp_from_log_em1(K.kernel(n, sigma).log_em1(max_order), o), delta)
    i = int(np.argmin(eps))
    return float(eps[i]), int(o[i])


@register
class LiewHomogeneous(Bound):
    id = "liew-homogeneous"
    scope = "homogeneous"
    kind = "estimate"
    default = False
    title = "Liew–Takahashi shuffle Gaussian RDP of the homogeneous pair (estimate)"
    reference = ("Liew & Takahashi, arXiv:2206.09569v1, Theorems 1–3; subsampling: Wang, Balle, "
                 "Kasiviswanathan 2019 (arXiv:1808.00087), Theorem 9")

    def check(self, proto):
        return gaussian_reason(proto)

    def valid_for(self, proto):
        s = proto.sampling
        if isinstance(s, WithoutReplacement):
            return HOMOGENEOUS_VALID_FOR + "; subsampled by WBK19 Thm 9 — still an estimate"
        if isinstance(s, CheckIn):
            return HOMOGENEOUS_VALID_FOR + "; check-in computed exactly for this pair — still an estimate"
        return HOMOGENEOUS_VALID_FOR

    def rdp(self, proto, orders):
        return homogeneous_rdp_for(proto, orders)

    def max_order(self, proto):
        s = proto.sampling
        if isinstance(s, CheckIn) and s.rate < 1.0:
            # Slices with c < λ need the O(λ² log c) powering path: keep it cheap.
            return CHECKIN_MAX_ORDER if 0.5 * proto.n * s.rate >= CHECKIN_MAX_ORDER else 256
        m = s.size if isinstance(s, WithoutReplacement) else proto.n
        return _base_max_order(m)


@register
class GaussianUnamplified(Bound):
    id = "gaussian-unamplified"
    scope = "l2"
    kind = "upper"
    title = "The Gaussian mechanism without amplification (shuffling is post-processing)"
    reference = ("Exact analytic Gaussian: Balle & Wang, ICML 2018 (arXiv:1805.06530), Theorem 8; "
                 "RDP: Mironov 2017, Prop. 7")

    def check(self, proto):
        return gaussian_reason(proto)

    def valid_for(self, proto):
        if proto.sampling is not None:
            return ("any inputs of l2 diameter <= 1, any dimension (no shuffle amplification; "
                    "per round the take-part-or-not mixture, or the exact Gaussian over T)")
        return "any inputs of l2 diameter <= 1, any dimension (no amplification used)"

    def rdp(self, proto, orders):
        # Sampled: "take part w.p. γ or send nothing" mixture (bounds/sampled.py).
        from ..pairs.hidden import mixture_rdp
        lam = np.asarray(orders, dtype=float)
        return round_up(mixture_rdp(participation(proto), lam,
                                    K.gaussian_rdp(proto.mechanism.sigma, orders)))

    def delta_one(self, proto, eps):
        g = participation(proto)
        d = K.gaussian_delta(proto.mechanism.sigma, eps)
        return d if g >= 1.0 else float(round_up(g * d))

    def epsilon_one(self, proto, delta):
        g = participation(proto)
        if g >= 1.0:
            return K.gaussian_epsilon(proto.mechanism.sigma, delta)
        if delta / g >= K.gaussian_delta(proto.mechanism.sigma, 0.0):
            return 0.0
        return K.gaussian_epsilon(proto.mechanism.sigma, delta / g)

    def eps_hi(self, proto):
        return K.gaussian_eps_hi(proto.mechanism.sigma, 1e-300)

    def extra_routes(self, rounds):
        return ["exact"] if rounds > 1 else []

    def own_route(self, proto, ask, rounds, route):
        if route != "exact":
            return super().own_route(proto, ask, rounds, route)
        s = proto.mechanism.sigma / math.sqrt(rounds)
        note = {"note": f"T Gaussians = one Gaussian with sigma/sqrt(T) = {s:.6g}"}
        if isinstance(ask, EpsilonAt):
            return Outcome(K.gaussian_epsilon(s, ask.delta), "upper", "exact", note)
        return Outcome(K.gaussian_delta(s, ask.epsilon), "upper", "exact", note)
