"""Ledger state: ``Accountant.to_dict`` / ``from_dict`` and ledger files (TOML or JSON).

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

Mechanism types: ``ldp`` (eps0), ``rr`` (eps0, k), ``matrix`` (matrix, optional eps0),
``gaussian`` (``sigma`` per unit ℓ2 diameter, or ``noise_multiplier`` z for inputs clipped
to norm C, = 2·sigma; written with both). Sampling: ``{checkin = RATE}`` or
``{without_replacement = SIZE}``.
"""

from __future__ import annotations

import json

from .central import event_from_dict, event_to_dict
from .mechanisms import LDP, Gaussian, RandomizedResponse, Randomizer
from .protocols import CheckIn, Shuffle, WithoutReplacement

__all__ = ["ledger_to_dict", "ledger_from_dict", "load_ledger", "proto_to_dict", "proto_from_dict"]

FORMAT = "shuffledp-ledger"
VERSION = 1


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
    raise ValueError(f"cannot store mechanism {m!r}")


def mechanism_from_dict(d) -> object:
    if not isinstance(d, dict) or "type" not in d:
        raise ValueError(f"mechanism must be a table with a 'type' key (ldp, rr, matrix, gaussian); got {d!r}")
    t = d["type"]
    if t == "ldp":
        return LDP(d["eps0"])
    if t == "rr":
        return RandomizedResponse(d["eps0"], k=d.get("k", 2))
    if t == "matrix":
        return Randomizer(tuple(tuple(r) for r in d["matrix"]), eps0=d.get("eps0"))
    if t == "gaussian":
        return _gaussian_from_dict(d)
    raise ValueError(f"mechanism type must be one of ldp, rr, matrix, gaussian; got {t!r}")


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


def proto_to_dict(p: Shuffle) -> dict:
    d = {"n": p.n, "mechanism": mechanism_to_dict(p.mechanism)}
    if isinstance(p.sampling, CheckIn):
        d["sampling"] = {"checkin": p.sampling.rate}
    elif isinstance(p.sampling, WithoutReplacement):
        d["sampling"] = {"without_replacement": p.sampling.size}
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
    return Shuffle(mechanism_from_dict(d["mechanism"]), n=d["n"], sampling=samp)


def ledger_to_dict(acc) -> dict:
    out = {"format": FORMAT, "version": VERSION, "relation": "replace-one", "entries": []}
    if acc.pld_discretization is not None:
        out["pld_discretization"] = acc.pld_discretization
    for e in acc.entries:
        row = {"rounds": e.rounds, "label": e.label}
        if e.is_shuffle:
            row["shuffle"] = proto_to_dict(e.item)
        else:
            row["central"] = event_to_dict(e.item)
        out["entries"].append(row)
    return out


def ledger_from_dict(d: dict):
    from .ledger import Accountant
    if not isinstance(d, dict):
        raise ValueError(f"a ledger must be a table/object; got {type(d).__name__}")
    if d.get("format", FORMAT) != FORMAT:
        raise ValueError(f"format must be {FORMAT!r}; got {d.get('format')!r}")
    if int(d.get("version", VERSION)) != VERSION:
        raise ValueError(f"version must be {VERSION}; got {d.get('version')!r}")
    rel = d.get("relation", "replace-one")
    if rel != "replace-one":
        raise ValueError(f"relation must be 'replace-one' (the only one supported); got {rel!r}")
    entries = d.get("entries")
    if not isinstance(entries, list) or not entries:
        raise ValueError("entries must be a non-empty list of tables with 'rounds' and "
                         "either 'shuffle' or 'central'")
    acc = Accountant(pld_discretization=d.get("pld_discretization"))
    for i, row in enumerate(entries):
        if not isinstance(row, dict) or ("shuffle" in row) == ("central" in row):
            raise ValueError(f"entries[{i}] must have exactly one of 'shuffle' or 'central'; got {row!r}")
        item = proto_from_dict(row["shuffle"]) if "shuffle" in row else event_from_dict(row["central"])
        acc.compose(item, row.get("rounds", 1), label=row.get("label"))
    return acc


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
                                   "and central dp_accounting events, replace-one) and print "
                                   "the tightest valid upper bound with its breakdown. The "
                                   "file may hold 'delta' or 'epsilon' as the question.")
    p.add_argument("file", help="ledger file: .toml, or JSON (an example: shuffledp example budget)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--delta", type=num, default=None, help="answer epsilon at this delta")
    g.add_argument("--epsilon", type=num, default=None, help="answer delta at this epsilon")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    def run(a) -> int:
        acc, data = load_ledger(a.file)
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
