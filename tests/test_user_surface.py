"""The user-facing surface: results that behave like numbers, honest labels, the CLI's
help/version/errors, the report's HTML and sections, and self-contained docs."""

from __future__ import annotations

import csv
import json
import math
import pathlib
import re

import pytest

import shuffledp as sd
from shuffledp.apps import report, sweep
from shuffledp.apps.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
RR = sd.Shuffle(sd.RandomizedResponse(1.0, 2), n=200)


@pytest.fixture(scope="module")
def r():
    return sd.epsilon(RR, 1e-6)


# -- results behave like numbers ------------------------------------------------------------
def test_result_is_a_number(r):
    assert float(r) == r.epsilon
    assert f"{r:.3f}" == f"{r.epsilon:.3f}"
    assert r < r.epsilon + 1 and r <= r.epsilon and r > 0 and r >= r.epsilon
    assert not (r < r.epsilon)
    assert math.isclose(float(r) * 2, r.epsilon * 2)
    d = sd.delta(RR, 0.5)
    assert float(d) == d.delta and d < 1.0
    assert sorted([r, 10.0, 0.0])[1] is r


def test_result_repr_is_short_and_html_is_a_table(r):
    text = repr(r)
    assert "\n" not in text and len(text) < 160 and r.bound in text
    html = r._repr_html_()
    assert html.count("<tr") == len(r.candidates) + 1 and "replacement" in html
    assert str(r) == r.table()


def test_console_table_fits_100_columns_and_states_adjacency(r):
    for res in (r, sd.epsilon(sd.Shuffle(sd.LDP(1.0), 500), 1e-6),
                sd.epsilon(sd.Shuffle(sd.Gaussian(5.0), 500), 1e-5)):
        lines = res.table().splitlines() + res.table(details=True).splitlines()
        assert max(len(x) for x in lines) <= 100
        assert "replacement" in res.table() and "l2 diameter" in res.table()


def test_errata_text_appears_once():
    text = sd.epsilon(sd.Shuffle(sd.LDP(1.0), 500), 1e-6).table()
    assert text.count("errata") == 1


def test_rdp_curve_table_and_narrowest_label():
    c = sd.rdp(sd.Shuffle(sd.RandomizedResponse(1.0, 3), n=10_000), orders=[2, 4, 8])
    # fmt23 (class S only) and the blanket bound (this randomizer) produced this curve: it
    # must not claim every eps0-LDP randomizer, and carries the narrowest class among them.
    used = set(c.details["bound_per_order"])
    want = "this-randomizer" if "blanket" in used else "class-S"
    assert "any eps0-LDP randomizer" not in c.valid_for and c.scope == want
    t = c.table()
    assert len(c) == 3 and "order" in t and c.bound in t
    assert c._repr_html_().count("<tr>") == 4
    assert list(c)[0][0] == 2.0


def test_girgis_lower_over_rounds_is_labelled_estimate():
    r = sd.epsilon(sd.Shuffle(sd.LDP(1.0), 1000), 1e-6, rounds=3, bound="girgis-lower")
    c = r.chosen
    assert c.kind == "estimate" and c.composition == "rdp"
    assert "leaks this" not in c.valid_for and c.valid_for.startswith("estimate")
    assert c.scope == "rdp-estimate"


def test_calibration_is_a_number():
    c = sd.calibrate.rounds(sd.Shuffle(sd.LDP(2.0), 1000), 2.5, 1e-6)
    assert float(c) == c.value and c >= 1 and f"{c:.0f}" == str(int(c.value))


# -- sweep rows -------------------------------------------------------------------------------
def test_sweep_not_applicable_row_has_no_kind_or_nan(tmp_path):
    rows = sweep.run(sweep.grid(mechanism=["ldp"], eps0=[1.0], n=[1000], delta=[1e-6],
                                bound=["fmt23"]), progress=False)
    assert len(rows) == 1
    row = rows[0]
    assert row["kind"] == "" and row["epsilon"] is None and row["valid_for"] == ""
    assert "S(eps0)" in row["not_applicable"]
    sweep.write_csv(rows, tmp_path / "s.csv")
    got = list(csv.DictReader(open(tmp_path / "s.csv")))[0]
    assert got["epsilon"] == "" and "nan" not in json.dumps(got).lower()


# -- CLI --------------------------------------------------------------------------------------
def test_version(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert re.match(r"shuffledp \d+\.\d+", out)


def test_did_you_mean(capsys):
    assert main(["epsilom", "--n", "3"]) == 2
    assert "did you mean 'epsilon'" in capsys.readouterr().err
    assert main(["epsilon", "--eps0", "1", "--n", "100", "--delta", "1e-6", "--rouns", "2"]) == 2
    assert "'--rounds'" in capsys.readouterr().err


@pytest.mark.parametrize("cmd", ["epsilon", "delta", "rdp", "calibrate", "report", "bounds",
                                 "sweep", "figure"])
def test_help_has_examples(cmd, capsys):
    assert main([cmd, "--help"]) == 0
    out = capsys.readouterr().out
    assert "example" in out
    for word in ("seed", "main job", "spec/", "later work"):
        assert word not in out


def test_help_states_adjacency_and_matrix_format(capsys):
    assert main(["epsilon", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "replace-one" in out and "gaussian-nm:5 = gaussian:2.5" in out
    assert "header" in out and '{"matrix"' in out
    for flag in ("--delta", "--composition", "--eps0", "--n", "--mechanism", "--rounds",
                 "--noise-multiplier"):
        assert re.search(re.escape(flag) + r"[^\n]*e\.g\.", out), flag


@pytest.mark.parametrize("argv, words", [
    (["calibrate", "eps0", "--n", "1000", "--epsilon", "1", "--delta", "1e-6", "--sigma", "3"],
     ["--sigma", "does not use"]),
    (["calibrate", "eps0", "--n", "1000", "--epsilon", "1", "--delta", "1e-6", "--eps0", "3"],
     ["--eps0"]),
    (["calibrate", "eps0", "--n", "1000", "--epsilon", "1", "--delta", "1e-6",
      "--mechanism", "gaussian:3"], ["--mechanism must be a family", "ldp, rr:K"]),
    (["calibrate", "sigma", "--n", "1000", "--epsilon", "1", "--delta", "1e-6", "--k", "3"],
     ["--k"]),
    (["calibrate", "users", "--eps0", "1", "--epsilon", "1", "--delta", "1e-6", "--n", "5"],
     ["--n"]),
])
def test_calibrate_rejects_flags_it_does_not_use(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    for w in words:
        assert w in err


def test_calibrate_eps0_honours_mechanism_and_sampling(capsys):
    base = ["calibrate", "eps0", "--n", "2000", "--epsilon", "0.5", "--delta", "1e-6", "--json"]
    assert main(base + ["--mechanism", "rr:4"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert "4-ary randomized response" in a["protocol"]
    assert main(base + ["--checkin", "0.5"]) == 0
    b = json.loads(capsys.readouterr().out)
    assert "check" in b["protocol"].lower() or "0.5" in b["protocol"]


@pytest.mark.parametrize("content, suffix, words", [
    ("in0,in1\n0.7,0.3\n0.3,0.7\n", ".csv", None),
    ('{"matrix": [[0.7, 0.3], [0.3, 0.7]]}', ".json", None),
    ("[[0.7, 0.3], [0.3, 0.7]]", ".json", None),
    ("0.7,0.3\n0.3,abc\n", ".csv", ["line 2", "column 2", "abc"]),
    ('{"matrix": [[0.7, 0.3], [0.3, 0.7]', ".json", ["line 1", "not valid JSON"]),
    ('{"rows": []}', ".json", ["'matrix'"]),
    (b"\xff\xfe0.7,0.3", ".csv", ["UTF-8"]),
    ("0.7,0.2\n0.3,0.7\n", ".csv", ["rows"]),
])
def test_matrix_files(tmp_path, capsys, content, suffix, words):
    f = tmp_path / f"R{suffix}"
    (f.write_bytes if isinstance(content, bytes) else f.write_text)(content)
    code = main(["delta", "--mechanism", f"matrix:{f}", "--n", "5", "--epsilon", "0.5"])
    err = capsys.readouterr().err
    if words is None:
        assert code == 0, err
        return
    assert code == 2 and str(f) in err
    for w in words:
        assert w in err, err
    assert "Traceback" not in err


# -- report -----------------------------------------------------------------------------------
TINY = {"name": "tiny", "n": 1000, "eps0": [1.0, 2.0], "eps0_fixed": 1.0,
        "mechanisms": ["rr:2"], "rounds": [1, 3], "orders": [2, 4],
        "calibration": False, "gaussian": None}


@pytest.fixture(scope="module")
def tiny_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("rep")
    sc = dict(TINY, sections=["eps0", "rounds"])
    return report.build(sc, str(out), progress=False), out


def test_report_css_is_valid_and_sections_are_the_requested_ones(tiny_report):
    info, out = tiny_report
    html = (out / "report.html").read_text()
    assert "{{" not in html and "}}" not in html
    assert "table{border-collapse:collapse" in html and "border:1px solid" in html
    assert info["sections"] == ["eps0", "rounds"]
    after_summary = html.split("<div class='summary'", 1)[1].split("</div>", 1)[1]
    assert after_summary.count("<h2>") == 2 and "RDP curves" not in html
    assert "replacement" in html


def test_report_rounds_T1_is_the_eps0_answer(tiny_report):
    info, out = tiny_report
    t1, eps0_answer = info["checks"]["rounds_T1_equals_eps0_answer"]
    assert t1 == eps0_answer
    direct = sd.epsilon(sd.Shuffle(sd.RandomizedResponse(1.0, 2), 1000), 1e-6)
    assert t1 == direct.epsilon
    rows = list(csv.DictReader(open(out / "eps_vs_rounds.csv")))
    ans = [r for r in rows if r["series"] == "answer"]
    assert [int(r["rounds"]) for r in ans] == [1, 3]
    assert float(ans[0]["epsilon"]) == direct.epsilon
    # every route's best is at least the answer
    for r in rows:
        same_t = [a for a in ans if a["rounds"] == r["rounds"]][0]
        assert float(r["epsilon"]) >= float(same_t["epsilon"]) * (1 - 1e-12)


def test_scenario_sections_follow_the_keys_it_sets():
    assert report.validate_scenario({"rounds": [1, 2]})["sections"] == ["rounds"]
    assert report.validate_scenario({"n": 500})["sections"] == list(report.SECTIONS)
    assert "gaussian" not in report.validate_scenario({"gaussian": False})["sections"]
    with pytest.raises(ValueError, match="sections"):
        report.validate_scenario({"sections": ["eps0", "pie"]})


def test_report_docs_example_is_a_valid_scenario(tmp_path):
    text = (ROOT / "docs" / "report.md").read_text()
    toml_src = re.search(r"```toml\n(.*?)```", text, re.S).group(1)
    json_src = re.search(r"```json\n(.*?)```", text, re.S).group(1)
    (tmp_path / "s.toml").write_text(toml_src)
    (tmp_path / "s.json").write_text(json_src)
    a = report.load_scenario(str(tmp_path / "s.toml"))
    b = report.load_scenario(str(tmp_path / "s.json"))
    assert a == b and a["sections"] == ["rounds", "calibration"]


# -- docs are self-contained ------------------------------------------------------------------
def _user_facing_texts():
    yield from (ROOT / "docs").glob("*.md")
    yield ROOT / "README.md"


#: "seed" as in a random-number seed (the learning demo's --seed) is a user's word; "seed"
#: as in "the seed papers" is ours and must not reach users.
_RANDOM_SEED = re.compile(r"--seed|seeded|(random|torch|rng|a|same|every|under a|per) seed|"
                          r"seed \d|manual_seed|seed=|seed:|seed,|seed\)|seed `|seed \(")


def _drop_random_seed(text: str) -> str:
    return _RANDOM_SEED.sub("", text)


def test_docs_do_not_point_to_internal_notes():
    for path in _user_facing_texts():
        text = _drop_random_seed(path.read_text())
        for bad in ("shared/spec", "spec/", "seed", "main job", "later work"):
            assert bad not in text, f"{path.name}: {bad!r}"
        assert not re.search(r"spec\W+\w+\.md", text), path.name


def test_source_docstrings_do_not_point_to_internal_notes():
    import ast
    for path in (ROOT / "src" / "shuffledp").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef,
                                 ast.AsyncFunctionDef)):
                doc = _drop_random_seed(ast.get_docstring(node) or "")
                for bad in ("shared/spec", "spec/", "seed", "main job"):
                    assert bad not in doc, f"{path.name}: docstring mentions {bad!r}"


def test_bound_references_are_public():
    for b in sd.bounds.all_bounds():
        assert "spec" not in b.reference.lower() and "spec" not in b.title.lower(), b.id


def test_trimmed_clone_lemma_is_documented():
    text = (ROOT / "docs" / "trimmed-clone.md").read_text()
    assert "## Lemma" in text and "## Proof" in text and "1 − c^T" in text


def test_result_says_when_the_pld_route_is_missing(monkeypatch):
    # Upper bounds compose their own PLD (numpy only); without dp-accounting only the
    # lower bounds' optimistic PLD over several rounds is missing, and the result says so.
    from shuffledp.compose import composition
    monkeypatch.setattr(composition, "pld_unavailable_reason",
                        lambda: "PLD composition needs dp-accounting")
    proto = sd.Shuffle(sd.RandomizedResponse(1.0, 2), 300)
    r = sd.epsilon(proto, 1e-6, rounds=2)
    assert any(c.composition == "pld" for c in r.candidates)
    assert not r.notes
    r = sd.epsilon(proto, 1e-6, rounds=2, lower=True)
    assert all(c.composition != "pld" for c in r.candidates if c.kind == "lower")
    assert any("dp-accounting" in n and "not installed" in n for n in r.notes)
    assert "note: the PLD route of the lower bounds was not tried" in r.table()
    assert r.to_dict()["notes"]


def _chromium():
    import shutil
    return next((shutil.which(c) for c in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(c)), None)


@pytest.mark.slow
@pytest.mark.skipif(_chromium() is None, reason="no headless Chromium on this machine")
def test_report_renders_with_styled_tables_in_a_browser(tiny_report, tmp_path):
    """The documented screenshot command (docs/report.md): the HTML's CSS is applied —
    header cells get their #e8e8e8 background and cells their #999 borders."""
    import subprocess
    np = pytest.importorskip("numpy")
    mpimg = pytest.importorskip("matplotlib.image")
    info, out = tiny_report
    shot = tmp_path / "shot.png"
    subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                    "--window-size=1200,1600", f"--screenshot={shot}",
                    (out / "report.html").as_uri()], check=True, timeout=120,
                   capture_output=True)
    img = (mpimg.imread(shot)[..., :3] * 255).round().astype(int)
    header_bg = np.all(np.abs(img - 232) <= 1, axis=-1).sum()
    border = np.all(np.abs(img - 153) <= 2, axis=-1).sum()
    assert header_bg > 500, "table header background missing: CSS not applied"
    assert border > 200, "table borders missing: CSS not applied"
