"""Central (no shuffling) baselines for the federated-learning setting of Liew–Takahashi (arXiv:2206.09569).

DP-SGD without shuffling: each round the Poisson-subsampled Gaussian mechanism with rate q
and noise multiplier z (a trusted server adds N(0, z²C²I) once to the sum of gradients
clipped to ℓ2 norm C), composed over ``steps`` rounds, accounted by Google's
``dp_accounting`` (the ``pld`` extra). The import is lazy: without the package this module
still imports and ``central_baselines`` raises an ImportError that says how to get it.

The parameter named ``sigma`` here is that noise multiplier z — dp_accounting's
``GaussianDpEvent(z)`` — not the library's per-unit-diameter σ: the shuffled protocol with
the same noise per report is ``Gaussian.from_noise_multiplier(z)`` = ``Gaussian(z / 2)``
(docs/conventions.md).
"""

from __future__ import annotations

import math

import numpy as np

from ..core import _validate as v

__all__ = ["central_baselines", "central_gaussian_unsampled"]

_MISSING = ("central baselines need the optional package dp_accounting "
            "(pip install 'shuffledp[pld]' or pip install dp-accounting)")


def _dp_accounting():
    try:
        import dp_accounting  # noqa: F401
        from dp_accounting import pld, rdp
    except ImportError as exc:     # pragma: no cover - depends on the environment
        raise ImportError(_MISSING) from exc
    return dp_accounting, pld, rdp


def central_baselines(q: float = 0.1, sigma: float = 5.0, steps: int = 5540,
                      delta: float = 1.0 / 60000) -> dict:
    """ε of ``steps`` Poisson-subsampled Gaussian rounds, RDP and PLD accountants.

    ``sigma`` is the noise multiplier z (see the module docstring). Returns ``{"rdp": ε,
    "pld": ε, "pld_replace_one": ε, "q", "sigma", "noise_multiplier", "steps", "delta",
    "relation", "source"}``: "rdp" and "pld" under add/remove neighbours (dp_accounting's
    default, what Opacus reports), "pld_replace_one" under replace-one (dp_accounting's
    ``NeighboringRelation.REPLACE_ONE``, the relation of the shuffle bounds; its RDP
    accountant does not support it for Poisson sampling). Defaults are the MNIST setting of
    Liew–Takahashi (q = 0.1, z = 5, 5540 steps, δ = 1/60000). These are central DP-SGD
    numbers (the sum is computed by a trusted server), shown beside the shuffle accounting
    for comparison; they are ``dp_accounting``'s upper bounds.
    """
    q = v.real("q", q, lo=0.0, hi=1.0, lo_open=True)
    sigma = v.real("sigma", sigma, lo=0.0, lo_open=True)
    steps = v.integer("steps", steps, lo=1)
    delta = v.probability("delta", delta)
    dpa, pld, rdp = _dp_accounting()
    event = dpa.SelfComposedDpEvent(
        dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)
    r = rdp.RdpAccountant()
    r.compose(event)
    p = pld.PLDAccountant()
    p.compose(event)
    rep = pld.PLDAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    rep.compose(event)
    return {"rdp": float(r.get_epsilon(delta)), "pld": float(p.get_epsilon(delta)),
            "pld_replace_one": float(rep.get_epsilon(delta)),
            "q": q, "sigma": sigma, "noise_multiplier": sigma, "steps": steps, "delta": delta,
            "relation": "rdp, pld: add/remove; pld_replace_one: replace-one",
            "source": "dp_accounting RdpAccountant / PLDAccountant (Poisson-subsampled Gaussian)"}


def central_gaussian_unsampled(sigma: float, steps: int, delta: float) -> dict:
    """The same baselines without sampling (q = 1), computed here without dp_accounting.

    ``steps`` Gaussian rounds of noise multiplier z (noise z·C on a sum of vectors clipped
    to norm C: add/remove sensitivity C) compose exactly to one Gaussian of multiplier
    z/√steps: "pld" is its exact ε(δ) (the analytic Gaussian mechanism, Balle & Wang 2018,
    certified root), which is what a PLD accountant approaches; "rdp" converts the exact
    RDP curve steps·λ/(2z²) at real orders with this library's conversion
    (Canonne–Kamath–Steinke, arXiv:2004.00010, Prop. 12), as an RDP accountant does. Both
    add/remove; "pld_replace_one" is the exact ε under replace-one (sensitivity 2C, i.e.
    multiplier z/(2√steps)).
    """
    from ..compose import conversions
    from ..pairs.gaussian_rdp import gaussian_epsilon
    sigma = v.real("sigma", sigma, lo=0.0, lo_open=True)
    steps = v.integer("steps", steps, lo=1)
    delta = v.probability("delta", delta)
    exact = gaussian_epsilon(sigma / math.sqrt(steps), delta)
    # The Gaussian's RDP is exact at every real order: minimise the conversion over a fine
    # geometric grid of real orders in (1, 1e6] (any order is a valid conversion).
    lam = 1.0 + np.geomspace(1e-4, 1e6, 20001)
    rdp = float(np.min(conversions.eps_from_rdp(lam, steps * lam / (2.0 * sigma * sigma), delta)))
    return {"rdp": rdp, "pld": float(exact),
            "pld_replace_one": float(gaussian_epsilon(sigma / (2.0 * math.sqrt(steps)), delta)),
            "q": 1.0, "sigma": sigma, "noise_multiplier": sigma,
            "steps": steps, "delta": delta,
            "relation": "rdp, pld: add/remove; pld_replace_one: replace-one",
            "source": "no sampling: the exact composed Gaussian (PLD column) and its RDP "
                      "curve converted (RDP column), computed by shuffledp"}
