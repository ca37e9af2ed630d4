"""`shuffledp sweep`: upper bounds by default, sampling and Gaussian axes, rows streamed to
the CSV in grid order, resuming, and the same rows from every backend (docs/scale.md)."""

from __future__ import annotations

import csv
import json

import pytest

import shuffledp as sd
from shuffledp.apps import sweep
from shuffledp.apps.cli import main

SMALL = ["--eps0", "0.5,1", "--n", "1000,3000", "--delta", "1e-6", "--rounds", "1,4"]


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _strip(rows):
    """Rows without the timing column (the only one that may differ between runs)."""
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


@pytest.fixture(scope="module")
def small_csv(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "s.csv"
    assert main(["sweep", *SMALL, "--out", str(out)]) == 0
    return out


def test_default_sweep_is_upper_bounds_only_and_lower_adds_the_rest(small_csv, tmp_path):
    rows = _rows(small_csv)
    assert {r["kind"] for r in rows} == {"upper"}
    assert {r["lower"] for r in rows} == {"False"}
    low = tmp_path / "low.csv"
    assert main(["sweep", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--lower",
                 "--out", str(low)]) == 0
    kinds = {r["kind"] for r in _rows(low)}
    assert "lower" in kinds and "upper" in kinds
    # The answer does not depend on whether lower bounds were computed beside it.
    chosen = lambda rs: [(r["eps0"], r["n"], r["rounds"], r["bound"], r["epsilon"])
                         for r in rs if r["chosen"] == "True"]
    assert chosen(_rows(low)) == [c for c in chosen(rows) if c[:3] == ("1.0", "1000", "1")]


def test_help_says_upper_bounds_only_and_lower(capsys):
    assert main(["sweep", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "only the upper bounds" in out and "--lower" in out
    for flag in ("--checkin", "--sample-size", "--sigma", "--noise-multiplier", "--scheduler",
                 "--address", "--backend", "--overwrite"):
        assert flag in out, flag


def test_rows_come_in_grid_order_with_one_chosen_answer_per_point(small_csv):
    rows = _rows(small_csv)
    keys = [(float(r["eps0"]), int(r["n"]), int(r["rounds"])) for r in rows]
    assert keys == sorted(keys)                    # eps0, then n, then rounds (fastest)
    assert len(set(keys)) == 8
    for k in set(keys):
        assert sum(r["chosen"] == "True" for r, kk in zip(rows, keys) if kk == k) == 1


def test_quiet_when_not_a_terminal_and_json_summary(tmp_path, capsys):
    out = tmp_path / "s.csv"
    assert main(["sweep", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--out", str(out),
                 "--json"]) == 0
    cap = capsys.readouterr()
    assert cap.err == ""
    summary = json.loads(cap.out)
    assert summary["points"] == 1 and summary["grid_points"] == 1
    assert summary["rows"] == len(_rows(out))


def test_progress_bar_when_asked(tmp_path, capsys):
    pytest.importorskip("tqdm")
    sweep.to_csv(sweep.Grid(eps0=[1.0], n=[1000], delta=[1e-6], lower=[False]),
                 tmp_path / "s.csv", progress=True, desc="my sweep")
    assert "my sweep" in capsys.readouterr().err


# -- axes ---------------------------------------------------------------------------------
def test_noise_multiplier_is_sigma_over_two(tmp_path):
    a, b = tmp_path / "z.csv", tmp_path / "s.csv"
    common = ["--n", "5000", "--delta", "1e-5", "--rounds", "1,10"]
    assert main(["sweep", "--noise-multiplier", "1,3", *common, "--out", str(a)]) == 0
    assert main(["sweep", "--sigma", "0.5,1.5", *common, "--out", str(b)]) == 0
    za, sb = _rows(a), _rows(b)
    assert [r["sigma"] for r in za] == [r["sigma"] for r in sb]
    assert {r["sigma"] for r in za} == {"0.5", "1.5"}
    assert {r["noise_multiplier"] for r in za} == {"1.0", "3.0"}
    assert [(r["bound"], r["epsilon"]) for r in za] == [(r["bound"], r["epsilon"]) for r in sb]
    assert {r["mechanism"] for r in za} == {"gaussian"} and {r["eps0"] for r in za} == {""}


def test_sampling_axes_amplify(tmp_path):
    out = tmp_path / "c.csv"
    assert main(["sweep", "--eps0", "1", "--n", "2000", "--delta", "1e-6",
                 "--checkin", "0.05,0.5", "--out", str(out)]) == 0
    ans = {r["sampling"]: float(r["epsilon"]) for r in _rows(out) if r["chosen"] == "True"}
    assert set(ans) == {"checkin:0.05", "checkin:0.5"}
    assert 0 < ans["checkin:0.05"] < ans["checkin:0.5"]       # rarer check-in, less leakage
    out = tmp_path / "w.csv"
    assert main(["sweep", "--eps0", "1", "--n", "2000", "--delta", "1e-6",
                 "--sample-size", "100,1000", "--out", str(out)]) == 0
    ans = {r["sampling"]: float(r["epsilon"]) for r in _rows(out) if r["chosen"] == "True"}
    assert set(ans) == {"wor:100", "wor:1000"}
    assert 0 < ans["wor:100"] < ans["wor:1000"]


def test_deployment_axes_give_the_deployments_answers(tmp_path):
    """--reports-per-user / --dummies / --honest: each point's chosen row is sd.epsilon of
    that deployment (docs/deployments.md), labelled by its reduction."""
    out = tmp_path / "d.csv"
    assert main(["sweep", "--mechanism", "rr:10", "--eps0", "2", "--n", "2000", "--delta",
                 "1e-6", "--reports-per-user", "1,2", "--dummies", "0,500", "--honest",
                 "2000,1000", "--out", str(out)]) == 0
    chosen = [r for r in _rows(out) if r["chosen"] == "True"]
    assert len(chosen) == 8
    for r in chosen:
        k, d, h = int(r["reports_per_user"]), int(r["dummies"]), int(r["honest"])
        want = sd.epsilon(sd.Shuffle(sd.RandomizedResponse(2.0, k=10), 2000,
                                     reports_per_user=k, dummies=d, honest=h), 1e-6)
        assert float(r["epsilon"]) == want.epsilon and r["bound"] == want.bound
    ans = {(r["reports_per_user"], r["dummies"], r["honest"]): float(r["epsilon"])
           for r in chosen}
    assert ans[("2", "0", "2000")] > ans[("1", "0", "2000")]      # more reports leak more
    assert ans[("1", "500", "2000")] < ans[("1", "0", "2000")]    # dummies hide
    assert ans[("1", "0", "1000")] > ans[("1", "0", "2000")]      # colluders reveal


@pytest.mark.parametrize("argv, words", [
    (["--eps0", "1", "--honest", "2000"], ["honest", "n=1000", "2000"]),
    (["--eps0", "1", "--reports-per-user", "0"], ["reports_per_user", "0"]),
    (["--eps0", "1", "--checkin", "0.1", "--sample-size", "10"], ["--checkin", "--sample-size"]),
    (["--sigma", "1", "--noise-multiplier", "2"], ["--sigma", "--noise-multiplier"]),
    (["--eps0", "1", "--sigma", "1"], ["--eps0"]),
    (["--mechanism", "rr:3", "--noise-multiplier", "1"], ["--mechanism"]),
    (["--noise-multiplier", "0"], ["noise_multiplier", "(0, inf)", "0"]),
    (["--eps0", "1", "--checkin", "1.5"], ["rate", "1.5"]),
    (["--eps0", "1", "--backend", "dask"], ["--scheduler", "DASK_SCHEDULER_ADDRESS"]),
    (["--eps0", "1", "--backend", "loky"], ["--jobs"]),
    (["--eps0", "1", "--backend", "dask", "--scheduler", "local:2", "--jobs", "2"], ["--jobs"]),
    (["--eps0", "1", "--scheduler", "local:2", "--backend", "ray"], ["--scheduler", "dask"]),
    (["--eps0", "1", "--address", "auto", "--backend", "loky", "--jobs", "2"], ["--address"]),
    (["--eps0", "1", "--scheduler", "local:0"], ["local:N"]),
])
def test_bad_options_exit_2_before_anything_is_written(argv, words, tmp_path, capsys,
                                                       monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    out = tmp_path / "s.csv"
    assert main(["sweep", "--n", "1000", "--delta", "1e-6", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for w in words:
        assert w in err, (w, err)
    assert not out.exists()


# -- streaming and resuming -----------------------------------------------------------------
def test_each_point_is_on_disk_before_the_next_is_taken(tmp_path):
    """Memory flat in the number of points: the grid is read lazily and a point's rows are
    in the file before the following point is even generated."""
    out = tmp_path / "s.csv"
    seen = []

    def points():
        for i, e0 in enumerate([0.5, 1.0, 1.5, 2.0]):
            if i:
                on_disk = {r["eps0"] for r in _rows(out)}
                assert str(seen[-1]) in on_disk
            seen.append(e0)
            yield {"eps0": e0, "n": 1000, "delta": 1e-6, "lower": False}
    s = sweep.to_csv(points(), out, progress=False)
    assert s["points"] == 4 and len({r["eps0"] for r in _rows(out)}) == 4


def test_resume_skips_points_already_written(small_csv, tmp_path, capsys):
    out = tmp_path / "s.csv"
    rows = _rows(small_csv)
    # A marker in a row already written: if that point were computed again, it would go.
    rows[0]["valid_for"] = "MARKER"
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=sweep.FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    argv = ["sweep", "--eps0", "0.5,1,2", "--n", "1000,3000", "--delta", "1e-6",
            "--rounds", "1,4", "--out", str(out), "--json"]
    assert main(argv) == 0
    s = json.loads(capsys.readouterr().out)
    assert (s["skipped"], s["points"], s["grid_points"]) == (8, 4, 12)
    got = _rows(out)
    assert got[0]["valid_for"] == "MARKER"
    assert _strip(got[1:len(rows)]) == _strip(rows[1:])
    assert {r["eps0"] for r in got[len(rows):]} == {"2.0"}
    assert main(argv) == 0                                      # nothing left to do
    assert json.loads(capsys.readouterr().out)["points"] == 0
    assert _rows(out) == got
    # --overwrite starts over; --lower is not answered by points computed without it.
    assert main(argv[:-1] + ["--lower", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["points"] == 12


def test_a_cut_last_line_is_computed_again(small_csv, tmp_path):
    out = tmp_path / "s.csv"
    data = small_csv.read_bytes()
    out.write_bytes(data[:-25])                     # stopped in the middle of the last row
    assert main(["sweep", *SMALL, "--out", str(out)]) == 0
    assert _strip(_rows(out)) == _strip(_rows(small_csv))


def test_resume_refuses_a_file_with_other_columns(tmp_path, capsys):
    out = tmp_path / "s.csv"
    out.write_text("a,b\n1,2\n")
    assert main(["sweep", "--eps0", "1", "--n", "1000", "--delta", "1e-6",
                 "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert out.read_text() == "a,b\n1,2\n"
    assert main(["sweep", "--eps0", "1", "--n", "1000", "--delta", "1e-6",
                 "--out", str(out), "--overwrite"]) == 0
    assert _rows(out)[0]["eps0"] == "1.0"


# -- backends --------------------------------------------------------------------------------
def test_grid_is_lazy_and_sized():
    g = sweep.Grid(eps0=[0.5, 1.0], n=[10, 20, 30], delta=1e-6)
    assert len(g) == 6 and list(g) == sweep.grid(eps0=[0.5, 1.0], n=[10, 20, 30], delta=1e-6)
    assert list(g)[1] == {"eps0": 0.5, "n": 20, "delta": 1e-6}


def test_parallel_tasks_keep_a_protocol_together_in_grid_order():
    pts = list(sweep.Grid(eps0=[1.0, 2.0], n=[1000], rounds=[1, 2, 3], delta=1e-6))
    tasks = list(sweep._tasks(pts, 2))
    assert [len(t) for t in tasks] == [2, 1, 2, 1]
    assert all(len({p["eps0"] for p in t}) == 1 for t in tasks)
    assert [p for t in tasks for p in t] == pts
    assert [len(t) for t in sweep._tasks(pts, 10)] == [3, 3]


def test_joblib_workers_give_the_sequential_rows(small_csv, tmp_path):
    pytest.importorskip("joblib")
    out = tmp_path / "j.csv"
    assert main(["sweep", *SMALL, "--jobs", "2", "--out", str(out)]) == 0
    assert _strip(_rows(out)) == _strip(_rows(small_csv))


@pytest.fixture(scope="module")
def dask_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster:
        yield cluster


def test_dask_cluster_gives_the_sequential_rows(small_csv, tmp_path, dask_cluster):
    out = tmp_path / "d.csv"
    assert main(["sweep", *SMALL, "--backend", "dask", "--scheduler",
                 dask_cluster.scheduler_address, "--out", str(out)]) == 0
    assert _strip(_rows(out)) == _strip(_rows(small_csv))


def test_dask_scheduler_from_the_environment(small_csv, tmp_path, dask_cluster, monkeypatch,
                                             capsys):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", dask_cluster.scheduler_address)
    out = tmp_path / "d.csv"
    assert main(["sweep", *SMALL, "--backend", "dask", "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["points"] == 8
    assert _strip(_rows(out)) == _strip(_rows(small_csv))
    # The Python API takes the same backends and a running client.
    distributed = pytest.importorskip("distributed")
    pts = sweep.Grid(eps0=[0.5, 1.0], n=[1000, 3000], delta=[1e-6], rounds=[1, 4],
                     lower=[False])
    with distributed.Client(dask_cluster.scheduler_address) as client:
        got = sweep.run(pts, backend="dask", scheduler=client, progress=False)
    assert [{k: str(v) if v is not None else "" for k, v in r.items()} for r in
            _strip(got)] == _strip(_rows(small_csv))


def test_an_unreachable_scheduler_is_an_error(tmp_path, capsys):
    pytest.importorskip("distributed")
    import dask
    out = tmp_path / "s.csv"
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):   # default 30 s
        assert main(["sweep", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--backend",
                     "dask", "--scheduler", "tcp://127.0.0.1:9", "--out", str(out)]) == 2
    assert "cannot reach a Dask scheduler" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.slow
def test_local_dask_workers_give_the_sequential_rows(small_csv, tmp_path):
    """--scheduler local:2 starts two worker processes here (as on the command line)."""
    pytest.importorskip("distributed")
    out = tmp_path / "d.csv"
    assert main(["sweep", *SMALL, "--scheduler", "local:2", "--out", str(out)]) == 0
    assert _strip(_rows(out)) == _strip(_rows(small_csv))


@pytest.mark.slow
def test_ray_gives_the_sequential_rows(small_csv, tmp_path):
    pytest.importorskip("ray")
    out = tmp_path / "r.csv"
    assert main(["sweep", *SMALL, "--backend", "ray", "--jobs", "2", "--out", str(out)]) == 0
    assert _strip(_rows(out)) == _strip(_rows(small_csv))


def test_ray_missing_is_a_clear_error(tmp_path, capsys, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "ray", None)          # as if not installed
    out = tmp_path / "r.csv"
    assert main(["sweep", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--backend",
                 "ray", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "shuffledp[cluster]" in err and "Traceback" not in err
    assert not out.exists()


def test_report_sweeps_on_a_dask_cluster_give_the_same_tables(tmp_path, dask_cluster):
    from shuffledp.apps import report
    sc = {"n": 2000, "eps0": [0.5, 1.0], "mechanisms": ["ldp"], "n_grid": [1000, 2000],
          "sections": ["eps0", "n"]}
    here = report.build(sc, str(tmp_path / "a"), progress=False)
    there = report.build(sc, str(tmp_path / "b"), progress=False, backend="dask",
                         scheduler=dask_cluster.scheduler_address)
    for name in ("eps_vs_eps0.csv", "eps_vs_n.csv"):
        assert _strip(_rows(tmp_path / "a" / name)) == _strip(_rows(tmp_path / "b" / name))
    assert here["sections"] == there["sections"]


def test_report_backend_without_a_scheduler_exits_2(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    assert main(["report", "--out", str(tmp_path / "r"), "--backend", "dask"]) == 2
    assert "--scheduler" in capsys.readouterr().err
