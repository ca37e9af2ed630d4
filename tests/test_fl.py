"""Federated-learning demonstration (shuffledp.apps.fl): data loader, protocol, accounting, CLI.

Skipped without torch (the ``fl`` extra). Every expected value comes from an independent
path: files written here byte by byte, closed-form distributions of the simulated protocol,
the library's and dp_accounting's own answers asked directly, a spec anchor.
"""

from __future__ import annotations

import csv
import gzip
import math
import struct
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

torch = pytest.importorskip("torch")
pytest.importorskip("sklearn")

import shuffledp as sd  # noqa: E402
from shuffledp.apps.cli import main  # noqa: E402
from shuffledp.accounting.fl import METHODS, checkpoints, epsilon_at  # noqa: E402
from shuffledp.apps.fl.data import Dataset, IdxFormatError, load_dataset, load_mnist, read_idx  # noqa: E402
from shuffledp.apps.fl.sim import TrainConfig, check_in, clip_rows, privatize, train  # noqa: E402


# ---------------------------------------------------------------- IDX files

def _idx_bytes(arr: np.ndarray) -> bytes:
    """IDX encoding written from the format description (not from the loader)."""
    arr = np.asarray(arr, dtype=np.uint8)
    head = bytes([0, 0, 0x08, arr.ndim]) + b"".join(struct.pack(">I", d) for d in arr.shape)
    return head + arr.tobytes()


def _write_mnist(root, n_train=12, n_test=5, gz=False, size=28):
    rng = np.random.default_rng(0)
    files = {}
    for part, n in (("train", n_train), ("t10k", n_test)):
        x = rng.integers(0, 256, size=(n, size, size), dtype=np.uint8)
        y = rng.integers(0, 10, size=n, dtype=np.uint8)
        for kind, arr, ext in (("images", x, "idx3-ubyte"), ("labels", y, "idx1-ubyte")):
            name = f"{part}-{kind}-{ext}" + (".gz" if gz else "")
            data = _idx_bytes(arr)
            (root / name).write_bytes(gzip.compress(data) if gz else data)
            files[(part, kind)] = (root / name, arr)
    return files


@pytest.mark.parametrize("gz", [False, True])
def test_idx_good_files_round_trip(tmp_path, gz):
    files = _write_mnist(tmp_path, gz=gz)
    x = read_idx(files[("train", "images")][0])
    assert x.shape == (12, 28, 28) and np.array_equal(x, files[("train", "images")][1])
    ds = load_mnist(tmp_path)
    assert ds.n == 12 and ds.x_train.shape == (12, 1, 28, 28) and ds.x_test.shape == (5, 1, 28, 28)
    assert np.array_equal(ds.y_train, files[("train", "labels")][1].astype(np.int64))
    assert ds.x_train.dtype == np.float32 and 0.0 <= ds.x_train.min() and ds.x_train.max() <= 1.0
    assert np.allclose(ds.x_train[3, 0], files[("train", "images")][1][3] / 255.0)


def test_idx_truncated_names_file_and_problem(tmp_path):
    files = _write_mnist(tmp_path)
    path = files[("train", "images")][0]
    raw = path.read_bytes()
    path.write_bytes(raw[:-100])
    with pytest.raises(IdxFormatError) as e:
        read_idx(path)
    assert str(path) in str(e.value) and "truncated" in str(e.value)
    path.write_bytes(raw[:10])                     # inside the header
    with pytest.raises(IdxFormatError, match="truncated inside its header"):
        read_idx(path)
    path.write_bytes(raw[:2])
    with pytest.raises(IdxFormatError, match="truncated"):
        read_idx(path)


def test_idx_wrong_magic_names_file(tmp_path):
    files = _write_mnist(tmp_path)
    path = files[("train", "labels")][0]
    raw = bytearray(path.read_bytes())
    raw[0:4] = b"\x1f\x8b\x08\x01"                 # e.g. a gzip file without .gz
    path.write_bytes(bytes(raw))
    with pytest.raises(IdxFormatError) as e:
        read_idx(path)
    assert str(path) in str(e.value) and "magic" in str(e.value)
    # images file given where labels are expected: right magic, wrong dimensions
    path.write_bytes(_idx_bytes(np.zeros((2, 3, 3))))
    with pytest.raises(IdxFormatError, match="dimensions"):
        load_mnist(tmp_path)


def test_cli_bad_mnist_exits_2_naming_the_file(tmp_path, capsys):
    files = _write_mnist(tmp_path)
    path = files[("t10k", "images")][0]
    path.write_bytes(path.read_bytes()[:-1])
    assert main(["fl-demo", "--dataset", f"mnist:{tmp_path}", "--rounds", "1",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "t10k-images-idx3-ubyte" in err and "truncated" in err
    assert main(["fl-demo", "--dataset", f"mnist:{tmp_path / 'nope'}", "--rounds", "1",
                 "--out", str(tmp_path / "o")]) == 2
    assert "nope" in capsys.readouterr().err
    assert main(["fl-demo", "--dataset", "cifar", "--out", str(tmp_path / "o")]) == 2
    assert main(["fl-demo", "--checkin", "1.5", "--out", str(tmp_path / "o")]) == 2
    assert "checkin must be" in capsys.readouterr().err


def test_dataset_spec():
    with pytest.raises(ValueError, match="digits"):
        load_dataset("cifar10")
    ds = load_dataset("digits")
    assert ds.n == 1500 and ds.x_test.shape == (297, 1, 8, 8)


# ---------------------------------------------------------------- the protocol

def test_clipping_bounds_norms_and_keeps_small_rows():
    g = torch.randn(400, 50, generator=torch.Generator().manual_seed(1), dtype=torch.float32)
    g *= torch.logspace(-3, 3, 400).unsqueeze(1)
    g[0] = 0.0
    c = 0.7
    r = clip_rows(g, c)
    norms = torch.linalg.vector_norm(r, dim=1)
    assert bool((norms <= c * (1 + 1e-6)).all())
    small = torch.linalg.vector_norm(g, dim=1) <= c
    assert bool(torch.equal(r[small], g[small]))
    big = ~small
    assert torch.allclose(norms[big], torch.full_like(norms[big], c), rtol=1e-5)
    # direction is kept
    cos = (r[big] * g[big]).sum(1) / (norms[big] * torch.linalg.vector_norm(g[big], dim=1))
    assert torch.allclose(cos, torch.ones_like(cos), atol=1e-5)
    assert not bool(torch.isnan(r).any())


@settings(max_examples=60, deadline=None)
@given(arrays(np.float32, st.tuples(st.integers(1, 6), st.integers(1, 9)),
              elements=st.floats(-1e6, 1e6, width=32)),
       st.floats(1e-4, 1e3))
def test_clipping_property(g, c):
    r = clip_rows(torch.from_numpy(g), c)
    norms = torch.linalg.vector_norm(r.double(), dim=1)
    assert bool((norms <= c * (1 + 1e-5)).all()) and not bool(torch.isnan(r).any())


def test_checkin_rate_within_binomial_ci():
    gen = torch.Generator().manual_seed(3)
    n, rate, rounds = 1000, 0.3, 300
    counts = [int(check_in(n, rate, gen).numel()) for _ in range(rounds)]
    tot, trials = sum(counts), n * rounds
    sd_ = math.sqrt(trials * rate * (1 - rate))
    assert abs(tot - trials * rate) < 4.5 * sd_          # two-sided p ~ 7e-6
    # per-round counts ~ Bin(n, rate): their variance too (chi-square-ish, loose)
    assert 0.7 < np.var(counts, ddof=1) / (n * rate * (1 - rate)) < 1.35
    # every user takes part at roughly the same rate (no index bias): first vs second half
    gen = torch.Generator().manual_seed(4)
    hits = torch.zeros(n)
    for _ in range(rounds):
        hits[check_in(n, rate, gen)] += 1
    half = trials / 2 * rate
    assert abs(float(hits[: n // 2].sum()) - half) < 4.5 * math.sqrt(half * (1 - rate))


def test_noise_scale_and_shuffle():
    gen = torch.Generator().manual_seed(5)
    m, d, c, s = 200, 500, 0.3, 2.5
    rep = privatize(torch.zeros(m, d), c, s, gen)
    x = rep.double().flatten()
    N = x.numel()
    sd_hat = float(x.std())
    # sd of the sample sd of N normals ≈ sd/sqrt(2N); 5 of those
    assert abs(sd_hat - c * s) < 5 * c * s / math.sqrt(2 * N)
    assert abs(float(x.mean())) < 5 * c * s / math.sqrt(N)
    # the reports are the clipped rows, shuffled: with small noise each row is recognisable
    g = torch.eye(m, d) * 10.0
    rep = privatize(g, c, 1e-4, torch.Generator().manual_seed(6))
    idx = rep.argmax(1)
    assert sorted(idx.tolist()) == list(range(m))              # a permutation of the users
    assert idx.tolist() != list(range(m))                       # ... and not the identity
    assert torch.allclose(rep.max(1).values, torch.full((m,), c), atol=1e-2)


def _tiny(seed=0, model="mlp", n=60):
    rng = np.random.default_rng(seed)
    x = rng.random((n, 1, 8, 8), dtype=np.float32)
    y = (x[:, 0, :4].sum((1, 2)) > x[:, 0, 4:].sum((1, 2))).astype(np.int64)
    return Dataset("tiny", x, y, x[:20], y[:20], classes=2)


def test_determinism_under_seed():
    data = _tiny()
    cfg = TrainConfig(rounds=6, checkin=0.5, noise_multiplier=1.0, clip=1.0, lr=0.5, seed=11,
                      hidden=8, eval_rounds=(2, 4))
    a, b = train(data, cfg, progress=False), train(data, cfg, progress=False)
    assert a["accuracy"] == b["accuracy"] and a["participants"] == b["participants"]
    assert a["rounds"] == [0, 2, 4, 6]
    for p, q in zip(a["model"].parameters(), b["model"].parameters()):
        assert torch.equal(p, q)
    c = train(data, TrainConfig(**{**cfg.__dict__, "seed": 12}), progress=False)
    assert any(not torch.equal(p, q) for p, q in zip(a["model"].parameters(),
                                                      c["model"].parameters()))


def test_fast_noise_has_the_same_law_on_average_step():
    """The server's average noise: per-user draws and the single draw have sd Cσ/√m."""
    m, d, c, s = 50, 400, 0.5, 3.0
    gen = torch.Generator().manual_seed(8)
    avgs = torch.stack([privatize(torch.zeros(m, d), c, s, gen).mean(0) for _ in range(20)])
    target = c * s / math.sqrt(m)
    N = avgs.numel()
    assert abs(float(avgs.double().std()) - target) < 5 * target / math.sqrt(2 * N)


def test_cnn_runs_on_mnist_shaped_files(tmp_path):
    _write_mnist(tmp_path, n_train=16, n_test=4)
    ds = load_mnist(tmp_path)
    out = train(ds, TrainConfig(rounds=2, checkin=0.5, model="cnn", hidden=8, noise_multiplier=5,
                                clip=0.01, lr=50, fast_noise=True), progress=False)
    assert len(out["accuracy"]) == 2 and all(0 <= a <= 1 for a in out["accuracy"])


def test_bad_config_names_parameter():
    with pytest.raises(ValueError, match=r"checkin must be a real number in \(0, 1\]; got 0"):
        TrainConfig(checkin=0)
    with pytest.raises(ValueError, match="noise_multiplier must be"):
        TrainConfig(noise_multiplier=-1)
    with pytest.raises(ValueError, match="model must be"):
        TrainConfig(model="resnet")


# ---------------------------------------------------------------- accounting

def test_checkpoints():
    pts = checkpoints(500, 40)
    assert pts[0] == 1 and pts[-1] == 500 and pts == sorted(set(pts)) and 25 <= len(pts) <= 40
    assert checkpoints(7, 40) == list(range(1, 8))


def _fast_upper(proto, t):
    rs = [sd.epsilon(proto, 1e-5, t, bound="gaussian-unamplified")]
    try:
        rs.append(sd.epsilon(proto, 1e-5, t, composition="rdp"))
    except sd.NotApplicableError:
        pass
    return min(rs, key=lambda r: r.epsilon)


@pytest.mark.parametrize("n,gamma,sigma,t", [(1500, 0.5, 1.0, 40), (600, 0.3, 1.0, 7)])
def test_accounting_columns_equal_library_answers(n, gamma, sigma, t):
    got = epsilon_at(n, gamma, sigma, t, 1e-5)
    proto = sd.Shuffle(sd.Gaussian(sigma / 2), n, sampling=sd.CheckIn(gamma))
    r = _fast_upper(proto, t)
    assert got["upper"][:3] == (r.epsilon, r.bound, "upper") and r.kind == "upper"
    e = sd.epsilon(proto, 1e-5, t, bound="liew-homogeneous")
    assert got["estimate"][0] == e.epsilon and got["estimate"][2] == "estimate"
    e2 = sd.epsilon(sd.Shuffle(sd.Gaussian(sigma), n, sampling=sd.CheckIn(gamma)), 1e-5, t,
                    bound="liew-homogeneous")
    assert got["estimate_addremove"][0] == e2.epsilon
    # the valid answer is never below the unamplified Gaussian's own?  No: it is the min of
    # valid bounds, so it is at most that; and the replacement estimate needs more ε than the
    # add/remove one (less noise per unit of sensitivity).
    un = sd.epsilon(proto, 1e-5, t, bound="gaussian-unamplified").epsilon
    assert got["upper"][0] <= un * (1 + 1e-12)
    assert got["estimate_addremove"][0] < got["estimate"][0]
    assert all(v[0] is None or (math.isfinite(v[0]) and v[0] > 0) for v in got.values())


def test_best_upper_is_the_default_answer():
    # two rounds: every composition route (PLD included) stays cheap
    n, gamma, sigma, t = 1500, 0.5, 1.0, 2
    proto = sd.Shuffle(sd.Gaussian(sigma / 2), n, sampling=sd.CheckIn(gamma))
    best = sd.epsilon(proto, 1e-5, t)
    got = epsilon_at(n, gamma, sigma, t, 1e-5, upper="best")["upper"]
    assert got[:3] == (best.epsilon, best.bound, "upper")
    fast = epsilon_at(n, gamma, sigma, t, 1e-5)["upper"][0]
    assert best.epsilon <= fast * (1 + 1e-12)           # every route: never looser
    with pytest.raises(ValueError, match="upper must be"):
        epsilon_at(n, gamma, sigma, t, 1e-5, upper="tight")


def test_central_column_against_dp_accounting_and_spec_anchor():
    pytest.importorskip("dp_accounting")
    from shuffledp.accounting.baselines import central_baselines
    from shuffledp.accounting.fl import central_epsilon
    # spec anchor: q = 0.1, σ = 5, 5540 steps, δ = 1/60000, PLD ε = 6.9154 (dp_accounting's
    # default 1e-4 grid); our 1e-3 grid rounds pessimistically: never below, within 0.5 %.
    e = central_epsilon(0.1, 5.0, 5540, 1 / 60000)
    assert 6.9154 - 1e-3 <= e <= 6.9154 * 1.005
    ref = central_baselines(0.5, 1.0, 40, 1e-5)["pld"]
    assert ref - 1e-9 <= central_epsilon(0.5, 1.0, 40, 1e-5) <= ref * 1.005


# ---------------------------------------------------------------- end to end (short)

def test_short_run_writes_csv_png_summary(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["fl-demo", "--rounds", "12", "--checkpoints", "4", "--seed", "3",
                 "--noise-multiplier", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "privacy this run will reach after round 12" in printed
    with open(out / "fl_demo.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["round"] == "0" and rows[-1]["round"] == "12"
    assert [k for k in rows[0]] == (["round", "test_accuracy"] + [f"eps_{m.key}" for m in METHODS]
                                    + ["upper_bound_id"])
    last = rows[-1]
    ref = epsilon_at(1500, 0.5, 1.0, 12, 1e-5)
    for m in METHODS:
        if ref[m.key][0] is not None:
            assert float(last[f"eps_{m.key}"]) == ref[m.key][0]
            assert f"{ref[m.key][0]:.4g}" in printed
    assert last["upper_bound_id"] == ref["upper"][1]
    eps_up = [float(r["eps_upper"]) for r in rows]
    assert eps_up == sorted(eps_up)                       # more rounds, more ε
    assert float(last["test_accuracy"]) > float(rows[0]["test_accuracy"])
    assert (out / "accuracy_vs_epsilon.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = (out / "summary.md").read_text()
    assert "Gaussian(z/2)" in summary and "estimate" in summary and "upper" in summary
    assert "replace-one" in summary and "add/remove" in summary
    assert "noise multiplier z = 1" in printed and "Gaussian(0.5)" in printed


def test_sigma_flag_is_a_deprecated_name_of_noise_multiplier(capsys):
    import warnings

    from shuffledp.apps.fl.demo import _renamed_sigma
    # the warning is printed before anything runs (here the bad delta stops the run)
    assert main(["fl-demo", "--sigma", "2", "--delta", "2", "--out", "unused"]) == 2
    err = capsys.readouterr().err
    assert "deprecated" in err and "--noise-multiplier" in err and "delta" in err
    assert main(["fl-demo", "--sigma", "2", "--noise-multiplier", "2"]) == 2
    assert "--noise-multiplier only" in capsys.readouterr().err
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert _renamed_sigma({"sigma": 3.0}) == {"noise_multiplier": 3.0}
    assert any(issubclass(x.category, DeprecationWarning) for x in w)
    assert _renamed_sigma({"sigma": None, "noise_multiplier": 2.0}) == {"noise_multiplier": 2.0}


def test_import_shuffledp_does_not_import_torch():
    code = ("import sys, shuffledp, shuffledp.apps.cli, shuffledp.apps.fl; shuffledp.apps.cli.build_parser(); "
            "print('torch' in sys.modules, 'sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": "src", "PATH": ""}, cwd=_root())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


def _root():
    import pathlib
    return str(pathlib.Path(__file__).resolve().parents[1])


# ---------------------------------------------------------------- checkpoints, learning, trade-off

@pytest.mark.parametrize("rounds, count", [(500, 10), (500, 40), (5540, 40), (12, 4), (41, 40)])
def test_checkpoints_gives_the_count_asked(rounds, count):
    pts = checkpoints(rounds, count)
    assert len(pts) == count and len(set(pts)) == count
    assert pts == sorted(pts) and pts[0] >= 1 and pts[-1] == rounds


def test_checkpoints_of_a_short_run_are_every_round():
    assert checkpoints(7, 40) == [1, 2, 3, 4, 5, 6, 7]


def test_learning_check_says_what_to_change():
    from shuffledp.apps.fl.demo import learning_check
    cfg = TrainConfig(rounds=50, checkin=0.5, noise_multiplier=8.0, clip=1.0, lr=1.0)
    assert learning_check(0.9, 10, cfg, 1210, 750.0) is None
    msg = learning_check(0.21, 10, cfg, 1210, 750.0)
    assert "did not learn" in msg and "0.210" in msg and "chance 0.10" in msg
    for hint in ("--rounds, now 50", "--lr, now 1", "--checkin, now 0.5", "now 8"):
        assert hint in msg
    # noise of the average: z * C * sqrt(d / m) = 8 * sqrt(1210 / 750)
    assert f"{8 * math.sqrt(1210 / 750):.3g}" in msg


def test_tradeoff_short_run(tmp_path, capsys):
    out = tmp_path / "t"
    assert main(["fl-demo", "--rounds", "6", "--noise-multipliers", "4,1", "--out",
                 str(out)]) == 0
    printed = capsys.readouterr().out
    with open(out / "tradeoff.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["noise_multiplier"]) for r in rows] == [1.0, 4.0]
    ref = {z: epsilon_at(1500, 0.5, z, 6, 1e-5) for z in (1.0, 4.0)}
    for r in rows:
        z = float(r["noise_multiplier"])
        assert float(r["eps_upper"]) == ref[z]["upper"][0]
        assert r["upper_bound_id"] == ref[z]["upper"][1]
    # more noise, smaller epsilon, for every accounting method that answered
    for key in ("upper", "estimate"):
        assert float(rows[1][f"eps_{key}"]) < float(rows[0][f"eps_{key}"])
    assert (out / "tradeoff.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = (out / "summary.md").read_text()
    assert "| noise multiplier z | test accuracy |" in summary and "replace-one" in summary
    assert "z = 4: test accuracy" in printed
    # six rounds at z = 4 do not train this model: the user is told so, and why
    learned = {float(r["noise_multiplier"]): r["learned"] for r in rows}
    assert learned[4.0] == "False"
    assert "warning: z = 4: this run did not learn" in printed and "--rounds" in printed
    assert "did not learn" in summary


def test_tradeoff_flags_are_exclusive(capsys):
    assert main(["fl-demo", "--noise-multiplier", "1", "--noise-multipliers", "1,2"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["fl-demo", "--noise-multipliers", "1,x"]) == 2
