"""Noise multiplier z and σ per unit diameter: one Gaussian, two names, never confused.

Inputs clipped to ℓ2 norm C with noise N(0, z²C²I) (Opacus, dp_accounting) are the
library's Gaussian(z/2) (σ per unit ℓ2 diameter; the diameter is 2C). docs/conventions.md.
"""

import csv
import json

import pytest

import shuffledp as sd
from shuffledp.apps.cli import main
from shuffledp.interop.ledger_io import ledger_from_dict

MNIST = dict(n=60_000, sampling=sd.CheckIn(0.1))


def test_from_noise_multiplier_is_half_sigma_and_reads_back():
    g = sd.Gaussian.from_noise_multiplier(5.0)
    assert g == sd.Gaussian(2.5) and g.sigma == 2.5 and g.noise_multiplier == 5.0
    assert sd.Gaussian(4.61).noise_multiplier == 9.22
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="noise_multiplier"):
            sd.Gaussian.from_noise_multiplier(bad)


def test_every_printed_gaussian_states_both_units_and_no_sensitivity_1():
    g = sd.Gaussian.from_noise_multiplier(5.0)
    text = sd.Shuffle(g, **MNIST).describe()
    assert "sigma = 2.5 per unit l2 diameter" in text and "noise multiplier 5" in text
    assert "sensitivity 1" not in text and "sensitivity 1" not in (sd.Gaussian.__doc__ or "")
    r = sd.epsilon(sd.Shuffle(g, n=500), 1e-5)
    table = " ".join(r.table().split())
    assert "noise: sigma = 2.5 per unit l2 diameter = noise multiplier 5" in table
    assert "replace-one" in table
    assert "noise multiplier 5" in r._repr_html_()
    d = r.to_dict()
    assert d["noise"]["noise_multiplier"] == 5.0 and d["noise"]["sigma_per_unit_diameter"] == 2.5
    # not for LDP mechanisms (no noise multiplier there)
    assert "noise" not in sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=500), 1e-5).to_dict()


def test_the_papers_mnist_setting_is_3_05():
    """Issue 27: noise multiplier 5, n = 60000, check-in 0.1, T = 5540, δ = 1e-5 → 3.05
    (±1 %), replace-one; the same number as Gaussian(2.5)."""
    r = sd.epsilon(sd.Shuffle(sd.Gaussian.from_noise_multiplier(5.0), **MNIST), delta=1e-5,
                   rounds=5540)
    assert r.kind == "upper" and r.epsilon == pytest.approx(3.05, rel=0.01)
    assert r.epsilon == sd.epsilon(sd.Shuffle(sd.Gaussian(2.5), **MNIST), 1e-5, 5540).epsilon


def test_cli_noise_multiplier_equals_half_sigma(capsys):
    base = ["epsilon", "--n", "1000", "--checkin", "0.5", "--rounds", "3", "--delta", "1e-5",
            "--json"]
    outs = []
    for extra in (["--noise-multiplier", "8"], ["--mechanism", "gaussian-nm:8"],
                  ["--mechanism", "gaussian:4"]):
        assert main(base + extra) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0]["epsilon"] == outs[1]["epsilon"] == outs[2]["epsilon"]
    assert all(o["noise"]["noise_multiplier"] == 8.0 for o in outs)


@pytest.mark.parametrize("extra, words", [
    (["--noise-multiplier", "5", "--mechanism", "ldp"], ["--noise-multiplier", "--mechanism"]),
    (["--noise-multiplier", "5", "--eps0", "1"], ["--noise-multiplier", "eps0"]),
    (["--noise-multiplier", "0"], ["noise_multiplier", "0"]),
    (["--mechanism", "gaussian-nm:"], ["gaussian-nm:Z"]),
    (["--mechanism", "gaussian-nm:x"], ["noise_multiplier", "'x'"]),
])
def test_cli_noise_multiplier_bad_input_exits_2(capsys, extra, words):
    assert main(["epsilon", "--n", "100", "--delta", "1e-5"] + extra) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for w in words:
        assert w in err


def test_calibrate_sigma_reports_the_noise_multiplier(capsys):
    c = sd.calibrate.sigma(2000, 2.0, 1e-5, 3, sampling=sd.CheckIn(0.5))
    assert c.parameter == "sigma" and c.noise_multiplier == 2.0 * c.value
    # the noise multiplier meets the target through the other front door too
    r = sd.epsilon(sd.Shuffle(sd.Gaussian.from_noise_multiplier(c.noise_multiplier), 2000,
                              sampling=sd.CheckIn(0.5)), 1e-5, 3)
    assert r.epsilon <= 2.0
    assert c.to_dict()["noise_multiplier"] == c.noise_multiplier
    assert main(["calibrate", "sigma", "--n", "2000", "--epsilon", "2", "--delta", "1e-5",
                 "--checkin", "0.5", "--rounds", "3"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"sigma = {c.value:.8g} per unit l2 diameter = noise multiplier " \
           f"{2 * c.value:.8g}" in out
    assert "replace-one" in out
    assert main(["calibrate", "sigma", "--n", "2000", "--epsilon", "2", "--delta", "1e-5",
                 "--checkin", "0.5", "--rounds", "3", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["noise_multiplier"] == pytest.approx(2 * d["value"], rel=1e-15)


def test_calibrate_rounds_takes_a_noise_multiplier(capsys):
    argv = ["calibrate", "rounds", "--n", "2000", "--checkin", "0.5", "--epsilon", "2",
            "--delta", "1e-5", "--json"]
    assert main(argv + ["--noise-multiplier", "8"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert main(argv + ["--sigma", "4"]) == 0
    b = json.loads(capsys.readouterr().out)
    assert a["value"] == b["value"] and "noise multiplier 8" in a["protocol"]
    assert main(argv + ["--sigma", "4", "--noise-multiplier", "8"]) == 2
    assert "at most one" in capsys.readouterr().err


def test_ledger_files_say_noise_multiplier():
    def ledger(mech):
        return {"entries": [{"rounds": 5, "shuffle": {"n": 1000, "mechanism": mech,
                                                       "sampling": {"checkin": 0.5}}}]}
    a = ledger_from_dict(ledger({"type": "gaussian", "noise_multiplier": 6}))
    b = ledger_from_dict(ledger({"type": "gaussian", "sigma": 3}))
    assert a.entries[0].item == b.entries[0].item
    written = a.to_dict()["entries"][0]["shuffle"]["mechanism"]
    assert written == {"type": "gaussian", "sigma": 3.0, "noise_multiplier": 6.0}
    assert ledger_from_dict(a.to_dict()).entries[0].item == a.entries[0].item
    with pytest.raises(ValueError, match="2 \\* sigma"):
        ledger_from_dict(ledger({"type": "gaussian", "noise_multiplier": 6, "sigma": 6}))
    with pytest.raises(ValueError, match="noise_multiplier"):
        ledger_from_dict(ledger({"type": "gaussian"}))


def test_report_section_6_same_noise_multiplier_and_relations(tmp_path):
    """`make run`'s section 6: the paper's setting as noise multiplier 5; the shuffle bound
    and the central baselines at that same noise, each with its relation. The central
    values are dp_accounting's own, computed here at GaussianDpEvent(5)."""
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting import pld, rdp
    from shuffledp.apps import report
    info = report.build({"name": "fl", "sections": ["gaussian"]}, str(tmp_path), progress=False)
    md = " ".join((tmp_path / "report.md").read_text().split())
    assert "noise multiplier 5 = sigma 2.5 per unit l2 diameter" in md
    rows = list(csv.DictReader(open(tmp_path / "gaussian_baselines.csv")))
    # the shuffled protocol under each relation, then the three central baselines
    assert [r["relation"] for r in rows] == ["replace-one", "add/remove", "add/remove",
                                             "add/remove", "replace-one"]
    assert float(rows[0]["epsilon"]) == pytest.approx(3.05, rel=0.01)
    assert "shuffled" in rows[1]["protocol"] and "addremove" in rows[1]["source"]
    rows = [rows[0]] + rows[2:]
    ev = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(5.0)), 5540)
    want = []
    for acc in (rdp.RdpAccountant(), pld.PLDAccountant(),
                pld.PLDAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)):
        acc.compose(ev)
        want.append(acc.get_epsilon(1e-5))
    assert [float(r["epsilon"]) for r in rows[1:]] == pytest.approx(want, rel=1e-9)
    assert all("noise multiplier 5" in r["protocol"] for r in rows)
    assert json.load(open(tmp_path / "scenario.json"))["gaussian"]["noise_multiplier"] == 5.0
    assert info["sections"] == ["gaussian"]


@pytest.mark.slow
def test_conventions_page_numbers_are_what_the_tools_compute():
    """docs/conventions.md quotes numbers of this library, dp_accounting and Opacus: each is
    recomputed here (the external ones by the external tools) and must appear, rounded to 4
    significant digits, on the page."""
    import pathlib
    text = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "conventions.md").read_text()

    def shown(x):
        assert f"{x:.4g}" in text, f"{x:.4g} is not on docs/conventions.md"

    mnist = dict(delta=1e-5, rounds=5540)
    proto = sd.Shuffle(sd.Gaussian.from_noise_multiplier(5.0), **MNIST)
    shown(sd.epsilon(proto, **mnist).epsilon)                               # 3.047
    shown(sd.epsilon(sd.Shuffle(sd.Gaussian(5.0), **MNIST), **mnist).epsilon)     # 0.876
    shown(sd.epsilon(proto, bound="liew-homogeneous", **mnist).epsilon)
    shown(sd.epsilon(sd.Shuffle(sd.Gaussian(5.0), **MNIST), bound="liew-homogeneous",
                     **mnist).epsilon)
    c = sd.calibrate.sigma(60_000, 1.0, 1e-5, 5540, sampling=sd.CheckIn(0.1))
    shown(c.value)
    shown(c.noise_multiplier)
    p = sd.Shuffle(sd.LDP(1.0), n=10_000)
    for x in sd.rdp(p, [2, 4, 8, 16], bound="girgis-ub1").values:
        shown(float(x))
    shown(sd.epsilon(p, 1e-6, 10, bound="girgis-ub1").epsilon)
    shown(sd.epsilon(p, 1e-6, 10).epsilon)
    shown(sd.epsilon(p, 1e-6, bound="fmt20").epsilon)
    shown(sd.epsilon(sd.Shuffle(sd.RandomizedResponse(1.0), n=10_000), 1e-6).epsilon)
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting import pld, rdp
    ev = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(5.0)), 5540)
    for acc in (rdp.RdpAccountant(), pld.PLDAccountant(),
                pld.PLDAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)):
        acc.compose(ev)
        shown(acc.get_epsilon(1e-5))
    led = sd.Accountant().compose(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(5.0)), 5540)
    shown(led.epsilon(1e-5).epsilon)
    pytest.importorskip("opacus")
    from opacus.accountants import PRVAccountant, RDPAccountant
    for cls in (PRVAccountant, RDPAccountant):
        a = cls()
        a.history = [(5.0, 0.1, 5540)]
        shown(a.get_epsilon(1e-5))
