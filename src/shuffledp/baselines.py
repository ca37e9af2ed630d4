"""Central (no shuffling) baselines for the federated-learning setting of Liew–Takahashi (arXiv:2206.09569).

DP-SGD without shuffling: each round the Poisson-subsampled Gaussian mechanism with rate q
and noise multiplier σ, composed over ``steps`` rounds, accounted by Google's
``dp_accounting`` (the ``pld`` extra). The import is lazy: without the package this module
still imports and ``central_baselines`` raises an ImportError that says how to get it.
"""

from __future__ import annotations

from . import _validate as v

__all__ = ["central_baselines"]

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

    Returns ``{"rdp": ε, "pld": ε, "q", "sigma", "steps", "delta", "source"}``. Defaults are
    the MNIST setting of Liew–Takahashi (q = 0.1, σ = 5, 5540 steps, δ = 1/60000). These are central
    DP-SGD numbers (the sum is computed by a trusted server), shown beside the shuffle
    accounting for comparison; they are ``dp_accounting``'s upper bounds.
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
    return {"rdp": float(r.get_epsilon(delta)), "pld": float(p.get_epsilon(delta)),
            "q": q, "sigma": sigma, "steps": steps, "delta": delta,
            "source": "dp_accounting RdpAccountant / PLDAccountant (Poisson-subsampled Gaussian)"}
