"""Calibration round-trips: the parameter is on the certified side and tight (1e-4)."""

import math

import pytest

import shuffledp as sd


def test_eps0_round_trip():
    c = sd.calibrate.eps0(n=10_000, epsilon=1.0, delta=1e-6, rounds=10)
    r = sd.epsilon(sd.Shuffle(sd.LDP(c.value), 10_000), delta=1e-6, rounds=10)
    assert r.epsilon <= 1.0
    assert r.epsilon >= 1.0 * (1 - 1e-4)
    assert c.epsilon == pytest.approx(r.epsilon, rel=1e-12)
    # a slightly larger eps0 misses the target: the answer is the largest that meets it
    r2 = sd.epsilon(sd.Shuffle(sd.LDP(c.value * (1 + 1e-3)), 10_000), delta=1e-6, rounds=10)
    assert r2.epsilon > 1.0


def test_eps0_for_krr_is_at_least_the_general_one():
    general = sd.calibrate.eps0(n=10_000, epsilon=0.5, delta=1e-6)
    krr = sd.calibrate.eps0(n=10_000, epsilon=0.5, delta=1e-6, k=3)
    assert krr.value >= general.value * (1 - 1e-6)


def test_rounds_is_largest():
    proto = sd.Shuffle(sd.LDP(1.0), 10_000)
    c = sd.calibrate.rounds(proto, epsilon=1.0, delta=1e-6)
    T = int(c.value)
    assert sd.epsilon(proto, 1e-6, T).epsilon <= 1.0
    assert sd.epsilon(proto, 1e-6, T + 1).epsilon > 1.0


def test_users_is_smallest():
    c = sd.calibrate.users(sd.LDP(2.0), epsilon=0.5, delta=1e-6)
    n = int(c.value)
    assert sd.epsilon(sd.Shuffle(sd.LDP(2.0), n), 1e-6).epsilon <= 0.5
    assert sd.epsilon(sd.Shuffle(sd.LDP(2.0), n - 1), 1e-6).epsilon > 0.5


def test_calibration_reports_bound_and_runner_up():
    c = sd.calibrate.eps0(n=100_000, epsilon=0.5, delta=1e-6)
    assert c.bound and c.runner_up and c.runner_up != c.bound
    # The runner-up is stated as the parameter it alone allows: no more than the winner's,
    # and that parameter really meets the target through that bound alone.
    assert c.runner_up_value is not None and c.runner_up_value <= c.value
    r = sd.epsilon(sd.Shuffle(sd.LDP(c.runner_up_value), 100_000), 1e-6, bound=c.runner_up)
    assert r.epsilon <= 0.5
    assert c.runner_up_epsilon == pytest.approx(r.epsilon, rel=1e-12)
    assert "alone would allow eps0 = " in str(c)


def test_runner_up_is_the_best_single_bound_not_the_second_epsilon_at_the_answer():
    # At the calibrated eps0 (about 7.07, fmt20) the trivial bound eps = eps0 has the
    # second-smallest epsilon, but alone it allows only eps0 = 1; the runner-up must be the
    # bound that alone allows the most.
    c = sd.calibrate.eps0(n=100_000, epsilon=1.0, delta=1e-6)
    assert c.bound == "fmt20" and c.runner_up not in (None, "trivial", "fmt20")
    assert 1.0 < c.runner_up_value < c.value
    proto = sd.Shuffle(sd.LDP(c.runner_up_value), 100_000)
    assert sd.epsilon(proto, 1e-6, bound=c.runner_up).epsilon <= 1.0
    # every other default upper bound, alone, misses the target at that eps0
    others = [b.id for b in sd.bounds.all_bounds() if b.kind == "upper" and b.default
              and b.id not in (c.bound, c.runner_up)]
    for other in others:
        try:
            e = sd.epsilon(proto, 1e-6, bound=other).epsilon
        except (sd.NotApplicableError, ValueError):
            continue
        assert e > 1.0, other
    assert "alone would allow eps0 = 5.6" in str(c)


def test_calibration_behaves_like_its_number():
    c = sd.calibrate.users(sd.LDP(2.0), epsilon=0.5, delta=1e-6)
    assert float(c) == c.value and int(float(c)) == c.value
    assert f"{c:.0f}" == f"{c.value:.0f}"
    assert c > 1 and c <= c.value


@pytest.mark.parametrize("kwargs, name", [
    (dict(n=0, epsilon=1, delta=1e-6), "n"),
    (dict(n=100, epsilon=-1, delta=1e-6), "epsilon"),
    (dict(n=100, epsilon=1, delta=2), "delta"),
    (dict(n=100, epsilon=1, delta=1e-6, rounds=0), "rounds"),
])
def test_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        sd.calibrate.eps0(**kwargs)


def test_calibrate_loop_lands_on_the_certified_side_in_few_steps():
    """The search (secant through the two evaluations closest to the target, aimed just
    short of it) returns a parameter whose computed ε is ≤ the target and within the
    tolerance, on smooth steep curves with one bracket end far away, in a few evaluations."""
    from shuffledp.numerics import target_root

    def _calibrate_loop(eps_at, target, lo, hi, want, tol):
        return target_root(eps_at, lo, hi, target=target, want=want, rtol=tol).x
    for f, lo, hi in ((lambda x: x ** 3, 0.01, 50.0), (lambda x: math.exp(3 * x) - 1, 0.0, 5.0),
                      (lambda x: 0.2 * math.exp(0.45 * x), 3.5, 7.1)):
        calls = []

        def eps_at(x, f=f):
            calls.append(x)
            return f(x)

        x = _calibrate_loop(eps_at, 1.0, lo, hi, "largest", 1e-5)
        assert f(x) <= 1.0 and f(x) >= 1.0 - 1e-5
        assert len(calls) <= 14          # 16–17 for the previous bracket-only secant
    # a decreasing parameter (σ-like): the smallest x meeting the target
    x = _calibrate_loop(lambda s: 4.0 / s ** 2, 1.0, 0.5, 40.0, "smallest", 1e-5)
    assert 4.0 / x ** 2 <= 1.0 and 4.0 / x ** 2 >= 1.0 - 1e-5


# ----- relation= (add/remove neighbours, docs/relations.md) -------------------------------
AR = "add_or_remove_one"


def _ar_eps(proto, delta, T=1):
    return sd.epsilon(proto, delta, T, relation=AR)


def test_eps0_under_add_remove_meets_the_add_remove_target():
    c = sd.calibrate.eps0(n=5_000, epsilon=1.0, delta=1e-6, rounds=2,
                          sampling=sd.CheckIn(0.5), relation=AR)
    assert c.relation == AR and c.bound == "fmt20-addremove"
    r = _ar_eps(sd.Shuffle(sd.LDP(c.value), 5_000, sampling=sd.CheckIn(0.5)), 1e-6, 2)
    assert 1.0 * (1 - 1e-4) <= r.epsilon <= 1.0
    # the largest: a slightly larger eps0 misses the add/remove target
    r2 = _ar_eps(sd.Shuffle(sd.LDP(c.value * 1.001), 5_000, sampling=sd.CheckIn(0.5)), 1e-6, 2)
    assert r2.epsilon > 1.0
    assert "(add/remove neighbours)" in str(c)
    assert c.to_dict()["relation"] == AR


def test_sigma_under_add_remove_meets_the_add_remove_target():
    s = sd.CheckIn(0.1)
    c = sd.calibrate.sigma(n=20_000, epsilon=2.0, delta=1e-5, rounds=3, sampling=s,
                           relation=AR)
    assert c.relation == AR and c.bound == "trimmed-clone-addremove"
    r = _ar_eps(sd.Shuffle(sd.Gaussian(c.value), 20_000, sampling=s), 1e-5, 3)
    assert 2.0 * (1 - 1e-4) <= r.epsilon <= 2.0
    assert _ar_eps(sd.Shuffle(sd.Gaussian(c.value * 0.999), 20_000, sampling=s),
                   1e-5, 3).epsilon > 2.0


def test_rounds_and_users_under_add_remove():
    p = sd.Shuffle(sd.LDP(1.0), 5_000, sampling=sd.CheckIn(0.5))
    c = sd.calibrate.rounds(p, epsilon=0.5, delta=1e-6, relation=AR)
    T = int(c.value)
    assert c.relation == AR and c.bound == "fmt20-addremove"
    assert _ar_eps(p, 1e-6, T).epsilon <= 0.5 < _ar_eps(p, 1e-6, T + 1).epsilon
    u = sd.calibrate.users(sd.LDP(1.0), epsilon=0.5, delta=1e-6, sampling=sd.CheckIn(0.5),
                           relation=AR)
    n = int(u.value)
    assert u.relation == AR
    assert _ar_eps(sd.Shuffle(sd.LDP(1.0), n, sampling=sd.CheckIn(0.5)), 1e-6).epsilon <= 0.5
    assert _ar_eps(sd.Shuffle(sd.LDP(1.0), n - 1, sampling=sd.CheckIn(0.5)),
                   1e-6).epsilon > 0.5


@pytest.mark.parametrize("ask", [
    lambda: sd.calibrate.eps0(n=1000, epsilon=1.0, delta=1e-6, relation=AR),
    lambda: sd.calibrate.sigma(n=1000, epsilon=1.0, delta=1e-6, relation=AR),
    lambda: sd.calibrate.rounds(sd.Shuffle(sd.LDP(1.0), 1000), epsilon=1.0, delta=1e-6,
                                relation=AR),
    lambda: sd.calibrate.users(sd.LDP(1.0), epsilon=1.0, delta=1e-6,
                               sampling=sd.CheckIn(1.0), relation=AR),
])
def test_add_remove_with_everyone_reporting_is_refused(ask):
    with pytest.raises(sd.NotApplicableError, match="number of reports reveals"):
        ask()


def test_relation_default_unchanged_and_validated():
    a = sd.calibrate.eps0(n=10_000, epsilon=1.0, delta=1e-6, rounds=10)
    b = sd.calibrate.eps0(n=10_000, epsilon=1.0, delta=1e-6, rounds=10, relation="replace_one")
    assert a.value == b.value and a.relation == "replace_one"
    assert f"{a:.4f}" == "2.8645"          # the documented replace-one value
    assert "(replace-one neighbours)" in str(a) and a.to_dict()["relation"] == "replace-one"
    with pytest.raises(ValueError, match="relation must be one of"):
        sd.calibrate.eps0(n=10_000, epsilon=1.0, delta=1e-6, relation="add")


def test_cli_calibrate_relation(capsys):
    import json

    from shuffledp.apps.cli import main
    assert main(["calibrate", "users", "--eps0", "1", "--epsilon", "0.5", "--delta", "1e-6",
                 "--checkin", "0.5", "--relation", AR, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["relation"] == AR and d["bound"] == "fmt20-addremove"
    assert main(["calibrate", "eps0", "--n", "1000", "--epsilon", "1", "--delta", "1e-6",
                 "--relation", AR]) == 2
    assert "number of reports reveals" in capsys.readouterr().err


def test_a_calibration_says_what_its_guarantee_is_valid_for():
    """The certifying bound's class, as the accountant states it at the calibrated value,
    in the printed text, the dict and the notebook view."""
    c = sd.calibrate.eps0(10_000, 1.0, 1e-6, 10, k=2)
    want = sd.epsilon(sd.Shuffle(sd.RandomizedResponse(c.value, 2), n=10_000), 1e-6, 10)
    assert c.valid_for == want.valid_for and "class S" in c.valid_for
    assert "valid for: randomizers in class S" in str(c)
    assert c.to_dict()["valid_for"] == c.valid_for and "valid for" in c._repr_html_()
