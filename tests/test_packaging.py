"""What a pip user gets: the license, py.typed, the example files and the CLI to print them.

The wheel test builds the sdist and, from it, the wheel exactly as ``python -m build`` does,
but with the installed setuptools (``--no-isolation``: no network), and checks that the
build prints no warning and that ``twine check`` accepts both files.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from shuffledp.apps import example_files
from shuffledp.apps.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "src" / "shuffledp" / "examples"


def test_examples_live_only_inside_the_package():
    # One copy: the repository's examples are the package's (a root examples/ directory
    # would not reach pip users and would drift from the shipped files).
    assert not (ROOT / "examples").exists(), \
        "move new examples into src/shuffledp/examples/ (shipped in the wheel)"
    names = sorted(p.stem for p in EXAMPLES.iterdir() if p.suffix in (".toml", ".json", ".py"))
    assert len(names) == len(set(names)), "two examples with the same name"
    assert example_files.names() == names
    assert {"budget", "scenario"} <= set(names)


@pytest.mark.parametrize("name", sorted(p.stem for p in EXAMPLES.glob("*.*")
                                        if p.suffix in (".toml", ".json", ".py")))
def test_example_command_prints_the_file_verbatim(name, capsys):
    path = next(EXAMPLES.glob(f"{name}.*"))
    assert main(["example", name]) == 0
    assert capsys.readouterr().out == path.read_text(encoding="utf-8")
    assert main(["example", path.name]) == 0          # the file name works too
    assert capsys.readouterr().out == path.read_text(encoding="utf-8")


def test_example_list_names_every_example_with_a_summary(capsys):
    assert main(["example", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [l.split()[0] for l in lines] == example_files.names()
    assert all(len(l.split()) > 3 for l in lines), "each example says what it is"


def test_example_unknown_name_suggests_the_closest(capsys):
    assert main(["example", "budgte"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'budget'" in err and "'budgte'" in err and "Traceback" not in err


def test_shipped_ledger_is_a_valid_ledger():
    pytest.importorskip("dp_accounting")          # its third entry is a central event
    from shuffledp.interop import ledger_io
    acc, data = ledger_io.load_ledger(str(EXAMPLES / "budget.toml"))
    assert data["delta"] == 1e-6 and len(acc.entries) == 3


def test_shipped_scenario_and_scripts_are_valid_inputs():
    from shuffledp.apps import report
    sc = report.load_scenario(str(EXAMPLES / "scenario.toml"))
    assert sc["n"] == 50000 and "calibration" in sc["sections"]
    for script in EXAMPLES.glob("*.py"):
        compile(script.read_text(), str(script), "exec")


def test_readme_links_survive_a_package_index():
    # The README is the package's long description: a relative link or image there is
    # broken on the index page, and the project has no public URL to make them absolute.
    text = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)]+)\)", text) + re.findall(r'src="([^"]+)"', text)
    assert [t for t in targets if not re.match(r"https?://", t)] == []
    for named in re.findall(r"`(docs/[\w.-]+\.md)`", text):
        assert (ROOT / named).is_file(), f"README names {named}, which does not exist"


def _source_copy(dst: pathlib.Path) -> pathlib.Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc", ".pytest_cache",
                                    ".hypothesis", "build", "dist")
    for name in ("pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "MANIFEST.in",
                 "Makefile", "mkdocs.yml"):
        shutil.copy2(ROOT / name, dst / name)
    for name in ("src", "docs", "tests"):
        shutil.copytree(ROOT / name, dst / name, ignore=ignore)
    return dst


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    pytest.importorskip("build")
    src = _source_copy(tmp_path_factory.mktemp("src"))
    out = tmp_path_factory.mktemp("dist")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir",
                           str(out), str(src)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out, proc.stdout + proc.stderr


def test_build_prints_no_warning(built):
    _, log = built
    warnings = [l for l in log.splitlines() if re.search(r"warn|deprecat", l, re.I)]
    assert warnings == []


def test_wheel_ships_license_typing_marker_and_examples(built):
    out, _ = built
    (whl,) = out.glob("*.whl")
    names = set(zipfile.ZipFile(whl).namelist())
    assert "shuffledp/py.typed" in names
    shipped = {n.rsplit("/", 1)[1] for n in names if n.startswith("shuffledp/examples/")}
    assert {p.name for p in EXAMPLES.iterdir() if p.is_file()} <= shipped
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(whl).read(meta).decode()
    assert "License-Expression: Apache-2.0" in text and "License-File: LICENSE" in text
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_sdist_ships_docs_tests_license_and_changelog(built):
    out, _ = built
    (sdist,) = out.glob("*.tar.gz")
    names = {n.split("/", 1)[1] for n in tarfile.open(sdist).getnames() if "/" in n}
    for need in ("LICENSE", "CHANGELOG.md", "mkdocs.yml", "docs/bounds.md", "tests/conftest.py",
                 "tests/oracle.py", "src/shuffledp/py.typed", "src/shuffledp/examples/budget.toml"):
        assert need in names, need


def test_twine_check_passes(built):
    pytest.importorskip("twine")
    out, _ = built
    proc = subprocess.run([sys.executable, "-m", "twine", "check", "--strict",
                           *map(str, sorted(out.iterdir()))], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2
