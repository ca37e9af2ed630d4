"""The command line: JSON shape of api.md, exit status 2 with a named message on bad input."""

import json

import pytest

from shuffledp.apps.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_epsilon_json_has_the_fields_of_api_md(capsys):
    code, out, err = run(capsys, "epsilon", "--eps0", "1", "--n", "100000", "--delta", "1e-6", "--json")
    assert code == 0 and err == ""
    obj = json.loads(out)   # exactly one JSON object
    assert {"epsilon", "delta", "rounds", "bound", "kind", "candidates"} <= set(obj)
    assert obj["kind"] == "upper" and obj["delta"] == 1e-6 and obj["rounds"] == 1
    assert obj["candidates"], "every applicable bound is listed"
    for c in obj["candidates"]:
        assert {"bound", "kind", "epsilon", "delta", "seconds", "valid_for"} <= set(c)
        assert c["kind"] in ("upper", "lower", "estimate")
    ups = [c["epsilon"] for c in obj["candidates"] if c["kind"] == "upper"]
    assert obj["epsilon"] <= min(ups) + 1e-15 or obj["epsilon"] in ups
    # The answer is no larger than the trivial bound eps0 = 1.
    assert 0 < obj["epsilon"] < 1


def test_epsilon_table_marks_the_chosen_bound(capsys):
    code, out, _ = run(capsys, "epsilon", "--eps0", "1", "--n", "10000", "--delta", "1e-6")
    assert code == 0
    assert "answer: epsilon =" in out
    assert any(line.startswith("*") for line in out.splitlines())


def test_delta_and_rdp_commands(capsys):
    code, out, _ = run(capsys, "delta", "--eps0", "1", "--n", "10000", "--epsilon", "0.5", "--json")
    obj = json.loads(out)
    assert code == 0 and 0 <= obj["delta"] <= 1 and obj["epsilon"] == 0.5
    code, out, _ = run(capsys, "rdp", "--eps0", "0.5", "--n", "1000", "--orders", "2,3",
                       "--bound", "girgis-ub1", "--json")
    obj = json.loads(out)
    assert code == 0 and obj["orders"] == [2.0, 3.0] and obj["bound"] == "girgis-ub1"
    # The Girgis et al. anchor (spec/girgis.md §1): UB1(0.5, 1000, 2) = 8.4206e-4.
    assert obj["values"][0] == pytest.approx(8.4206e-4, rel=1e-4)


@pytest.mark.parametrize("argv, names", [
    (["epsilon", "--eps0", "-1", "--n", "100", "--delta", "1e-6"], ["eps0", "-1"]),
    (["epsilon", "--eps0", "nan", "--n", "100", "--delta", "1e-6"], ["eps0", "nan"]),
    (["epsilon", "--eps0", "1", "--n", "0", "--delta", "1e-6"], ["n", "0"]),
    (["epsilon", "--eps0", "1", "--n", "2.5", "--delta", "1e-6"], ["n", "2.5"]),
    (["epsilon", "--eps0", "1", "--n", "100", "--delta", "0"], ["delta", "0"]),
    (["epsilon", "--eps0", "1", "--n", "100", "--delta", "1.5"], ["delta", "1.5"]),
    (["rdp", "--eps0", "1", "--n", "100", "--orders", "1"], ["order", "1"]),
    (["epsilon", "--eps0", "1", "--n", "100", "--delta", "1e-6", "--rounds", "0"], ["rounds", "0"]),
    (["epsilon", "--eps0", "1", "--n", "100", "--delta", "1e-6", "--mechanism", "bogus"], ["mechanism"]),
    (["epsilon", "--eps0", "1", "--n", "100", "--delta", "1e-6", "--bound", "nope"], ["bound", "nope"]),
    (["epsilon", "--n", "100", "--delta", "1e-6"], ["eps0"]),
])
def test_bad_input_exits_2_with_named_parameter(capsys, argv, names):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    for name in names:
        assert name in err


def test_not_applicable_bound_names_alternatives(capsys):
    code, _, err = run(capsys, "epsilon", "--eps0", "1", "--n", "1000", "--delta", "1e-6",
                       "--mechanism", "rr:3", "--bound", "girgis-lower")
    assert code == 2
    assert "krr-lower" in err and "Bounds that apply" in err


def test_bounds_listing(capsys):
    code, out, _ = run(capsys, "bounds", "--json")
    rows = json.loads(out)
    ids = {r["bound"] for r in rows}
    assert {"trivial", "girgis-ub1", "girgis-lower"} <= ids
    assert all(r["kind"] in ("upper", "lower", "estimate") for r in rows)


def test_gaussian_epsilon_prints_note_and_central_baselines(capsys):
    """The CLI explains upper vs estimate in one line and shows dp_accounting's baselines."""
    pytest.importorskip("dp_accounting")
    code = main(["epsilon", "--mechanism", "gaussian:5", "--n", "6000", "--checkin", "0.1",
                 "--rounds", "50", "--delta", "1e-5"])
    out = capsys.readouterr().out
    assert code == 0
    assert "note: 'upper' rows hold for every pair" in out
    # The baselines paragraph is wrapped at 88 columns: read it as one line.
    line = " ".join(out[out.index("central baselines"):].split())
    assert "add/remove" in line and "trusted server" in line and "1e-05" in line
    assert "replace-one" in line and "same noise multiplier 10" in line
    import re
    rdp_e, pld_e, pld_rep = (float(x) for x in re.findall(r"epsilon = ([0-9.]+)", line))
    assert 0 < pld_e <= rdp_e      # PLD accounting is never looser than RDP for this event
    # gaussian:5 is sigma 5 per unit diameter = noise multiplier 10: the baselines are
    # dp_accounting's own numbers for GaussianDpEvent(10), not for GaussianDpEvent(5).
    import dp_accounting as dpa
    from dp_accounting import pld, rdp
    ev = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(10.0)), 50)
    ref = {}
    for key, acc in (("rdp", rdp.RdpAccountant()), ("pld", pld.PLDAccountant()),
                     ("rep", pld.PLDAccountant(
                         neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE))):
        acc.compose(ev)
        ref[key] = acc.get_epsilon(1e-5)
    assert rdp_e == pytest.approx(ref["rdp"], rel=1e-3)
    assert pld_e == pytest.approx(ref["pld"], rel=1e-3)
    assert pld_rep == pytest.approx(ref["rep"], rel=1e-3)
    code = main(["epsilon", "--mechanism", "gaussian:5", "--n", "6000", "--checkin", "0.1",
                 "--rounds", "50", "--delta", "1e-5", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert d["central_baselines"]["rdp"] == pytest.approx(rdp_e, rel=1e-3)
    assert d["noise"]["noise_multiplier"] == 10.0 and d["noise"]["sigma_per_unit_diameter"] == 5.0
