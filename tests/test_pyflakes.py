"""The source and the tests stay free of pyflakes findings (unused and undefined names,
imports shadowing imports): an unused import in ``src`` is a module loaded for nothing at
``import shuffledp``, a shadowed test function is a test that never runs."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_ruff_pyflakes_rules_are_clean():
    pytest.importorskip("ruff")          # installed with the docs extra (make test has it)
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "F",
                          "--output-format", "concise", "--no-cache", "src", "tests"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
