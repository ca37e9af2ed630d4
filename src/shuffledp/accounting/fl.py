"""Privacy accounting of a federated run, through the library (no torch needed).

Noise unit and neighbours. A user's report is its gradient clipped to ℓ2 norm C plus
N(0, z²C²I), z the *noise multiplier* (the unit of Opacus, dp_accounting and the paper). The
library's neighbouring relation is *replace-one* (one user's example changes, n fixed): two
clipped gradients can be 2C apart, so the per-user mechanism is
``Gaussian.from_noise_multiplier(z)`` = ``Gaussian(z/2)`` (σ per unit ℓ2 diameter). The
paper's experiment (Liew & Takahashi, arXiv:2206.09569) takes the distance as C — the
*add/remove* reading, ``Gaussian(z)`` — which is shown only as a labelled comparison.

Methods (columns of the CSV), each with its kind and relation:

``upper``            ``sd.epsilon(Shuffle(Gaussian(z/2), n, CheckIn(γ)), δ, t)``: a valid upper
                     bound from the library's accountant for the protocol, replace-one — by
                     default its answer over the fast routes (RDP composition, and the
                     unamplified Gaussian's exact composition), with ``upper="best"`` its
                     default answer over every route. The bound id is recorded per row, so the
                     column improves by itself when the library gains a tighter sampled-shuffle
                     bound.
``estimate``         the homogeneous-pair estimate (``liew-homogeneous``) for the same protocol,
                     replace-one: exact only when every other user holds the same vector; not a
                     guarantee.
``estimate_addremove`` the same estimate under the add/remove reading (``Gaussian(z)``): what
                     the paper reports; a comparison, not this run's guarantee.
``central``          central DP-SGD at the same noise multiplier (a trusted server adds
                     N(0, z²C²I) once to the sum), Poisson sampling at rate γ, add/remove
                     neighbours, ``dp_accounting`` PLD accountant (an upper bound for a
                     different trust model; needs the ``pld`` extra).
``central_replace_one`` the same central mechanism under replace-one neighbours (dp_accounting
                     ``NeighboringRelation.REPLACE_ONE``): like for like with ``upper``.

ε is computed at checkpoint rounds (log- and linearly spaced, always including the last),
not at every round: each query composes t rounds from scratch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["METHODS", "Method", "checkpoints", "protocol", "account", "epsilon_at"]


@dataclass(frozen=True)
class Method:
    key: str
    label: str
    kind: str            # upper | estimate (what the number is)
    assumptions: str
    dashed: bool


METHODS = (
    Method("upper", "shuffle, valid upper bound (replace-one, Gaussian(z/2))", "upper",
           "any user data; replace-one neighbours (ℓ2 diameter 2C); untrusted server, trusted "
           "shuffler; the library's default answer for the protocol", False),
    Method("estimate", "shuffle, homogeneous-pair estimate (replace-one, Gaussian(z/2))",
           "estimate", "exact only if all other users hold the same gradient; not a guarantee",
           True),
    Method("estimate_addremove", "shuffle, homogeneous-pair estimate, add/remove reading "
           "(Gaussian(z), as in the paper)", "estimate",
           "distance C instead of the replace-one diameter 2C; comparison only", True),
    Method("central", "central DP-SGD, same noise multiplier (add/remove, dp_accounting PLD)",
           "upper", "trusted server adds N(0, z²C²I) once to the sum; no shuffler; add/remove "
           "neighbours; a different trust model", False),
    Method("central_replace_one", "central DP-SGD, same noise multiplier (replace-one, "
           "dp_accounting PLD)", "upper", "trusted server adds N(0, z²C²I) once to the sum; no "
           "shuffler; replace-one neighbours, as the shuffle bound; a different trust model",
           False),
)


def protocol(n: int, checkin: float, noise_multiplier: float, reading: str = "replacement"):
    """The library protocol of one round for noise multiplier z:
    ``Shuffle(Gaussian.from_noise_multiplier(z), n, CheckIn(γ))`` (= ``Gaussian(z/2)``,
    replace-one), or ``Gaussian(z)`` for the paper's add/remove ``reading``."""
    import shuffledp as sd
    z = noise_multiplier
    mech = sd.Gaussian.from_noise_multiplier(z) if reading == "replacement" else sd.Gaussian(z)
    return sd.Shuffle(mech, n, sampling=sd.CheckIn(checkin))


def checkpoints(rounds: int, count: int = 40) -> list:
    """Exactly ``min(count, rounds)`` rounds in 1..rounds: half log-spaced, half evenly
    spaced, always the last. Log- and evenly spaced rounds can coincide (and early log
    steps round to the same integer); the count is then made up from finer even spacings,
    so a user asking for 10 checkpoints gets 10."""
    rounds, count = int(rounds), max(int(count), 2)
    if rounds <= count:
        return list(range(1, rounds + 1))
    lo = np.unique(np.round(np.geomspace(1, rounds, count // 2)).astype(int))
    li = np.unique(np.round(np.linspace(1, rounds, count - count // 2)).astype(int))
    pts = set(lo.tolist()) | set(li.tolist()) | {rounds}
    k = count
    while len(pts) < count:
        k += 1
        for t in np.round(np.linspace(1, rounds, k)).astype(int).tolist():
            if len(pts) >= count:
                break
            pts.add(t)
    return sorted(pts)


def central_epsilon(checkin: float, noise_multiplier: float, rounds: int, delta: float,
             replace_one: bool = False) -> float:
    """Central DP-SGD ε (dp_accounting PLD), add/remove or replace-one neighbours."""
    import dp_accounting as dpa
    from dp_accounting import pld
    rel = (dpa.NeighboringRelation.REPLACE_ONE if replace_one
           else dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    # A 1e-3 loss grid (pessimistic rounding, still an upper bound) is ~10x faster than the
    # default 1e-4 and changes ε in the 4th digit at these settings.
    acc = pld.PLDAccountant(neighboring_relation=rel, value_discretization_interval=1e-3)
    acc.compose(dpa.PoissonSampledDpEvent(checkin, dpa.GaussianDpEvent(noise_multiplier)),
                rounds)
    return float(acc.get_epsilon(delta))


UPPER_MODES = ("fast", "best")


def _upper(proto, delta: float, rounds: int, mode: str):
    """The valid upper bound: the library's answer, all routes (``best``) or the fast ones.

    ``fast`` = the smaller of the accountant's answer with RDP composition and the
    unamplified Gaussian's own answer (an exact composition for that bound): both are
    upper bounds the library certifies, so their minimum is one too. It skips PLD routes,
    which can take minutes per answer for small per-user noise, and loses little (RDP and
    PLD differ in the second digit where both exist).
    """
    import shuffledp as sd
    if mode == "best":
        r = sd.epsilon(proto, delta, rounds)
        return r, r.composition
    cands = []
    for kw in ({"composition": "rdp"}, {"bound": "gaussian-unamplified"}):
        try:
            cands.append(sd.epsilon(proto, delta, rounds, **kw))
        except sd.NotApplicableError:
            continue
    if not cands:       # pragma: no cover - gaussian-unamplified always applies
        r = sd.epsilon(proto, delta, rounds)
        return r, r.composition
    r = min(cands, key=lambda c: c.epsilon)
    return r, r.composition


def epsilon_at(n: int, checkin: float, noise_multiplier: float, rounds: int, delta: float,
               upper: str = "fast") -> dict:
    """Every method's ε after ``rounds`` rounds: ``{key: (ε or None, bound id, kind, note)}``.

    None (never NaN) when a method cannot answer (e.g. dp_accounting not installed); the note
    says why. ``upper``: ``fast`` (default) or ``best`` (every composition route the library
    has; see ``_upper``).
    """
    import shuffledp as sd
    if upper not in UPPER_MODES:
        raise ValueError(f"upper must be one of {', '.join(UPPER_MODES)}; got {upper!r}")
    out = {}
    proto = protocol(n, checkin, noise_multiplier)
    r, comp = _upper(proto, delta, rounds, upper)
    if r.kind != "upper":           # pragma: no cover - the accountant only answers with uppers
        raise ArithmeticError(f"the accountant answered with a {r.kind}, not an upper bound")
    out["upper"] = (float(r.epsilon), r.bound, r.kind, f"{r.valid_for}; composition {comp}")
    for key, pr in (("estimate", proto),
                    ("estimate_addremove", protocol(n, checkin, noise_multiplier, "addremove"))):
        try:
            e = sd.epsilon(pr, delta, rounds, bound="liew-homogeneous")
            out[key] = (float(e.epsilon), e.bound, e.kind, e.valid_for)
        except (sd.NotApplicableError, ArithmeticError) as exc:
            out[key] = (None, "liew-homogeneous", "estimate", f"not available: {exc}")
    for key, rep, rel in (("central", False, "add/remove"),
                          ("central_replace_one", True, "replace-one")):
        try:
            out[key] = (central_epsilon(checkin, noise_multiplier, rounds, delta, rep),
                        "dp_accounting-pld", "upper",
                        f"central DP-SGD, {rel} neighbours, trusted server")
        except ImportError:
            out[key] = (None, "dp_accounting-pld", "upper", "not available: install "
                        "dp-accounting (pip install 'shuffledp[pld]')")
    return out


def account(n: int, checkin: float, noise_multiplier: float, rounds: int, delta: float,
            count: int = 40, progress=None, skip: dict | None = None,
            upper: str = "fast") -> dict:
    """ε of every method at the checkpoint rounds: ``{round: epsilon_at(...)}``.

    ``skip``: answers already computed (``{round: epsilon_at(...)}``), reused as they are.
    """
    pts = checkpoints(rounds, count)
    res = dict(skip or {})
    for t in reversed(pts):
        if t not in res:
            res[t] = epsilon_at(n, checkin, noise_multiplier, t, delta, upper)
        if progress is not None:
            progress(t, res[t])
    return dict(sorted(res.items()))


def fmt(x) -> str:
    if x is None:
        return "n/a"
    if not math.isfinite(x):
        return "inf"
    return f"{x:.4g}"
