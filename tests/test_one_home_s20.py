"""Session 20 (one home per concept): where two callers now share one function, a test
that fails if what they share drifts apart again (or if the shared piece says something
else than each caller said before)."""

from __future__ import annotations

import math

import pytest

import shuffledp as sd
from shuffledp.accounting import calibrate as cal
from shuffledp.bounds import get
from shuffledp.bounds.base import PairBound
from shuffledp.bounds.clones import (OutsideCondition, fmt20_closed_condition,
                                     fmt20_closed_epsilon, fmt23_closed_condition,
                                     fmt23_closed_epsilon)

try:
    import dp_accounting  # noqa: F401
    HAVE_PLD = True
except Exception:     # pragma: no cover - the optional extra
    HAVE_PLD = False
needs_pld = pytest.mark.skipif(not HAVE_PLD, reason="needs dp_accounting (extra 'pld')")


# ----------------------------------------------------------------------------------------
# bounds: the closed forms' thresholds (the condition and the refusal state one number)
# ----------------------------------------------------------------------------------------
def test_fmt20_closed_refusal_states_the_threshold_the_condition_uses():
    n, delta = 10_000, 1e-6
    cap = math.log(n / (16.0 * math.log(4.0 / delta)))      # log(n / (16 log(4/δ)))
    assert fmt20_closed_condition(cap * (1 - 1e-9), n, delta)
    assert not fmt20_closed_condition(cap * (1 + 1e-9), n, delta)
    with pytest.raises(OutsideCondition) as ei:
        fmt20_closed_epsilon(cap * 1.01, n, delta)
    stated = float(str(ei.value).split(" = ")[1].split(";")[0])
    assert stated == pytest.approx(cap, rel=1e-5)


def test_fmt23_closed_refusal_states_the_threshold_the_condition_uses():
    eps0, delta = 1.0, 1e-6
    need = 8.0 * (math.e + 1.0) * math.log(4.0 / delta)      # n > 8 (e^ε0 + 1) log(4/δ)
    assert fmt23_closed_condition(eps0, math.ceil(need * (1 + 1e-9)), delta)
    assert not fmt23_closed_condition(eps0, math.floor(need), delta)
    with pytest.raises(OutsideCondition) as ei:
        fmt23_closed_epsilon(eps0, math.floor(need), delta)
    stated = float(str(ei.value).split(" = ")[1].split(";")[0])
    assert stated == pytest.approx(need, rel=1e-5)


# ----------------------------------------------------------------------------------------
# bounds: every pair bound answers through its pair (PairBound), add/remove ones alike
# ----------------------------------------------------------------------------------------
AR = "add_or_remove_one"


@pytest.mark.parametrize("bound_id,proto", [
    ("fmt20", sd.Shuffle(sd.LDP(1.0), 2000)),
    ("fmt23", sd.Shuffle(sd.RandomizedResponse(1.0, 3), 2000)),
    ("fmt20-addremove", sd.Shuffle(sd.LDP(1.0), 2000, sampling=sd.CheckIn(0.5))),
    ("blanket-addremove", sd.Shuffle(sd.RandomizedResponse(1.0, 3), 2000,
                                     sampling=sd.CheckIn(0.5))),
])
def test_pair_bounds_answer_with_their_pairs_numbers(bound_id, proto):
    b = get(bound_id)
    assert isinstance(b, PairBound) and b.has_dp and hasattr(b, "pld_atoms")
    pair = b.pair(proto)
    assert b.delta_one(proto, 0.2) == pair.delta(0.2) > 0.0
    assert b.epsilon_one(proto, 1e-6) == pair.epsilon(1e-6) > 0.0
    assert b.eps_hi(proto) == pair.eps_hi()
    # The single-round ε is an ε at which the pair's own δ is at most the asked δ.
    assert pair.delta(b.epsilon_one(proto, 1e-6)) <= 1e-6


@pytest.mark.parametrize("bound_id,cap", [("fmt20-addremove", 10**8),
                                          ("blanket-addremove", 10**8)])
def test_add_remove_pair_bounds_say_where_they_were_evaluated(bound_id, cap):
    b = get(bound_id)
    big = sd.Shuffle(sd.RandomizedResponse(1.0, 3), 10**9, sampling=sd.CheckIn(0.5))
    details = {}
    b.annotate(details, big, 1)
    assert details["users"] == (f"evaluated at n = 1e+08 users: the bound at fewer users "
                                f"holds at n = {10**9} (the others' reports can be simulated "
                                "and shuffled in)")
    assert b.max_n == cap
    small, details = sd.Shuffle(sd.RandomizedResponse(1.0, 3), cap, sampling=sd.CheckIn(0.5)), {}
    b.annotate(details, small, 1)
    assert details == {}
    # Infinite loss has positive probability under add/remove (the count of reports).
    assert b.pure_epsilon(small) is None
    assert b.relations == (AR,) and "Renyi divergence is infinite" in b.no_rdp_reason


# ----------------------------------------------------------------------------------------
# central events: one PLD constructor for both relations
# ----------------------------------------------------------------------------------------
def _gauss_delta(mu, eps):
    """δ(ε) of N(0, 1) vs N(μ, 1) (Balle & Wang 2018, Thm 8), in closed form."""
    from scipy.stats import norm
    return norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu)


@needs_pld
@pytest.mark.parametrize("relation,shift", [("replace_one", 2.0), (AR, 1.0)])
def test_central_gaussian_and_laplace_shift_by_relation(relation, shift):
    from dp_accounting import dp_event as E
    z, b, eps = 3.0, 4.0, 0.2
    got = sd.Accountant(relation=relation).compose(E.GaussianDpEvent(z), 2).delta(eps).delta
    exact = _gauss_delta(shift * math.sqrt(2) / z, eps)      # 2 rounds: σ/√2
    assert exact <= got <= exact + 2e-3
    got = sd.Accountant(relation=relation).compose(E.LaplaceDpEvent(b), 1).delta(eps).delta
    s = shift / b
    exact = -math.expm1((eps - s) / 2.0)                     # Laplace hockey-stick, ε < s
    assert exact <= got <= exact + 2e-3


@needs_pld
def test_sampled_laplace_has_no_replace_one_pld_even_when_asked_directly():
    from dp_accounting import dp_event as E
    from shuffledp.accounting.central import EventViews
    from shuffledp.core.errors import NotApplicableError
    ev = E.PoissonSampledDpEvent(0.1, E.LaplaceDpEvent(1.0))
    with pytest.raises(NotApplicableError, match="no PLD under REPLACE_ONE"):
        EventViews(ev).dp.epsilon_of(1e-6)
    assert EventViews(ev, AR).dp.epsilon_of(1e-6) > 0.0


# ----------------------------------------------------------------------------------------
# deployments: the export and the answer build the same reduced ledger
# ----------------------------------------------------------------------------------------
def test_export_ledger_is_the_answers_ledger_for_the_same_reduction():
    from shuffledp.accounting import deployment
    from shuffledp.accounting.accountant import ask_protocol
    p = sd.Shuffle(sd.RandomizedResponse(2.0, 10), 10_000, reports_per_user=2)
    acc = sd.Accountant().compose(p, 3, label="dep").compose(sd.Shuffle(sd.LDP(1.0), 1000), 2,
                                                           label="plain")
    plain = deployment.plain_ledger(acc, ask_protocol)
    assert [(e.label, e.rounds, e.item) for e in plain.entries] == [
        ("dep [reduction k-fold: " + sd.Shuffle(sd.RandomizedResponse(2.0, 10), 10_000).describe()
         + "]", 6, sd.Shuffle(sd.RandomizedResponse(2.0, 10), 10_000)),
        ("plain", 2, sd.Shuffle(sd.LDP(1.0), 1000))]
    rows = {n: val for n, val, _, _ in acc.epsilon(1e-6).composers}
    mine = {n: val for n, val, _, _ in plain.epsilon(1e-6).composers}
    assert mine["pld"] is not None and rows["[k-fold] pld"] == mine["pld"]
    assert rows["[k-fold] rdp"] == mine["rdp"]


# ----------------------------------------------------------------------------------------
# calibration: the runner-up search repeats the calibration's own arguments
# ----------------------------------------------------------------------------------------
def test_runner_up_search_repeats_the_calibrations_arguments():
    calls = []
    proto = sd.Shuffle(sd.LDP(1.0), 100)

    def fake(n, epsilon, *, tol=1e-5, deploy=None, run):
        calls.append((n, epsilon, tol, deploy, run.only))
        bound = run.only or "fmt20"
        return cal.Calibration("eps0", {"fmt20": 2.0, "a": 1.5, "b": 1.7}[bound], 0.9, 1.0,
                               1e-6, 1, bound, None if run.only else "a", None, proto,
                               _rivals=() if run.only else ("a", "b"))

    c = cal._with_runner_up(fake, None, 100, 1.0, tol=1e-5, rival_tol=1e-3,
                            deploy={"dummies": 5})
    assert calls == [(100, 1.0, 1e-5, {"dummies": 5}, None)]
    assert c.runner_up == "b" and c.runner_up_value == 1.7
    assert calls[1:] == [(100, 1.0, 1e-3, {"dummies": 5}, "a"),
                         (100, 1.0, 1e-3, {"dummies": 5}, "b")]
    calls.clear()
    c = cal._with_runner_up(fake, None, 100, 1.0, deploy=None)
    assert c.runner_up_value == 1.7 and [t[2] for t in calls] == [1e-5, 1e-5, 1e-5]


# ----------------------------------------------------------------------------------------
# CLI: the epsilon and delta questions take the same options after their target
# ----------------------------------------------------------------------------------------
def test_epsilon_and_delta_commands_take_the_same_question_options():
    from shuffledp.apps.cli import build_parser
    ap = build_parser("epsilon")
    sub = next(a for a in ap._actions if a.dest == "cmd")

    def options(cmd):
        return [(a.option_strings, a.default, a.choices, a.help)
                for a in sub.choices[cmd]._actions if a.dest not in ("delta", "epsilon")]

    eps, dlt = options("epsilon"), options("delta")
    assert eps == dlt
    flags = {s for o in eps for s in o[0]}
    assert {"--composition", "--lower", "--relation", "--reports-per-user", "--dummies",
            "--honest", "--dummy-distribution"} <= flags


# ----------------------------------------------------------------------------------------
# fl-demo: one run and the trade-off describe their training with the same rows
# ----------------------------------------------------------------------------------------
def test_fl_summaries_share_the_training_rows():
    from shuffledp.apps.fl.demo import _training_setting
    from shuffledp.apps.fl.sim import TrainConfig
    cfg = TrainConfig(rounds=6, clip=0.5, lr=3.0, seed=7, model="mlp", hidden=16,
                      fast_noise=True)
    assert _training_setting(cfg, 1e-5) == {
        "clip norm C": 0.5, "learning rate": 3.0, "model": "mlp (hidden 16)", "seed": 7,
        "delta": 1e-5, "noise simulation": "one draw for the average (same law as per-user "
                                           "noise)"}
    slow = TrainConfig(rounds=6, fast_noise=False)
    assert _training_setting(slow, 1e-6)["noise simulation"] == "each user adds its own noise"
