"""Applicability checks shared by bound modules (one place for the reason strings)."""

from __future__ import annotations

from ..mechanisms import Gaussian, LocalRandomizer

__all__ = ["ldp_reason", "no_sampling_reason"]


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
