"""Public constructors and entry points reject bad input with a ValueError that names the
parameter, its allowed range and the value received (spec/validation.md "Bad input")."""

from __future__ import annotations

import math

import numpy as np
import pytest

import shuffledp as sd

P = sd.Shuffle(sd.LDP(1.0), n=100)


def _raises(fn, *fragments):
    with pytest.raises(ValueError) as info:
        fn()
    msg = str(info.value)
    for f in fragments:
        assert f in msg, (f, msg)
    return msg


@pytest.mark.parametrize("ctor", [sd.LDP, sd.RandomizedResponse])
@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, "1", None, True])
def test_eps0_rejected(ctor, bad):
    _raises(lambda: ctor(bad), "eps0", "[0, 700]", repr(bad))


def test_randomized_response_k():
    _raises(lambda: sd.RandomizedResponse(1.0, k=1), "k", "[2, inf)", "1")
    _raises(lambda: sd.RandomizedResponse(1.0, k=2.5), "k", "integer", "2.5")


@pytest.mark.parametrize("bad", [0, -3, 2.5, math.nan, "10"])
def test_n_rejected(bad):
    _raises(lambda: sd.Shuffle(sd.LDP(1.0), n=bad), "n", "[1, inf)", repr(bad))


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_sigma_rejected(bad):
    _raises(lambda: sd.Gaussian(bad), "sigma", "(0, inf)", repr(bad))


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, math.nan])
def test_checkin_rate_rejected(bad):
    _raises(lambda: sd.CheckIn(bad), "rate", "(0, 1]", repr(bad))
    assert sd.CheckIn(1.0).rate == 1.0   # γ = 1 is allowed


def test_without_replacement_size_rejected():
    _raises(lambda: sd.WithoutReplacement(0), "size", "[1, inf)", "0")
    _raises(lambda: sd.Shuffle(sd.Gaussian(1.0), n=10, sampling=sd.WithoutReplacement(11)),
            "sampling.size", "n=10", "11")
    _raises(lambda: sd.Shuffle(sd.LDP(1.0), n=10, sampling=0.5), "sampling", "CheckIn")
    _raises(lambda: sd.Shuffle(1.0, n=10), "mechanism", "1.0")


def test_randomizer_matrix_rejected():
    _raises(lambda: sd.Randomizer([[0.5, 0.6], [0.5, 0.5]]), "rows", "sum to 1", "row 0", "1.1")
    _raises(lambda: sd.Randomizer([[1.2, -0.2], [0.5, 0.5]]), "non-negative")
    _raises(lambda: sd.Randomizer([[1.0, 0.0], [0.5, 0.5]]), "not eps0-LDP for any finite eps0")
    _raises(lambda: sd.Randomizer([0.5, 0.5]), "2-D")
    _raises(lambda: sd.Randomizer([["a", "b"], ["c", "d"]]), "matrix")
    # Not ε0-LDP for the claimed ε0: names the claim and the computed level.
    M = sd.RandomizedResponse(1.0).matrix()
    msg = _raises(lambda: sd.Randomizer(M.tolist(), eps0=0.5), "eps0", "0.5", ">=")
    assert "1.0" in msg or "0.99999" in msg
    _raises(lambda: sd.Randomizer(M.tolist(), eps0=-1.0), "eps0", "-1.0")


def test_randomizer_good_input_and_computed_eps0():
    e = math.exp(1.3)
    M = [[e / (e + 2), 1 / (e + 2), 1 / (e + 2)], [1 / (e + 2), e / (e + 2), 1 / (e + 2)]]
    r = sd.Randomizer(M)
    assert r.eps0 == pytest.approx(1.3, rel=1e-12) and r.inputs == 2
    assert sd.Randomizer(M, eps0=2.0).eps0 == 2.0            # a looser claim is allowed
    with pytest.raises(ValueError):
        r.array[0, 0] = 0.0                                   # read-only view
    with pytest.raises(Exception):
        r.eps0 = 5.0                                          # frozen record
    rr = sd.RandomizedResponse(2.0, k=4).matrix()
    assert np.allclose(rr.sum(axis=1), 1.0)
    assert math.log(rr.max() / rr.min()) == pytest.approx(2.0, rel=1e-14)


@pytest.mark.parametrize("bad", [0.0, 1.0, 1.5, -1e-9, math.nan])
def test_delta_rejected(bad):
    _raises(lambda: sd.epsilon(P, bad), "delta", "(0, 1)", repr(bad))


@pytest.mark.parametrize("bad", [-0.1, math.nan, math.inf])
def test_epsilon_rejected(bad):
    _raises(lambda: sd.delta(P, bad), "epsilon", "[0, inf)", repr(bad))


@pytest.mark.parametrize("bad", [0, -1, 2.5])
def test_rounds_rejected(bad):
    for fn in (lambda: sd.epsilon(P, 1e-6, rounds=bad), lambda: sd.delta(P, 0.5, rounds=bad),
               lambda: sd.rdp(P, [2], rounds=bad)):
        _raises(fn, "rounds", "[1, inf)", repr(bad))


@pytest.mark.parametrize("bad", [1, 1.0, 0.5, -2, math.nan])
def test_order_rejected(bad):
    _raises(lambda: sd.rdp(P, [2, bad]), "orders[1]", "(1, inf)", repr(bad))
    _raises(lambda: sd.rdp(P, bad, bound="girgis-ub1"), "orders", "(1, inf)")


def test_orders_container_and_protocol_and_bound_rejected():
    _raises(lambda: sd.rdp(P, []), "orders", "non-empty")
    _raises(lambda: sd.epsilon(sd.LDP(1.0), 1e-6), "protocol", "Shuffle")
    _raises(lambda: sd.epsilon(P, 1e-6, bound="nope"), "bound", "girgis-ub1", "'nope'")
    _raises(lambda: sd.epsilon(P, 1e-6, composition="magic"), "composition", "rdp", "'magic'")


def test_not_applicable_explains_and_lists_alternatives():
    g = sd.Shuffle(sd.Gaussian(2.0), n=100)
    with pytest.raises(sd.NotApplicableError) as info:
        sd.epsilon(g, 1e-6, bound="girgis-ub1")
    assert "Gaussian" in str(info.value) and "Bounds that apply" in str(info.value)
    with pytest.raises(sd.NotApplicableError, match="4096"):
        sd.rdp(P, [5000], bound="girgis-lower")
    with pytest.raises(sd.NotApplicableError, match="integer orders"):
        sd.rdp(P, [2.5], bound="girgis-lower")
    with pytest.raises(sd.NotApplicableError, match="k-RR|krr-lower"):
        sd.epsilon(sd.Shuffle(sd.RandomizedResponse(1.0, k=3), n=10), 1e-6, bound="girgis-lower")
