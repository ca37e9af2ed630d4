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

Entries are read by ``Accountant.from_dict`` (``shuffledp.ledger``); mechanisms and
protocols are spelled as in ``shuffledp.spec``.
A gaussian mechanism is written with both units: ``sigma`` per unit ℓ2 diameter and
``noise_multiplier`` z for inputs clipped to norm C (= 2·sigma); either one is read.
"""

from __future__ import annotations

import json

from .ledger import LEDGER_FORMAT, LEDGER_VERSION, Accountant
from .spec import (ENCODER_TYPES, MECHANISM_TYPES, mechanism_from_dict,  # noqa: F401
                   mechanism_to_dict, proto_from_dict, proto_to_dict)

__all__ = ["ledger_to_dict", "ledger_from_dict", "load_ledger", "proto_to_dict", "proto_from_dict"]

# The dict form lives with the records (``spec``) and the ledger (``ledger``); this module
# reads files and adds the ``compose`` command. The names below stay importable from here.
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


def add_cli(sub, protocol_args, num, int_like):
    """``shuffledp compose FILE [--delta D | --epsilon E] [--json]``."""
    p = sub.add_parser("compose", help="one privacy budget for a ledger file (TOML or JSON)",
                       description="Compose every entry of a ledger file (shuffled protocols "
                                   "and central dp_accounting events, under one neighbouring "
                                   "relation: replace-one unless the file or --relation says "
                                   "add_or_remove_one) and print "
                                   "the tightest valid upper bound with its breakdown. The "
                                   "file may hold 'delta' or 'epsilon' as the question.")
    p.add_argument("file", help="ledger file: .toml, or JSON (an example: shuffledp example budget)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--delta", type=num, default=None, help="answer epsilon at this delta")
    g.add_argument("--epsilon", type=num, default=None, help="answer delta at this epsilon")
    p.add_argument("--relation", default=None, choices=("replace_one", "add_or_remove_one"),
                   help="neighbouring relation of every entry (default: the file's "
                        "'relation' key, else replace_one); a file that names another "
                        "relation is refused")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    def run(a) -> int:
        acc, data = load_ledger(a.file)
        if a.relation is not None and a.relation != acc.relation:
            if "relation" in data:
                raise ValueError(f"--relation {a.relation} contradicts the file's relation = "
                                 f"{data['relation']!r}: a ledger is composed under one "
                                 "neighbouring relation")
            acc = Accountant.from_dict(dict(data, relation=a.relation))
        d, e = a.delta, a.epsilon
        if d is None and e is None:
            d, e = data.get("delta"), data.get("epsilon")
        if d is None and e is None:
            raise ValueError("give --delta or --epsilon (or a 'delta' / 'epsilon' key in the file)")
        r = acc.epsilon(d) if d is not None else acc.delta(e)
        if a.json:
            from .cli import json_output
            print(json_output(a, dict(r.to_dict(), ledger=data)))
        else:
            print(r.table())
        return 0

    p.set_defaults(func=run)
