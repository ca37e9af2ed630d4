"""``pld``: privacy-loss distributions of dominating pairs compose by convolution.

Koskela, Jälkö, Honkela 2020 (arXiv:1906.03049); Doroshenko, Ghazi, Kamath, Kumar,
Manurangsi 2022 (arXiv:2207.04380) for the pessimistic "connect the dots" PLDs of
Google's ``dp_accounting`` (optional extra ``pld``, imported lazily).

One entry: ``composition.pld_epsilon`` / ``pld_delta`` (pessimistic, both directions,
composed by ``pld_fft`` with bounded errors, numpy only; the optimistic instance PLD for
lower bounds through dp_accounting). Several entries: every part's PLD is built on
one common grid (``discretization``, default ``MULTI_DISCRETIZATION``), self-composed
``count`` times and the parts convolved; losses are rounded up so δ(ε) is an upper bound
up to the floating-point allowance ``composition.PLD_ABS_SLACK`` that is added. The
discretisation only costs tightness: at most ``Σ count · discretization`` in ε.
"""

from __future__ import annotations

import math

import numpy as np

from . import composition as _comp
from ..numerics import bisect_certified, round_up
from ..core.views import EpsilonAt, Outcome
from ._registry import Composer, merge_parts, register

#: Grid of the PLD when several entries are convolved (their grids must agree).
MULTI_DISCRETIZATION = 2e-4


def part_pld(view, count: int, d: float):
    """The dp_accounting PLD of ``count`` rounds of one view on grid ``d`` (pessimistic)."""
    if view.pld.build is not None:
        return view.pld.build(d, count), None
    lp, lq, tail = _comp._check_pair(*view.pld.atoms())
    pld, _ = _comp._build(lp, lq, count, tail, d)
    return pld, (lp, lq)


def _mean_loss(atoms, pld, count):
    """Expected privacy loss (KL) of the part, used only to report its share."""
    if atoms is not None:
        lp, lq = atoms
        fin = np.isfinite(lp) & np.isfinite(lq)
        return count * float(np.sum(np.exp(lp[fin]) * (lp[fin] - lq[fin])))
    try:
        pmf = pld._pmf_remove.to_dense_pmf()
        probs = np.asarray(pmf._probs, dtype=float)
        losses = (np.arange(probs.size) + pmf._lower_loss) * pmf._discretization
        return float(np.sum(probs * losses))
    except Exception:   # dp_accounting internals differ: no share for this part
        return math.nan


def compose_parts(parts, d: float):
    tot, hi, shares = None, 0.0, []
    for v, c in parts:
        pld, atoms = part_pld(v, c, d)
        shares.append(_mean_loss(atoms, pld, c))
        if atoms is not None:
            hi += c * _comp._max_loss(*atoms) + c * d
        tot = pld if tot is None else tot.compose(pld, tail_mass_truncation=_comp._TAIL_TRUNCATION)
    return tot, hi, shares


def _share_details(d, shares, count):
    s = [x if math.isfinite(x) else 0.0 for x in shares]
    t = sum(s) or 1.0
    return {"discretization": d, "eps_bias_bound": count * d, "fft_slack": _comp.PLD_ABS_SLACK,
            "shares": [x / t for x in s], "share_basis": "expected privacy loss (KL)"}


def epsilon_of_pld(pld, delta: float, hi: float) -> float:
    """Certified ε at δ of a composed pessimistic PLD (inf when the infinite mass exceeds δ)."""
    target = delta - _comp.PLD_ABS_SLACK
    if target <= 0.0:
        return math.inf

    def ok_exact(e):
        return float(pld.get_delta_for_epsilon(e)) <= target

    if ok_exact(0.0):
        return 0.0
    hint = float(pld.get_epsilon_for_delta(target))
    if math.isfinite(hint):
        hi = max(hi, 2.0 * hint + 1.0)
    hi = max(hi, 1.0)
    if not ok_exact(hi):
        return math.inf
    fast = _comp._fast_delta(pld)
    ok = (lambda e: fast(e) <= target) if fast is not None else ok_exact
    eps = bisect_certified(ok, 0.0, hi, want="smallest", xtol=1e-12, rtol=1e-10)
    step = max(pld._pmf_remove._discretization * 1e-3 if hasattr(pld, "_pmf_remove") else 1e-9, 1e-12)
    while not ok_exact(eps):
        eps = min(hi, eps + step)
        step *= 2.0
    return float(round_up(eps))


def delta_of_pld(pld, epsilon: float) -> float:
    raw = float(pld.get_delta_for_epsilon(epsilon))
    return min(1.0, float(round_up(max(raw, 0.0) + _comp.PLD_ABS_SLACK)))


@register
class PldComposer(Composer):
    name = "pld"
    reference = "Koskela et al. 2020 (arXiv:1906.03049); Doroshenko et al. 2022 (arXiv:2207.04380)"

    def accepts(self, parts):
        parts = merge_parts(parts)
        if any(v.pld is None for v, _ in parts):
            return "needs a dominating pair (PLD view) of every entry"
        if len(parts) == 1:
            v, c = parts[0]
            if v.pld.derived:
                return "a derived pair adds nothing for one entry (KOV15 is exact on it)"
            if v.kind == "upper":
                # one entry's atoms compose in pld_fft (numpy only); a prebuilt PLD needs
                # dp_accounting
                return None if v.pld.atoms is not None else _comp.pld_unavailable_reason()
            if v.kind == "lower" and v.pld.is_instance and c > 1:
                return _comp.pld_unavailable_reason()
            return "composition theorems give upper bounds only"
        if any(v.kind != "upper" for v, _ in parts):
            return "mixing entries needs upper bounds"
        return _comp.pld_unavailable_reason()

    def floor(self, parts, ask, beat):
        """ε question, one upper entry whose PLD view has a ``tail_floor``: ∞ when that tail,
        charged as infinite loss every round, alone exceeds δ over the entry's rounds (the
        route's own answer is then ∞, ``composition._tails_alone_exceed``), found before
        the atoms are built."""
        parts = merge_parts(parts)
        if len(parts) != 1 or not isinstance(ask, EpsilonAt):
            return None
        v, c = parts[0]
        if v.kind != "upper" or v.pld is None or v.pld.tail_floor is None:
            return None
        if _comp._tails_alone_exceed(float(v.pld.tail_floor()), int(c), float(ask.delta)):
            return math.inf
        return None

    def _single(self, parts, x, question):
        v, c = parts[0]
        if v.pld.atoms is None:
            return None
        logp, logq, tail = v.pld.atoms()
        if v.kind == "lower":
            fn = _comp.pld_epsilon_lower if question == "epsilon" else _comp.pld_delta_lower
            val, det = fn(logp, logq, c, x)
        else:
            fn = _comp.pld_epsilon if question == "epsilon" else _comp.pld_delta
            val, det = fn(logp, logq, c, x, extra_delta=float(tail), symmetric=v.pld.symmetric)
        return Outcome(float(val), v.kind, self.name, det)

    def epsilon(self, parts, delta, *, discretization=None, **opts):
        parts = merge_parts(parts)
        if len(parts) == 1 and discretization is None:
            o = self._single(parts, delta, "epsilon")
            if o is not None:
                return o
        d = discretization or MULTI_DISCRETIZATION
        pld, hi, shares = compose_parts(parts, d)
        val = epsilon_of_pld(pld, delta, hi)
        return Outcome(val, "upper", self.name, _share_details(d, shares, sum(c for _, c in parts)))

    def delta(self, parts, epsilon, *, discretization=None, **opts):
        parts = merge_parts(parts)
        if len(parts) == 1 and discretization is None:
            o = self._single(parts, epsilon, "delta")
            if o is not None:
                return o
        d = discretization or MULTI_DISCRETIZATION
        pld, _, shares = compose_parts(parts, d)
        return Outcome(delta_of_pld(pld, epsilon), "upper", self.name,
                       _share_details(d, shares, sum(c for _, c in parts)))
