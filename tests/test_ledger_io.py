"""Every mechanism, sampling and protocol the library accepts round-trips through a ledger
file (``Accountant.to_dict`` / ``from_dict``, JSON).

The kinds are enumerated from the package (the ``Mechanism`` and ``Sampling`` unions and
what ``Shuffle`` accepts), so a mechanism added later without storage support fails here
until it gets an example below and a line in ``shuffledp.core.spec``.
"""

import json
import typing

import pytest

import shuffledp as sd
from shuffledp.core import mechanisms, protocols, spec

EXAMPLES = {
    sd.LDP: [sd.LDP(1.0)],
    sd.RandomizedResponse: [sd.RandomizedResponse(2.0), sd.RandomizedResponse(0.5, k=7)],
    sd.Randomizer: [sd.Randomizer(((0.7, 0.3), (0.2, 0.8))),
                    sd.Randomizer(((0.5, 0.25, 0.25), (0.25, 0.5, 0.25)), eps0=1.5)],
    sd.Gaussian: [sd.Gaussian(2.5)],
    sd.OUE: [sd.OUE(1.0, 100)],
    sd.RAPPOR: [sd.RAPPOR(2.0, 16)],
    sd.HadamardResponse: [sd.HadamardResponse(1.5, 30)],
    sd.LocalHashing: [sd.LocalHashing(0.75, 1000)],
}
SAMPLINGS = {type(None): None, sd.CheckIn: sd.CheckIn(0.25), sd.WithoutReplacement: sd.WithoutReplacement(3)}


def _public(module):
    return {getattr(sd, n) for n in sd.__all__
            if isinstance(getattr(sd, n), type) and getattr(sd, n).__module__ == module.__name__}


def test_every_accepted_kind_has_an_example():
    accepted = set(mechanisms.LocalRandomizer) | {mechanisms.Gaussian}
    assert set(typing.get_args(mechanisms.Mechanism)) == accepted
    assert _public(mechanisms) <= accepted
    missing = accepted - set(EXAMPLES)
    assert not missing, f"add an example here and storage in shuffledp.core.spec for: {missing}"
    samplings = set(typing.get_args(protocols.Sampling)) | {type(None)}
    assert (_public(protocols) - {sd.Shuffle}) <= samplings
    assert samplings == set(SAMPLINGS)


@pytest.mark.parametrize("mech", [m for ms in EXAMPLES.values() for m in ms], ids=repr)
@pytest.mark.parametrize("sampling", list(SAMPLINGS.values()), ids=repr)
def test_protocol_round_trips_through_a_ledger_file(mech, sampling):
    p = sd.Shuffle(mech, n=10, sampling=sampling)
    acc = sd.Accountant().compose(p, 3, label="x").compose(p, 2)
    d = acc.to_dict()
    back = sd.Accountant.from_dict(json.loads(json.dumps(d)))
    assert back.entries == acc.entries
    assert [type(e.item.mechanism) for e in back.entries] == [type(mech)] * 2
    assert back.to_dict() == d


def test_encoder_aliases_are_read():
    # The CLI's aliases (sue:D, hadamard:D, blh:D) are read; the first name is written.
    for alias, cls in (("sue", sd.RAPPOR), ("hadamard", sd.HadamardResponse), ("blh", sd.LocalHashing)):
        m = spec.mechanism_from_dict({"type": alias, "eps0": 1.0, "d": 8})
        assert type(m) is cls and (m.eps0, m.d) == (1.0, 8)
        assert spec.mechanism_to_dict(m)["type"] != alias


def test_bad_mechanism_tables_name_the_problem():
    with pytest.raises(ValueError, match="needs 'eps0' and 'd'"):
        spec.mechanism_from_dict({"type": "oue", "eps0": 1.0})
    with pytest.raises(ValueError, match="one of ldp, rr, matrix, gaussian, oue, rappor, hr, olh"):
        spec.mechanism_from_dict({"type": "nope"})
    with pytest.raises(ValueError, match="d must be"):
        spec.mechanism_from_dict({"type": "olh", "eps0": 1.0, "d": 1})
