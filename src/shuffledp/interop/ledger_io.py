"""Ledger files (TOML or JSON) and the ``compose`` command.

The format (documented with an example in ``docs/ledger.md``; ``shuffledp example budget``
prints one)::

    format = "shuffledp-ledger"
    version = 1
    [[entries]]
    rounds = 30
    shuffle = {n = 1000000, mechanism = {type = "rr", eps0 = 2.0, k = 4}}
    [[entries]]
    rounds = 1000
    central = {event = "poisson_sampled", sampling_probability = 0.01,
               of = {event = "gaussian", noise_multiplier = 1.1}}

Entries are read by ``Accountant.from_dict`` (``shuffledp.accounting.ledger``); mechanisms and
protocols are spelled as in ``shuffledp.core.spec``.
A gaussian mechanism is written with both units: ``sigma`` per unit ℓ2 diameter and
``noise_multiplier`` z for inputs clipped to norm C (= 2·sigma); either one is read.
"""

from __future__ import annotations

import json

from ..accounting.ledger import LEDGER_FORMAT, LEDGER_VERSION, Accountant
from ..core.spec import (ENCODER_TYPES, MECHANISM_TYPES, mechanism_from_dict,  # noqa: F401
                   mechanism_to_dict, proto_from_dict, proto_to_dict)

__all__ = ["ledger_to_dict", "ledger_from_dict", "load_ledger", "proto_to_dict", "proto_from_dict"]

# The dict form lives with the records (``spec``) and the ledger (``ledger``); this module
# reads files (the ``compose`` command is in ``cli``). The names below stay importable here.
FORMAT, VERSION = LEDGER_FORMAT, LEDGER_VERSION


def ledger_to_dict(acc) -> dict:
    return acc.to_dict()


def ledger_from_dict(d: dict):
    return Accountant.from_dict(d)


def load_ledger(path: str):
    """Read a ledger file: TOML (``.toml``) or JSON (anything else)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise ValueError(f"ledger file {path!r} cannot be read: {exc.strerror}") from None
    if path.endswith(".toml"):
        try:
            import tomllib
        except ModuleNotFoundError:   # Python < 3.11
            raise ValueError("reading TOML needs Python >= 3.11 (tomllib); use a JSON ledger file") from None
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"ledger file {path!r} is not valid TOML: {exc}") from None
    else:
        try:
            data = json.loads(raw.decode("utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"ledger file {path!r} is not valid JSON: {exc}") from None
    return ledger_from_dict(data), data
