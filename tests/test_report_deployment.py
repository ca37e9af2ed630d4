"""The report's deployment keys (reports_per_user, dummies, honest): validated naming the
key, and every section, heading and the summary computed and labelled for that deployment
(docs/report.md, "A deployment as it runs")."""

import csv

import pytest

import shuffledp as sd
from shuffledp.apps import report


@pytest.mark.parametrize("bad, words", [
    ({"reports_per_user": 0}, ["'reports_per_user'", "0"]),
    ({"reports_per_user": "two"}, ["'reports_per_user'", "integer"]),
    ({"dummies": -1}, ["'dummies'", "-1"]),
    ({"dummies": 1.5}, ["'dummies'", "1.5"]),
    ({"honest": 0}, ["'honest'", "0"]),
    ({"n": 1000, "honest": 2000, "sections": ["eps0"]}, ["'honest'", "2000"]),
    # honest must fit every n of the n axis
    ({"n": 5000, "n_grid": [1000, 10000], "honest": 3000}, ["'honest'", "3000", "1000"]),
    ({"honest": 10, "sampling": {"sample_size": 100}}, ["'honest'", "checkin"]),
])
def test_bad_deployment_keys_name_the_key(bad, words):
    with pytest.raises(ValueError) as exc:
        report.validate_scenario(bad)
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))


def test_plain_scenario_has_no_deployment():
    sc = report.validate_scenario({})
    assert (sc["reports_per_user"], sc["dummies"], sc["honest"]) == (1, 0, None)
    assert report._deploy(sc) == {} and report._deploy_tail(sc) == ""


def test_report_is_for_the_deployment(tmp_path):
    sc = {"name": "dep", "n": 3000, "eps0": [2.0], "mechanisms": ["rr:10"], "eps0_fixed": 2.0,
          "rounds": [1, 3], "reports_per_user": 2, "dummies": 500, "honest": 2500,
          "sections": ["eps0", "rounds"]}
    report.build(sc, str(tmp_path), progress=False)
    want = sd.epsilon(sd.Shuffle(sd.RandomizedResponse(2.0, k=10), 3000, reports_per_user=2,
                                 dummies=500, honest=2500), 1e-6)
    plain = sd.epsilon(sd.Shuffle(sd.RandomizedResponse(2.0, k=10), 3000), 1e-6)
    assert want.epsilon != plain.epsilon
    rows = list(csv.DictReader(open(tmp_path / "eps_vs_eps0.csv")))
    chosen = [r for r in rows if r["chosen"] == "True"]
    assert len(chosen) == 1 and float(chosen[0]["epsilon"]) == want.epsilon
    assert chosen[0]["bound"] == want.bound and "/" in want.bound      # a reduction's label
    assert (chosen[0]["reports_per_user"], chosen[0]["dummies"], chosen[0]["honest"]) == (
        "2", "500", "2500")
    md = (tmp_path / "report.md").read_text()
    summary = md.split("**What it assumes**")[0]
    # The summary's answer is the deployment's, and says which deployment it is for.
    assert f"**{report._fmt(want.epsilon)}**" in summary
    assert "2 reports per round" in summary and "500 dummy reports" in summary
    assert "2,500 users are honest" in summary
    assert "2 reports/user, 500 dummies, 2,500 honest" in summary       # the table header
    # Every section heading names it, and the "does not cover" list no longer claims that
    # several reports per user are not covered.
    heads = [ln for ln in md.splitlines() if ln.startswith("## ")]
    assert len(heads) == 2 and all("2 reports/user, 500 dummies, 2,500 honest" in h
                                   for h in heads)
    assert "A user who sends more than one report per round" not in md
    html = (tmp_path / "report.html").read_text()
    assert "2 reports/user, 500 dummies, 2,500 honest" in html
