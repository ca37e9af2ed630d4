"""Rough edges of the command line a new user hits: abbreviations, misspelt mechanisms,
errors that name internal parameters, output piped into ``head``, JSON without inputs."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

import shuffledp
from shuffledp.apps.cli import build_parser, main

SRC = pathlib.Path(shuffledp.__file__).resolve().parents[1]


def _subparsers(parser):
    import argparse
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.values()


def test_no_parser_accepts_abbreviated_flags():
    parser = build_parser()
    parsers = [parser, *_subparsers(parser)]
    assert len(parsers) > 8
    assert [p.prog for p in parsers if p.allow_abbrev] == []


@pytest.mark.parametrize("argv, typed", [
    (["epsilon", "--eps", "1", "--n", "1e4", "--delta", "1e-6"], "--eps"),
    (["epsilon", "--eps0", "1", "--n", "1e4", "--del", "1e-6"], "--del"),
    (["delta", "--eps0", "1", "--n", "1e4", "--eps", "0.5"], "--eps"),
])
def test_abbreviated_flag_is_an_error_not_another_flag(argv, typed, capsys):
    # Before: `--eps 1` was read as `--eps0 1` and a different question was answered.
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert typed in err and "Traceback" not in err


@pytest.mark.parametrize("spec, suggestion", [
    ("gausian:5", "gaussian:5"), ("rapor:100", "rappor:100"), ("ldpp", "ldp"),
])
def test_misspelt_mechanism_gets_a_did_you_mean(spec, suggestion, capsys):
    assert main(["epsilon", "--eps0", "1", "--n", "1e4", "--delta", "1e-6",
                 "--mechanism", spec]) == 2
    err = capsys.readouterr().err
    assert f"got '{spec}'; did you mean '{suggestion}'?" in err


@pytest.mark.parametrize("argv, flag, value", [
    (["epsilon", "--eps0", "1", "--n", "1e4", "--delta", "1e-6", "--checkin", "1.5"],
     "--checkin", "1.5"),
    (["epsilon", "--eps0", "1", "--n", "1e4", "--delta", "1e-6", "--sample-size", "0"],
     "--sample-size", "0"),
    (["epsilon", "--eps0", "1", "--n", "1e4", "--delta", "1e-6", "--sample-size", "1e5"],
     "--sample-size", "100000"),
    (["calibrate", "eps0", "--n", "1e4", "--epsilon", "1", "--delta", "1e-6",
      "--checkin", "1.5"], "--checkin", "1.5"),
])
def test_sampling_errors_name_the_flag_typed(argv, flag, value, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"shuffledp: error: {flag} must be") and err.endswith(f"got {value}")
    assert " rate " not in err and " size " not in err


@pytest.mark.parametrize("unbuffered", [True, False])
@pytest.mark.parametrize("argv", [["bounds"], ["example", "budget"]])
def test_output_into_a_closed_pipe_is_silent(argv, unbuffered):
    # `shuffledp compose budget.toml | head -1`: the reader leaves early. A pipe whose read
    # end is already closed makes the first write fail, every time.
    r, w = os.pipe()
    os.close(r)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    try:
        proc = subprocess.run([sys.executable, "-m", "shuffledp", *argv], stdout=w,
                              stderr=subprocess.PIPE, env=env, timeout=120)
    finally:
        os.close(w)
    assert proc.stderr.decode() == ""
    assert proc.returncode == 1       # as the Python docs' recipe: not 0, no traceback


def _json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_json_says_what_it_answers(capsys):
    d = _json(capsys, "epsilon", "--eps0", "1", "--n", "1e4", "--delta", "1e-6",
              "--checkin", "0.5", "--rounds", "3", "--json")
    assert d["relation"] == "replace-one" and d["version"] == shuffledp.__version__
    inp = d["inputs"]
    assert inp["command"] == "epsilon" and inp["delta"] == 1e-6 and inp["rounds"] == 3
    assert inp["protocol"] == {"n": 10000, "mechanism": {"type": "LDP", "eps0": 1.0},
                               "sampling": {"checkin": 0.5}}
    assert d["epsilon"] > 0 and d["kind"] == "upper"      # the answer itself is unchanged


def test_json_of_rdp_and_calibrate_carry_inputs_relation_version(capsys):
    d = _json(capsys, "rdp", "--mechanism", "rr:3", "--eps0", "2", "--n", "1000",
              "--orders", "2,4", "--json")
    assert d["inputs"]["protocol"]["mechanism"] == {"type": "RandomizedResponse", "eps0": 2.0,
                                                    "k": 3}
    assert d["relation"] == "replace-one" and d["version"] == shuffledp.__version__
    d = _json(capsys, "calibrate", "users", "--eps0", "2", "--epsilon", "0.5", "--delta",
              "1e-6", "--json")
    assert d["inputs"]["what"] == "users" and d["inputs"]["eps0"] == 2.0
    assert d["inputs"]["protocol"]["n"] == d["value"]
    assert d["relation"] == "replace-one" and d["version"] == shuffledp.__version__


def test_compose_json_carries_the_ledger_it_answers(tmp_path, capsys):
    f = tmp_path / "l.toml"
    f.write_text('format = "shuffledp-ledger"\nversion = 1\ndelta = 1e-6\n'
                 '[[entries]]\nlabel = "a"\nrounds = 2\n'
                 'shuffle = { n = 1000, mechanism = { type = "ldp", eps0 = 1.0 } }\n')
    d = _json(capsys, "compose", str(f), "--json")
    assert d["relation"] == "replace-one" and "replace-one" in d["relation_text"]
    assert d["ledger"]["entries"][0]["shuffle"]["n"] == 1000
    assert d["inputs"]["file"] == str(f) and d["version"] == shuffledp.__version__
