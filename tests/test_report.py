"""Report, scenario validation, sweeps and figures (smoke + content checks)."""

import csv
import json
import os

import pytest

from shuffledp import report, sweep, figures
from shuffledp.cli import main

SMALL = {"name": "small", "n": 2000, "eps0": [0.5, 2.0], "mechanisms": ["ldp", "rr:3"],
         "rounds": [1, 10], "n_grid": [1000, 5000], "orders": [2, 4, 8],
         "calibration": {"epsilon": 1.0, "rounds": 5}, "gaussian": None}


def test_report_small_scenario(tmp_path):
    info = report.build(SMALL, str(tmp_path))
    for f in ("report.md", "report.html", "eps_vs_eps0.csv", "eps_vs_n.csv",
              "eps_vs_rounds.csv", "rdp_curves.csv", "calibration.csv"):
        assert f in info["files"], f
    md = (tmp_path / "report.md").read_text()
    assert "upper" in md and "valid for" in md
    rows = list(csv.DictReader(open(tmp_path / "eps_vs_eps0.csv")))
    assert rows and all(r["kind"] in ("upper", "lower", "estimate") for r in rows)
    assert all(r["valid_for"] and r["scope"] for r in rows)
    # exactly one chosen upper bound per grid point
    chosen = {(r["mechanism"], r["eps0"]) for r in rows if r["chosen"] == "True"}
    assert len(chosen) == 4


@pytest.mark.parametrize("bad, words", [
    ({"colour": 1}, ["colour", "unknown"]),
    ({"n": "many"}, ["n", "integer"]),
    ({"n": 0}, ["n", "0"]),
    ({"delta": 1.5}, ["delta", "1.5"]),
    ({"eps0": [0.5, -1]}, ["eps0", "-1"]),
    ({"mechanisms": ["ldp", "xyz"]}, ["mechanisms", "xyz"]),
    ({"gaussian": {"sigma": -1}}, ["gaussian", "sigma"]),
    ({"gaussian": {"shade": 1}}, ["gaussian.shade"]),
    ({"orders": [1]}, ["orders"]),
])
def test_bad_scenarios_name_the_key(bad, words):
    with pytest.raises(ValueError) as exc:
        report.validate_scenario(bad)
    for w in words:
        assert w in str(exc.value)


def test_scenario_files_toml_and_json(tmp_path, capsys):
    t = tmp_path / "s.toml"
    t.write_text('n = "lots"\n')
    assert main(["report", "--scenario", str(t), "--out", str(tmp_path / "r")]) == 2
    assert "'n'" in capsys.readouterr().err
    j = tmp_path / "s.json"
    j.write_text(json.dumps({"bogus": 1}))
    assert main(["report", "--scenario", str(j), "--out", str(tmp_path / "r")]) == 2
    assert "bogus" in capsys.readouterr().err
    j.write_text("{not json")
    assert main(["report", "--scenario", str(j), "--out", str(tmp_path / "r")]) == 2


def test_sweep_rows_and_parallel_equivalence(tmp_path):
    pts = sweep.grid(mechanism=["ldp"], eps0=[0.5, 1.0], n=[1000], delta=[1e-6], rounds=[1])
    seq = sweep.run(pts, n_jobs=1, progress=False)
    assert len({(r["eps0"], r["bound"]) for r in seq}) == len(seq)
    pytest.importorskip("joblib")
    par = sweep.run(pts, n_jobs=2, progress=False)
    key = lambda r: (r["eps0"], r["bound"])
    assert [(key(r), r["epsilon"]) for r in sorted(seq, key=key)] == \
           [(key(r), r["epsilon"]) for r in sorted(par, key=key)]


def test_sweep_cli(tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["sweep", "--eps0", "0.5,1", "--n", "1000", "--delta", "1e-6", "--out", str(out)]) == 0
    rows = list(csv.DictReader(open(out)))
    assert {r["eps0"] for r in rows} == {"0.5", "1.0"}


def test_figure_unknown_name():
    with pytest.raises(ValueError, match="figure"):
        figures.make("nope", "x")


def test_figure_girgis_composition(tmp_path):
    info = figures.make("girgis-composition", str(tmp_path), progress=False)
    rows = list(csv.DictReader(open(info["csv"])))
    ub1 = [float(r["epsilon"]) for r in rows if r["series"] == "UB1 via RDP"]
    assert ub1 == sorted(ub1), "epsilon grows with the number of rounds"
