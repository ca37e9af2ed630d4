"""Ledgers under one neighbouring relation (sd.Accountant(relation=...), docs/relations.md).

Independent checks: sd.epsilon under the same relation (one shuffled entry), dp_accounting's
own PLD accountant under ADD_OR_REMOVE_ONE (central events), closed-form Gaussian RDP, and
the refusals (every user reporting, a mix of relations).
"""

import json

import pytest

import shuffledp as sd
from shuffledp.compose import composition as comp
from shuffledp.core.errors import NotApplicableError

needs_pld = pytest.mark.skipif(comp.pld_unavailable_reason() is not None,
                               reason="dp-accounting (the pld extra) is not installed")

AR = "add_or_remove_one"
LDP_P = sd.Shuffle(sd.LDP(1.0), 10_000, sampling=sd.CheckIn(0.5))


def test_one_entry_add_remove_ledger_is_sd_epsilon():
    r = sd.Accountant(relation=AR).compose(LDP_P, 3).epsilon(1e-6)
    s = sd.epsilon(LDP_P, 1e-6, 3, relation=AR)
    assert r.epsilon == s.epsilon and r.bound == "fmt20-addremove"
    assert r.relation.startswith("add_or_remove_one")
    # not the replace-one number
    assert r.epsilon != sd.Accountant().compose(LDP_P, 3).epsilon(1e-6).epsilon
    d = sd.Accountant(relation=AR).compose(LDP_P, 3).delta(0.1)
    assert d.delta == sd.delta(LDP_P, 0.1, 3, relation=AR).delta


def test_relation_values_and_default():
    assert sd.Accountant().relation == "replace_one"
    assert sd.Accountant(relation="add-or-remove-one").relation == AR
    with pytest.raises(ValueError, match="relation must be one of"):
        sd.Accountant(relation="add")
    dpa = pytest.importorskip("dp_accounting")
    assert sd.Accountant(relation=dpa.NeighboringRelation.ADD_OR_REMOVE_ONE).relation == AR
    # the default ledger's answer is unchanged (the one-entry identity with sd.epsilon)
    p = sd.Shuffle(sd.LDP(1.0), n=10_000)
    assert sd.Accountant().compose(p, 10).epsilon(1e-6).epsilon == \
        sd.epsilon(p, 1e-6, 10).epsilon


def test_everyone_reporting_refused_when_composed():
    with pytest.raises(NotApplicableError, match="number of reports reveals"):
        sd.Accountant(relation=AR).compose(sd.Shuffle(sd.LDP(1.0), 1000))


@needs_pld
def test_central_gaussian_under_add_remove_matches_dp_accounting():
    import dp_accounting as dpa
    from dp_accounting import dp_event as E
    from dp_accounting.pld import pld_privacy_accountant as P
    ev = E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.1))
    acc = sd.Accountant(relation=AR).compose(ev, 500)
    ours = acc.epsilon(1e-6).epsilon
    ref = P.PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
                          value_discretization_interval=1e-4)
    ref.compose(ev, 500)
    exact = ref.get_epsilon(1e-6)
    assert exact * (1 - 1e-3) <= ours <= exact * 1.05
    # replacement is a different (larger) question for the same event
    assert sd.Accountant().compose(ev, 500).epsilon(1e-6).epsilon > ours * 1.2


@needs_pld
def test_central_gaussian_rdp_under_add_remove_is_the_closed_form():
    from dp_accounting import dp_event as E
    z = 2.0
    c = sd.Accountant(relation=AR).compose(E.GaussianDpEvent(z), 3).rdp([2.0, 8.0])
    # N(0, z²) vs N(1, z²): D_λ = λ / (2 z²) per round (Mironov 2017, Prop. 7)
    assert list(c.values) == pytest.approx([3 * 2.0 / 8.0, 3 * 8.0 / 8.0], rel=1e-9)
    assert c.relation == AR
    c1 = sd.Accountant().compose(E.GaussianDpEvent(z), 3).rdp([2.0])
    assert c1.values[0] == pytest.approx(4 * c.values[0], rel=1e-9)   # shift 2 vs 1


@needs_pld
def test_mixed_add_remove_ledger_between_its_parts_and_their_sum():
    from dp_accounting import dp_event as E
    ev = E.PoissonSampledDpEvent(0.01, E.GaussianDpEvent(1.1))
    acc = sd.Accountant(relation=AR).compose(LDP_P, 3).compose(ev, 100)
    r = acc.epsilon(1e-6)
    assert r.relation.startswith("add_or_remove_one")
    assert [e.bound for e in r.entries] == ["fmt20-addremove",
                                            "dp_accounting:PoissonSampledDpEvent"]
    a = sd.epsilon(LDP_P, 1e-6, 3, relation=AR).epsilon
    b = sd.Accountant(relation=AR).compose(ev, 100).epsilon(1e-6).epsilon
    assert max(a, b) <= r.epsilon
    # basic composition with δ split is a valid (looser) bound
    a2 = sd.epsilon(LDP_P, 5e-7, 3, relation=AR).epsilon
    b2 = sd.Accountant(relation=AR).compose(ev, 100).epsilon(5e-7).epsilon
    assert r.epsilon <= a2 + b2


@needs_pld
def test_mixed_ledger_with_a_shuffled_gaussian_under_add_remove():
    from dp_accounting import dp_event as E
    g = sd.Shuffle(sd.Gaussian.from_noise_multiplier(5.0), 10_000, sampling=sd.CheckIn(0.1))
    acc = sd.Accountant(relation=AR).compose(g, 2).compose(E.GaussianDpEvent(8.0), 1)
    r = acc.epsilon(1e-5)
    assert r.entries[0].bound == "trimmed-clone-addremove"
    a = sd.epsilon(g, 1e-5, 2, relation=AR).epsilon
    a2 = sd.epsilon(g, 5e-6, 2, relation=AR).epsilon
    b2 = sd.Accountant(relation=AR).compose(E.GaussianDpEvent(8.0)).epsilon(5e-6).epsilon
    assert a <= r.epsilon <= a2 + b2


def test_composing_a_ledger_of_another_relation_is_refused():
    ar = sd.Accountant(relation=AR).compose(LDP_P, 2)
    with pytest.raises(ValueError, match="under relation='add_or_remove_one' into a ledger "
                                         "under relation='replace_one'"):
        sd.Accountant().compose(ar)
    # the same relation: its entries, repeated
    both = sd.Accountant(relation=AR).compose(ar, 2)
    assert [(e.item, e.rounds) for e in both.entries] == [(LDP_P, 4)]
    assert both.epsilon(1e-6).epsilon == sd.epsilon(LDP_P, 1e-6, 4, relation=AR).epsilon


def test_dict_round_trip_and_mixed_files_refused():
    acc = sd.Accountant(relation=AR).compose(LDP_P, 3)
    d = acc.to_dict()
    assert d["relation"] == AR
    back = sd.Accountant.from_dict(json.loads(json.dumps(d)))
    assert back.relation == AR and back.epsilon(1e-6).epsilon == acc.epsilon(1e-6).epsilon
    assert sd.Accountant().compose(LDP_P).to_dict()["relation"] == "replace-one"
    # an entry naming another relation than the file
    bad = dict(d, entries=[dict(d["entries"][0], relation="replace_one")])
    with pytest.raises(ValueError, match="names several"):
        sd.Accountant.from_dict(bad)
    # entries alone agreeing: the ledger takes their relation
    only = {k: x for k, x in d.items() if k != "relation"}
    only["entries"] = [dict(d["entries"][0], relation=AR)]
    assert sd.Accountant.from_dict(only).relation == AR
    with pytest.raises(ValueError, match="relation must be one of"):
        sd.Accountant.from_dict(dict(d, relation="neighbours"))


@needs_pld
def test_to_dp_accounting_under_add_remove():
    pld = sd.to_dp_accounting(LDP_P, 3, discretization=1e-4, relation=AR)
    ours = sd.epsilon(LDP_P, 1e-6, 3, relation=AR).epsilon
    got = pld.get_epsilon_for_delta(1e-6)
    # a pessimistic PLD of the same pair: at or just above the pair's own value
    assert ours * (1 - 1e-6) <= got <= ours + 3 * 1e-4 + 1e-6
    ro = sd.to_dp_accounting(LDP_P, 3, discretization=1e-4).get_epsilon_for_delta(1e-6)
    assert ro != pytest.approx(got, rel=1e-3)
    with pytest.raises(NotApplicableError, match="number of reports reveals"):
        sd.to_dp_accounting(sd.Shuffle(sd.LDP(1.0), 1000), relation=AR)


def test_compose_cli_relation(tmp_path, capsys):
    from shuffledp.apps.cli import main
    f = tmp_path / "l.toml"
    f.write_text('format = "shuffledp-ledger"\nversion = 1\nrelation = "add_or_remove_one"\n'
                 '[[entries]]\nrounds = 3\nshuffle = {n = 10000, mechanism = {type = "ldp", '
                 'eps0 = 1.0}, sampling = {checkin = 0.5}}\n')
    assert main(["compose", str(f), "--delta", "1e-6", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["relation"] == AR
    assert d["epsilon"] == sd.epsilon(LDP_P, 1e-6, 3, relation=AR).epsilon
    assert main(["compose", str(f), "--delta", "1e-6", "--relation", "replace_one"]) == 2
    assert "contradicts" in capsys.readouterr().err
    g = tmp_path / "r.toml"
    g.write_text(f.read_text().replace('relation = "add_or_remove_one"\n', ""))
    assert main(["compose", str(g), "--delta", "1e-6", "--relation", AR]) == 0
    assert "add_or_remove_one" in capsys.readouterr().out


@needs_pld
def test_calibrate_entry_keeps_the_ledger_relation():
    from dp_accounting import dp_event as E
    acc = sd.Accountant(relation=AR).compose(LDP_P, 2).compose(E.GaussianDpEvent(8.0), 1)
    c = sd.calibrate.entry(acc, 0, "rounds", epsilon=0.8, delta=1e-6)
    assert c.relation == AR
    T = int(c.value)
    at = sd.Accountant(relation=AR).compose(LDP_P, T).compose(E.GaussianDpEvent(8.0), 1)
    assert at.epsilon(1e-6).epsilon <= 0.8
    more = sd.Accountant(relation=AR).compose(LDP_P, T + 1).compose(E.GaussianDpEvent(8.0), 1)
    assert more.epsilon(1e-6).epsilon > 0.8


@needs_pld
def test_poisson_sampled_laplace_only_under_add_remove():
    import dp_accounting as dpa
    from dp_accounting import dp_event as E
    from dp_accounting.pld import pld_privacy_accountant as P
    ev = E.PoissonSampledDpEvent(0.05, E.LaplaceDpEvent(2.0))
    with pytest.raises(NotApplicableError, match="only a Poisson-sampled GaussianDpEvent"):
        sd.Accountant().compose(ev, 10)
    ours = sd.Accountant(relation=AR).compose(ev, 10).epsilon(1e-6).epsilon
    ref = P.PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
                          value_discretization_interval=1e-4)
    ref.compose(ev, 10)
    exact = ref.get_epsilon(1e-6)
    assert exact * (1 - 1e-3) <= ours <= exact * 1.05
