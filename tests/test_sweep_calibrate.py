"""Calibration grids: `shuffledp sweep --calibrate eps0|sigma|rounds|users --epsilon ...`
(docs/scale.md) — one row per point with the calibrated value on the certified side, the
same rows from a Dask cluster, resuming, and bad input refused before anything runs."""

from __future__ import annotations

import csv

import pytest

import shuffledp as sd
from shuffledp.apps import sweep
from shuffledp.apps.cli import main

CAL = ["--calibrate", "eps0", "--epsilon", "0.5,1", "--mechanism", "ldp,rr:3",
       "--n", "2000", "--delta", "1e-6"]


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


@pytest.fixture(scope="module")
def cal_csv(tmp_path_factory):
    out = tmp_path_factory.mktemp("cal") / "c.csv"
    assert main(["sweep", *CAL, "--out", str(out)]) == 0
    return out


def test_one_row_per_point_with_a_certified_value(cal_csv):
    rows = _rows(cal_csv)
    assert list(rows[0]) == sweep.CAL_FIELDS
    assert [(r["target_epsilon"], r["mechanism"]) for r in rows] == [
        ("0.5", "ldp"), ("0.5", "rr:3"), ("1.0", "ldp"), ("1.0", "rr:3")]
    for r in rows:
        assert r["calibrate"] == "eps0" and r["eps0"] == "" and r["kind"] == "upper"
        e0, target = float(r["value"]), float(r["target_epsilon"])
        mech = sd.LDP(e0) if r["mechanism"] == "ldp" else sd.RandomizedResponse(e0, 3)
        # the certified side, checked by asking the accountant at the value itself
        got = sd.epsilon(sd.Shuffle(mech, n=2000), delta=1e-6).epsilon
        assert got <= target and float(r["epsilon"]) <= target
        # and the value is not far from the boundary: 1 % more eps0 breaks the target
        mech2 = (sd.LDP(e0 * 1.01) if r["mechanism"] == "ldp"
                 else sd.RandomizedResponse(e0 * 1.01, 3))
        assert sd.epsilon(sd.Shuffle(mech2, n=2000), delta=1e-6).epsilon > target
        # what it is valid for: the accountant's own statement at the value
        assert r["valid_for"] == sd.epsilon(sd.Shuffle(mech, n=2000), delta=1e-6).valid_for
    by = {(r["target_epsilon"], r["mechanism"]): float(r["value"]) for r in rows}
    # a larger target allows a larger eps0; 3-RR's own bounds allow more than any LDP
    assert by["1.0", "ldp"] > by["0.5", "ldp"] and by["1.0", "rr:3"] > by["1.0", "ldp"]


def test_the_row_is_the_calibration_of_the_python_api(cal_csv):
    c = sd.calibrate.eps0(2000, 1.0, 1e-6, k=3)
    row = [r for r in _rows(cal_csv) if r["mechanism"] == "rr:3" and r["target_epsilon"] == "1.0"]
    assert float(row[0]["value"]) == c.value and row[0]["bound"] == c.bound


def test_sigma_rows_carry_the_noise_multiplier(tmp_path):
    out = tmp_path / "s.csv"
    assert main(["sweep", "--calibrate", "sigma", "--epsilon", "2", "--n", "500",
                 "--checkin", "0.5", "--delta", "1e-5", "--out", str(out)]) == 0
    (r,) = _rows(out)
    assert r["mechanism"] == "gaussian" and r["sigma"] == "" and r["sampling"] == "checkin:0.5"
    assert float(r["value_noise_multiplier"]) == 2 * float(r["value"])
    got = sd.epsilon(sd.Shuffle(sd.Gaussian(float(r["value"])), n=500,
                                sampling=sd.CheckIn(0.5)), delta=1e-5).epsilon
    assert got <= 2.0


def test_rounds_and_users(tmp_path):
    out = tmp_path / "r.csv"
    assert main(["sweep", "--calibrate", "rounds", "--epsilon", "1", "--eps0", "0.5",
                 "--n", "2000", "--delta", "1e-6", "--out", str(out)]) == 0
    (r,) = _rows(out)
    T = int(float(r["value"]))
    P = sd.Shuffle(sd.LDP(0.5), n=2000)
    assert r["rounds"] == "" and T >= 1
    assert sd.epsilon(P, 1e-6, rounds=T).epsilon <= 1.0 < sd.epsilon(P, 1e-6, rounds=T + 1).epsilon
    out = tmp_path / "u.csv"
    assert main(["sweep", "--calibrate", "users", "--epsilon", "1", "--eps0", "2",
                 "--delta", "1e-6", "--out", str(out)]) == 0
    (r,) = _rows(out)
    n = int(float(r["value"]))
    assert r["n"] == "" and sd.epsilon(sd.Shuffle(sd.LDP(2.0), n=n), 1e-6).epsilon <= 1.0


def test_resume_skips_calibrated_points(cal_csv, tmp_path, capsys):
    out = tmp_path / "c.csv"
    rows = cal_csv.read_text().splitlines(keepends=True)
    out.write_text("".join(rows[:3]))                       # header + 2 of 4 points
    assert main(["sweep", *CAL, "--out", str(out), "--json"]) == 0
    assert '"skipped": 2' in capsys.readouterr().out
    assert _strip(_rows(out)) == _strip(_rows(cal_csv))


def test_dask_cluster_gives_the_sequential_rows(cal_csv, tmp_path):
    distributed = pytest.importorskip("distributed")
    out = tmp_path / "d.csv"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:
        assert main(["sweep", *CAL, "--backend", "dask", "--scheduler",
                     cluster.scheduler_address, "--out", str(out)]) == 0
    assert _strip(_rows(out)) == _strip(_rows(cal_csv))


@pytest.mark.parametrize("argv, words", [
    (["--calibrate", "eps0", "--eps0", "1", "--n", "1e4", "--epsilon", "1"], ["drop --eps0"]),
    (["--calibrate", "sigma", "--sigma", "1", "--n", "1e4", "--epsilon", "1"], ["drop --sigma"]),
    (["--calibrate", "users", "--n", "1e4", "--eps0", "1", "--epsilon", "1"], ["drop --n"]),
    (["--calibrate", "rounds", "--n", "1e4", "--epsilon", "1"], ["--eps0"]),
    (["--calibrate", "rounds", "--n", "1e4", "--epsilon", "1", "--sigma", "1",
      "--noise-multiplier", "2"], ["--sigma", "--noise-multiplier"]),
    (["--calibrate", "sigma", "--n", "1e4", "--epsilon", "1", "--mechanism", "rr:3"],
     ["--calibrate sigma", "--mechanism"]),
    (["--calibrate", "eps0", "--n", "1e4"], ["--epsilon"]),
    (["--calibrate", "eps0", "--n", "1e4", "--epsilon", "0"], ["epsilon", "0.0"]),
    (["--calibrate", "eps0", "--n", "1e4", "--epsilon", "1", "--mechanism", "gaussian:1"],
     ["mechanism", "gaussian:1"]),
    (["--n", "1e4", "--epsilon", "1", "--eps0", "1"], ["--calibrate"]),
    (["--calibrate", "eps0", "--n", "1e4", "--epsilon", "1", "--lower"], ["--lower"]),
])
def test_bad_calibration_grids_exit_2_before_anything_is_written(argv, words, tmp_path,
                                                                  capsys):
    out = tmp_path / "bad.csv"
    assert main(["sweep", *argv, "--delta", "1e-6", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words), err
    assert not out.exists()
