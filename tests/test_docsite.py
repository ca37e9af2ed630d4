"""The documentation site builds with --strict, covers every page and every public name,
and the examples in the public docstrings print what they say."""

import doctest
import importlib
import os
import pathlib
import re
import subprocess
import sys

import pytest

import shuffledp as sd

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_docs_page_is_in_the_site_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert [p for p in pages if f" {p}" not in nav] == []


def test_api_page_documents_every_public_name():
    text = (ROOT / "docs" / "api.md").read_text()
    documented = set(re.findall(r"^::: shuffledp\.(\w+)", text, re.M))
    assert set(sd.__all__) - documented == set()
    members = re.search(r"::: shuffledp\.calibrate\n\s+options:\n\s+members: \[(.*?)\]", text)
    assert set(sd.calibrate.__all__) <= {m.strip() for m in members.group(1).split(",")}


@pytest.mark.parametrize("module", ["shuffledp", "shuffledp.accounting.accountant", "shuffledp.core.results",
                                    "shuffledp.accounting.ledger", "shuffledp.accounting.calibrate"])
def test_docstring_examples_print_what_they_say(module):
    failed, _ = doctest.testmod(importlib.import_module(module), verbose=False,
                                optionflags=doctest.ELLIPSIS)
    assert failed == 0


def test_site_builds_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    pytest.importorskip("material")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "WARNING" not in proc.stderr
    api = (tmp_path / "site" / "api.html").read_text()
    # The reference is generated from the docstrings: the signature and a parameter table.
    assert "Smallest certified ε such that" in api and "Parameters" in api
    anchors = set(re.findall(r'id="shuffledp\.([\w.]+)"', api))
    missing = [n for n in sd.__all__ if n not in anchors]
    missing += [f"calibrate.{n}" for n in sd.calibrate.__all__ if f"calibrate.{n}" not in anchors]
    assert missing == []
    assert (tmp_path / "site" / "figures" / "fmt23-fig3.png").is_file()   # gallery images


def test_quote_page_example_prints_what_the_page_shows():
    import contextlib
    import io
    text = (ROOT / "docs" / "quote.md").read_text()
    code, shown = re.search(r"```python\n(.*?)```\s*prints\s*```text\n(.*?)```", text, re.S).groups()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, "quote.md", "exec"), {})
    assert buf.getvalue() == shown


def test_tutorials_are_in_the_navigation_and_quote_the_library():
    """The tutorials (issue 31) are reachable from the site's navigation, and the telemetry
    tutorial's one-round answer is what the accountant returns today."""
    import pathlib

    import shuffledp as sd
    root = pathlib.Path(__file__).resolve().parents[1]
    nav = (root / "mkdocs.yml").read_text().split("nav:", 1)[1]
    for page in ("tutorial-telemetry.md", "tutorial-budget.md", "fl.md", "conventions.md"):
        assert page in nav, page
    text = (root / "docs" / "tutorial-telemetry.md").read_text()
    r = sd.epsilon(sd.Shuffle(sd.RandomizedResponse(2.0, k=2), n=100_000), 1e-6)
    assert f"*  fmt23       {r.epsilon:.6g}  upper" in text and r.bound == "fmt23"
