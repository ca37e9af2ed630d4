"""What a fresh process loads: ``import shuffledp`` and one CLI question import only what
they use (the public names stay importable), and the CLI's light parser for a question
command parses exactly as the full parser (docs/latency.md, "A fresh process")."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

import shuffledp as sd
from shuffledp.apps import cli

SRC = sd.__path__[0].rsplit("/", 1)[0]


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": SRC, "SHUFFLEDP_THREADS": "1"}, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _subparsers(parser) -> argparse._SubParsersAction:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def test_import_loads_no_accountant_and_every_public_name_resolves():
    out = _run("import sys, shuffledp\n"
               "print(sorted(m for m in sys.modules if m.startswith('shuffledp.')))\n"
               "print(type(shuffledp.bounds).__name__, shuffledp.bounds.__name__)\n")
    first, second = out.splitlines()
    for heavy in ("accounting", "bounds", "compose", "pairs", "numerics", "apps"):
        assert f"'shuffledp.{heavy}" not in first, first
    # the first access of the registry as an attribute (once recursed through __getattr__)
    assert second == "module shuffledp.bounds"
    for name in sd.__all__:
        assert getattr(sd, name) is not None
    assert "epsilon" in dir(sd) and "calibrate" in dir(sd)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        sd.nope                                                # noqa: B018


def test_star_import_gives_every_public_name():
    out = _run("from shuffledp import *\n"
               "print(epsilon.__module__, calibrate.__name__, Accountant.__module__)\n")
    assert out.split() == ["shuffledp.accounting.accountant", "shuffledp.accounting.calibrate",
                           "shuffledp.accounting.ledger"]


def test_the_command_table_matches_the_modules():
    names = list(_subparsers(cli.build_parser()).choices)
    assert names[:len(cli.CORE_COMMANDS)] == list(cli.CORE_COMMANDS)
    assert names[len(cli.CORE_COMMANDS):] == [c for _, cs in cli.COMMAND_MODULES for c in cs]


@pytest.mark.parametrize("argv", [
    ["epsilon", "--eps0", "1", "--n", "1e4", "--delta", "1e-6", "--rounds", "3"],
    ["delta", "--mechanism", "rr:3", "--eps0", "2", "--n", "500", "--epsilon", "0.5", "--json"],
    ["rdp", "--eps0", "1", "--n", "1000", "--orders", "2,4"],
    ["calibrate", "eps0", "--n", "1e4", "--epsilon", "1", "--delta", "1e-6"],
    ["bounds", "--json"],
])
def test_the_light_parser_parses_as_the_full_one(argv):
    full, light = cli.build_parser(), cli.build_parser(argv[0])
    assert len(_subparsers(light).choices) == len(_subparsers(full).choices)
    assert light.format_usage() == full.format_usage()
    a, b = vars(full.parse_args(argv)), vars(light.parse_args(argv))
    assert a.keys() == b.keys()
    for k in a:
        if callable(a[k]):                   # a command's run function: a new closure each build
            assert a[k].__qualname__ == b[k].__qualname__
        else:
            assert a[k] == b[k], k


def test_the_light_parser_reports_errors_as_the_full_one(capsys):
    argv = ["epsilon", "--eps0", "1", "--n", "100", "--delta", "1e-6", "--bogus"]
    assert cli.main(argv) == 2
    light = capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(argv)
    full = capsys.readouterr().err
    assert light == full
    assert "unrecognized arguments: --bogus" in light and "{epsilon,delta," in light


def test_a_cli_question_loads_only_what_it_uses():
    out = _run("import io, sys, contextlib\n"
               "from shuffledp.apps import cli\n"
               "with contextlib.redirect_stdout(io.StringIO()) as f:\n"
               "    status = cli.main(['epsilon', '--eps0', '1', '--n', '1000', '--delta', '1e-6'])\n"
               "assert status == 0 and 'answer: epsilon' in f.getvalue()\n"
               "print(' '.join(sorted(sys.modules)))\n")
    loaded = set(out.split())
    for mod in ("shuffledp.apps.report", "shuffledp.apps.sweep", "shuffledp.apps.figures",
                "shuffledp.apps.plots", "shuffledp.apps.fl.cli", "shuffledp.apps.example_files",
                "shuffledp.accounting.calibrate", "shuffledp.accounting.ledger",
                "shuffledp.accounting.deployment"):
        assert mod not in loaded, mod
    assert "shuffledp.accounting.select" in loaded        # the question was answered


def test_version_is_printed_on_stdout(capsys):
    assert cli.main(["--version"]) == 0
    out = capsys.readouterr()
    assert out.out == f"shuffledp {cli.version_text()}\n" and out.err == ""


def test_a_fresh_question_process_sets_malloc_before_its_first_fft():
    # main() without argv is the process's own command line: the library's malloc setting
    # (numerics.keep_freed_memory) is applied before the parser is built, so before any
    # array of the question; main(argv) leaves it to the first certified FFT.
    code = ("import sys, io, contextlib\n"
            "from shuffledp.apps import cli\n"
            "from shuffledp.numerics import fft\n"
            "seen, build = [], cli.build_parser\n"
            "cli.build_parser = lambda *a: (seen.append(fft._malloc_done), build(*a))[1]\n"
            "argv = ['epsilon', '--eps0', '1', '--n', '1000', '--delta', '1e-6']\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    if sys.argv[1] == 'command-line':\n"
            "        sys.argv[1:] = argv\n"
            "        assert cli.main() == 0\n"
            "    else:\n"
            "        assert cli.main(argv) == 0\n"
            "print(seen[0])\n")
    outs = [subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True,
                           env={"PYTHONPATH": SRC, "SHUFFLEDP_THREADS": "1"}, timeout=120)
            for mode in ("command-line", "argv")]
    assert [o.stdout.strip() for o in outs] == ["True", "False"], [o.stderr for o in outs]


def test_a_question_answers_the_same_with_malloc_set_at_the_start():
    # The allocator setting moves where arrays live, never what is computed in them.
    argv = ["epsilon", "--eps0", "1", "--n", "1e6", "--delta", "1e-6", "--rounds", "4",
            "--json"]
    code = ("import sys, json, io, contextlib\n"
            "from shuffledp.apps import cli\n"
            "mode = sys.argv[1]\n"
            "with contextlib.redirect_stdout(io.StringIO()) as f:\n"
            "    if mode == 'command-line':\n"
            f"        sys.argv[1:] = {argv!r}\n"
            "        assert cli.main() == 0\n"
            "    else:\n"
            f"        assert cli.main({argv!r}) == 0\n"
            "d = json.loads(f.getvalue())\n"
            "print(repr([d['epsilon']] + [c['epsilon'] for c in d['candidates']]))\n")
    env = {"PYTHONPATH": SRC, "SHUFFLEDP_THREADS": "1"}
    outs = [subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True,
                           env=dict(env, **extra), timeout=120)
            for mode, extra in (("command-line", {}), ("argv", {"SHUFFLEDP_MALLOC": "system"}))]
    assert all(o.returncode == 0 for o in outs), [o.stderr for o in outs]
    assert outs[0].stdout == outs[1].stdout and outs[0].stdout.startswith("[")
