"""Applicability checks shared by bound modules (one place for the reason strings)."""

from __future__ import annotations


from ..pairs import gaussian_rdp as G
from ..core.mechanisms import Gaussian, LocalRandomizer
from ..numerics import bisect, golden
from ..core.protocols import CheckIn

__all__ = ["KOV15_OFF", "golden_pruned", "TrimmedFamilyRoutes", "probe_member", "ldp_reason",
           "no_sampling_reason", "gaussian_reason", "participation", "rate_size", "note_users", "eps0_range", "pld_first_kov15_last",
           "PARTICIPATION_NOTE"]

PARTICIPATION_NOTE = ("the server sees the participants' shuffled reports and their number, "
                      "not who took part")


def ldp_reason(proto) -> str | None:
    """None when the protocol's mechanism is an ε0-LDP randomizer."""
    if isinstance(proto.mechanism, Gaussian):
        return ("the Gaussian mechanism is not eps0-LDP for any finite eps0; use "
                "gaussian-unamplified, trimmed-clone or liew-homogeneous")
    if not isinstance(proto.mechanism, LocalRandomizer):
        return f"unknown mechanism {proto.mechanism!r}"
    return None


def no_sampling_reason(proto) -> str | None:
    """None when every user takes part in every round."""
    if proto.sampling is not None:
        return ("this bound is for a round in which all n users take part; it does not "
                f"analyse sampling={proto.sampling!r}")
    return None


def gaussian_reason(proto) -> str | None:
    """None when the protocol's mechanism is the Gaussian."""
    if not isinstance(proto.mechanism, Gaussian):
        return "this bound is for the Gaussian mechanism; use an LDP bound (fmt20, girgis-ub1, trivial)"
    return None


def participation(proto) -> float:
    """Probability that the victim takes part in a round (γ, or m/n without replacement)."""
    s = proto.sampling
    if s is None:
        return 1.0
    if isinstance(s, CheckIn):
        return float(s.rate)
    return s.size / proto.n


def rate_size(proto):
    """(check-in rate, None) or (None, sample size) of a sampled protocol."""
    s = proto.sampling
    return (float(s.rate), None) if isinstance(s, CheckIn) else (None, int(s.size))


def note_users(details: dict, m: int, n: int) -> None:
    """Label an outcome whose pair was built for m < n users (valid: more users only help,
    the others' reports can be simulated)."""
    if m < n:
        details["evaluated_at_n"] = m
        details["coarse"] = (f"pair built for n' = {m:.0e} of the {n:.3g} users "
                             "(valid: more users only help)")


def eps0_range(n, sigma, budget):
    """ε0 interval where n·δ0(ε0) < budget for the Gaussian of noise σ (the lower end found
    by 80 halvings of a bisection, at its certified end)."""
    hi = G.gaussian_eps_hi(sigma, budget / n * 1e-3)
    lo = 0.0
    if n * G.gaussian_delta(sigma, 0.0) >= budget:
        lo = bisect(lambda e: n * G.gaussian_delta(sigma, e) < budget, 0.0, hi, xtol=0.0,
                    rtol=0.0, max_iter=80, check_end=False).x
    return lo, hi


def pld_first_kov15_last(routes):
    """Routes of an exact-pair bound reordered pld, rdp, kov15 (T >= 2).

    The PLD route is usually the tightest and ignores the value to beat, so running it
    first changes no route's value; the routes after it then meet its value: the RDP route
    (sparse order grid: every order from 2 when it runs at all) is skipped only when no
    order's conversion term can beat it, and KOV15's floor check skips its split search
    (~30 single-round roots of the pair). A skipped route's value is at least the value that
    skipped it, so the bound's value is unchanged. 2-RR, eps0 = 2.13, n = 5.5e6, T = 13:
    KOV15 0.094 against PLD 0.0247, skipped (13.1 s -> 1.5 s CPU); LDP(1), n = 1e12,
    check-in 0.01, T = 10: the hidden pair's RDP route (the all-users pair's Rényi sums at
    n = 1e12) skipped against PLD's 1.7e-5."""
    return sorted(routes, key=lambda x: {"pld": 0, "kov15": 2}.get(x, 1))


def probe_member(member, lo: float, hi: float, untrimmed):
    """A member of a family of pairs indexed by ε0 in [lo, hi] (the first of a few points
    that has one): what the composers are asked whether they accept. Where none is
    representable (tiny σ: e^−ε0 underflows where n·δ0 is small), ``untrimmed()``: the same
    kind of pair at ε0 = 1 without the trimming, with the same views; it is only shown to
    the composers, never composed (every member's value is then ∞, or δ = 1)."""
    for x in (hi, 0.5 * (lo + hi), lo + 0.1 * (hi - lo)):
        m = member(x)
        if m is not None:
            return m
    return untrimmed()


#: Why the default search does not evaluate KOV15 over a trimmed family (asked by name it
#: runs): every ε0 member's single-round curve is a root search over exact pair sums.
KOV15_OFF = ("not evaluated by default over a trimmed pair: its split search needs ~30 "
             "single-round roots of exact pair sums at the chosen eps0, and the pair's own "
             "PLD and RDP routes compose the same pair; ask composition='kov15' to run it")


class TrimmedFamilyRoutes:
    """Mix-in of the three trimmed Gaussian bounds (a family of pairs, one per ε0): which of
    the composers' routes the default search leaves out, and why."""

    def route_cost_reason(self, proto, rounds, route):
        if rounds == 1 and route != "none":
            return ("one round: the chosen pair's own delta(eps) is below any conversion or "
                    "discretisation of it")
        if route == "kov15":
            return KOV15_OFF
        return super().route_cost_reason(proto, rounds, route)


def golden_pruned(f, loses, lo: float, hi: float, *, max_iter: int) -> float:
    """``numerics.golden(f, lo, hi, max_iter=max_iter).x`` without evaluating the points
    that are proven to lose their comparison (``golden``'s ``loses``).

    ``loses(x, fp)`` True is a proof that f(x) > fp (for the trimmed ε0 searches: one
    lower-bound δ evaluation at ε = fp above what the pair leaves, instead of a root search
    of ~10 upper-bound δ evaluations); such a point is not evaluated and loses the same
    comparison, so the search returns the same x as ``golden`` without it, bit for bit.
    """
    return golden(f, lo, hi, max_iter=max_iter, loses=loses).x
