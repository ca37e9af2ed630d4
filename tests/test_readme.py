"""The README's Python example runs and prints what it claims (no stale examples)."""

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "the README has a Python example"
    quick = blocks[0]
    assert len([l for l in quick.strip().splitlines() if l.strip()]) <= 5, "five-line quick start"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(quick, "README.md", "exec"), {})
    lines = buf.getvalue().splitlines()
    eps, bound, kind = lines[0].split()[:3]
    assert kind == "upper" and 0 < float(eps) < 10 * 1.0
    assert 1.0 < float(lines[1]) < 50, "calibrated eps0 is a plausible number"


def test_readme_cli_commands_parse():
    from shuffledp.apps.cli import build_parser
    text = README.read_text()
    cli = re.findall(r"^shuffledp (.*?)(?:\s+#.*)?$", text, re.M)
    assert len(cli) >= 5
    parser = build_parser()
    for line in cli:
        parser.parse_args(line.split())
