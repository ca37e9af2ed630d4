"""The dict spelling of mechanisms and protocols (ledger files, ``Accountant.to_dict``).

Records <-> plain dicts, both ways, with no maths: ``{"type": "rr", "eps0": 2.0, "k": 4}``,
``{"n": 1000, "mechanism": {...}, "sampling": {"checkin": 0.5}}``. Mechanism types:
``ldp`` (eps0), ``rr`` (eps0, k), ``matrix`` (matrix, optional eps0), ``gaussian``
(``sigma`` per unit ℓ2 diameter and/or ``noise_multiplier`` = 2·sigma), and the encoders ``oue``, ``rappor`` (alias ``sue``), ``hr`` (alias ``hadamard``),
``olh`` (alias ``blh``), each with eps0 and d (the domain size), the names of the CLI's
``oue:D``. Sampling: ``{checkin = RATE}`` or ``{without_replacement = SIZE}``. Deployments
(docs/deployments.md): optional ``reports_per_user``, ``dummies``, ``honest`` and
``dummy_distribution`` (``"uniform"``, ``"blanket"`` or a list of probabilities) beside ``n``.
"""

from __future__ import annotations

from .mechanisms import (LDP, OUE, RAPPOR, Gaussian, HadamardResponse, LocalHashing,
                         RandomizedResponse, Randomizer)
from .protocols import CheckIn, Shuffle, WithoutReplacement

__all__ = ["ENCODER_TYPES", "MECHANISM_TYPES", "mechanism_to_dict", "mechanism_from_dict",
           "proto_to_dict", "proto_from_dict"]


#: The named encoders, stored as ``{type, eps0, d}``: the type names of the CLI's
#: ``oue:D``, ``rappor:D``, ``hr:D``, ``olh:D`` (first name written, every alias read).
ENCODER_TYPES = {"oue": OUE, "rappor": RAPPOR, "sue": RAPPOR, "hr": HadamardResponse,
                 "hadamard": HadamardResponse, "olh": LocalHashing, "blh": LocalHashing}
_ENCODER_NAME = {cls: name for name, cls in reversed(ENCODER_TYPES.items())}

MECHANISM_TYPES = ("ldp", "rr", "matrix", "gaussian") + tuple(
    n for n, c in ENCODER_TYPES.items() if _ENCODER_NAME[c] == n)


def mechanism_to_dict(m) -> dict:
    if isinstance(m, LDP):
        return {"type": "ldp", "eps0": m.eps0}
    if isinstance(m, RandomizedResponse):
        return {"type": "rr", "eps0": m.eps0, "k": m.k}
    if isinstance(m, Randomizer):
        d = {"type": "matrix", "matrix": [list(map(float, r)) for r in m.matrix]}
        if m.eps0 is not None:
            d["eps0"] = m.eps0
        return d
    if isinstance(m, Gaussian):
        # Both units, so a person reading the file cannot take one for the other.
        return {"type": "gaussian", "sigma": m.sigma, "noise_multiplier": m.noise_multiplier}
    for cls, name in _ENCODER_NAME.items():
        if isinstance(m, cls):
            return {"type": name, "eps0": m.eps0, "d": m.d}
    raise ValueError(f"cannot store mechanism {m!r}")


def mechanism_from_dict(d) -> object:
    if not isinstance(d, dict) or "type" not in d:
        raise ValueError(f"mechanism must be a table with a 'type' key ({', '.join(MECHANISM_TYPES)}); "
                         f"got {d!r}")
    t = d["type"]
    if t == "ldp":
        return LDP(d["eps0"])
    if t == "rr":
        return RandomizedResponse(d["eps0"], k=d.get("k", 2))
    if t == "matrix":
        return Randomizer(tuple(tuple(r) for r in d["matrix"]), eps0=d.get("eps0"))
    if t == "gaussian":
        return _gaussian_from_dict(d)
    if t in ENCODER_TYPES:
        if "d" not in d or "eps0" not in d:
            raise ValueError(f"mechanism type {t!r} needs 'eps0' and 'd' (the domain size); got {d!r}")
        return ENCODER_TYPES[t](d["eps0"], d["d"])
    raise ValueError(f"mechanism type must be one of {', '.join(MECHANISM_TYPES)}; got {t!r}")


def proto_to_dict(p: Shuffle) -> dict:
    d = {"n": p.n, "mechanism": mechanism_to_dict(p.mechanism)}
    if isinstance(p.sampling, CheckIn):
        d["sampling"] = {"checkin": p.sampling.rate}
    elif isinstance(p.sampling, WithoutReplacement):
        d["sampling"] = {"without_replacement": p.sampling.size}
    # Deployment fields only when set (docs/deployments.md), so plain files stay as they were.
    if p.reports_per_user != 1:
        d["reports_per_user"] = p.reports_per_user
    if p.dummies:
        d["dummies"] = p.dummies
    if p.honest is not None:
        d["honest"] = p.honest
    if p.dummy_distribution is not None:
        dd = p.dummy_distribution
        d["dummy_distribution"] = dd if isinstance(dd, str) else list(dd)
    return d


def proto_from_dict(d) -> Shuffle:
    if not isinstance(d, dict) or "n" not in d or "mechanism" not in d:
        raise ValueError(f"shuffle must be a table with 'n' and 'mechanism'; got {d!r}")
    s = d.get("sampling")
    samp = None
    if s is not None:
        if not isinstance(s, dict) or len(s) != 1 or next(iter(s)) not in ("checkin", "without_replacement"):
            raise ValueError("sampling must be {checkin = RATE} or {without_replacement = SIZE}; "
                             f"got {s!r}")
        samp = CheckIn(s["checkin"]) if "checkin" in s else WithoutReplacement(s["without_replacement"])
    unknown = set(d) - {"n", "mechanism", "sampling", "reports_per_user", "dummies", "honest",
                        "dummy_distribution"}
    if unknown:
        raise ValueError("shuffle keys must be among n, mechanism, sampling, reports_per_user, "
                         f"dummies, honest, dummy_distribution; got {', '.join(sorted(unknown))}")
    return Shuffle(mechanism_from_dict(d["mechanism"]), n=d["n"], sampling=samp,
                   reports_per_user=d.get("reports_per_user", 1), dummies=d.get("dummies", 0),
                   honest=d.get("honest"), dummy_distribution=d.get("dummy_distribution"))


def _gaussian_from_dict(d: dict) -> Gaussian:
    """``sigma`` (per unit ℓ2 diameter) or ``noise_multiplier`` (= 2·sigma), or both agreeing."""
    has_s, has_z = "sigma" in d, "noise_multiplier" in d
    if not (has_s or has_z):
        raise ValueError("a gaussian mechanism needs 'sigma' (per unit l2 diameter) or "
                         f"'noise_multiplier' (inputs clipped to norm C; = 2 * sigma); got {d!r}")
    if not has_s:
        return Gaussian.from_noise_multiplier(d["noise_multiplier"])
    g = Gaussian(d["sigma"])
    if has_z:
        z = Gaussian.from_noise_multiplier(d["noise_multiplier"]).noise_multiplier
        if abs(z - g.noise_multiplier) > 1e-12 * g.noise_multiplier:
            raise ValueError(f"gaussian: noise_multiplier must equal 2 * sigma = "
                             f"{g.noise_multiplier!r} when both are given; got {z!r}")
    return g
