"""Calibration of deployments (reports per user, dummies, colluders): the parameter found
is on the certified side of the same deployment's sd.epsilon, and the fields change it in
the expected direction (docs/deployments.md)."""

import shuffledp as sd
from shuffledp.apps import cli


def test_eps0_with_two_reports_per_user_is_certified_and_smaller():
    one = sd.calibrate.eps0(n=100_000, epsilon=1.0, delta=1e-6, k=10)
    two = sd.calibrate.eps0(n=100_000, epsilon=1.0, delta=1e-6, k=10, reports_per_user=2)
    p = sd.Shuffle(sd.RandomizedResponse(two.value, k=10), n=100_000, reports_per_user=2)
    assert sd.epsilon(p, 1e-6).epsilon <= 1.0
    assert two.value < one.value                      # two reports leak more than one
    assert two.bound.startswith("k-fold/") or two.bound.startswith("product/")


def test_eps0_with_colluders_is_smaller_than_without():
    all_honest = sd.calibrate.eps0(n=100_000, epsilon=1.0, delta=1e-6)
    half = sd.calibrate.eps0(n=100_000, epsilon=1.0, delta=1e-6, honest=50_000)
    assert half.value < all_honest.value
    p = sd.Shuffle(sd.LDP(half.value), n=100_000, honest=50_000)
    assert sd.epsilon(p, 1e-6).epsilon <= 1.0


def test_users_with_dummies_is_the_smallest_certified_n():
    mech = sd.RandomizedResponse(4.0, k=100)
    c = sd.calibrate.users(mech, epsilon=0.5, delta=1e-6, dummies=1000)
    n = int(c.value)
    assert sd.epsilon(sd.Shuffle(mech, n, dummies=1000), 1e-6).epsilon <= 0.5
    assert sd.epsilon(sd.Shuffle(mech, n - 1, dummies=1000), 1e-6).epsilon > 0.5
    assert n < sd.calibrate.users(mech, epsilon=0.5, delta=1e-6).value


def test_calibrate_cli_takes_deployment_flags_and_refuses_what_it_cannot_use(capsys):
    assert cli.main(["calibrate", "eps0", "--n", "1e5", "--k", "10", "--reports-per-user",
                     "2", "--epsilon", "1", "--delta", "1e-6"]) == 0
    out = capsys.readouterr().out
    assert "2 reports per user" in out and "k-fold/" in out
    code = cli.main(["calibrate", "users", "--mechanism", "rr:100", "--eps0", "4", "--honest",
                     "10", "--epsilon", "0.5", "--delta", "1e-6"])
    assert code == 2 and "--honest" in capsys.readouterr().err
