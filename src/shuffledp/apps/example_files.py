"""The example files shipped inside the package: ``shuffledp example NAME > FILE``.

The ledger (``budget``), the report scenario (``scenario``) and the runnable scripts live
in ``shuffledp/examples/`` so that a ``pip install`` has them too; the README's commands
(``shuffledp compose budget.toml``) start from ``shuffledp example budget > budget.toml``.
"""

from __future__ import annotations

import argparse
import ast
from importlib import resources

__all__ = ["names", "text", "summary", "add_cli"]

_SUFFIXES = (".toml", ".json", ".py")


def _files() -> dict:
    root = resources.files("shuffledp") / "examples"
    return {f.name.rsplit(".", 1)[0]: f for f in sorted(root.iterdir(), key=lambda f: f.name)
            if f.is_file() and f.name.endswith(_SUFFIXES)}


def names() -> list[str]:
    """Every example's name (the file name without its suffix), sorted."""
    return sorted(_files())


def _lookup(name: str):
    files = _files()
    key = next((name[: -len(s)] for s in _SUFFIXES if name.endswith(s)), name)
    if key not in files:
        import difflib
        close = difflib.get_close_matches(key, list(files), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ValueError(f"example must be one of {', '.join(sorted(files))}; got "
                         f"{name!r}{hint}")
    return files[key]


def filename(name: str) -> str:
    """The file name of example ``name``, e.g. ``budget.toml``."""
    return _lookup(name).name


def text(name: str) -> str:
    """The content of example ``name`` (``budget`` or ``budget.toml``)."""
    return _lookup(name).read_text(encoding="utf-8")


def summary(name: str) -> str:
    """One line saying what the example is: a script's docstring or a file's first comment."""
    src, fname = text(name), filename(name)
    if fname.endswith(".py"):
        doc = ast.get_docstring(ast.parse(src)) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""
    for line in src.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return ""


def add_cli(sub, protocol_args, num, int_like):
    """``shuffledp example NAME`` prints one example file; ``--list`` names them all."""
    p = sub.add_parser(
        "example", help="print an example file (ledger, report scenario, script)",
        description="Print one of the example files shipped with shuffledp, to start your "
                    "own from it.",
        epilog="examples:\n  shuffledp example --list\n"
               "  shuffledp example budget > budget.toml && shuffledp compose budget.toml\n"
               "  shuffledp example scenario > my.toml && shuffledp report --scenario my.toml",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", nargs="?", default=None,
                   help="the example's name, e.g. budget (list them: --list)")
    p.add_argument("--list", action="store_true", help="list every example with what it is")

    def run(a) -> int:
        import sys
        if a.list or a.name is None:
            if a.name is not None:
                raise ValueError("give either an example name or --list, not both")
            fnames = {n: filename(n) for n in names()}
            w = max(len(n) for n in fnames)
            v = max(len(f) for f in fnames.values())
            for n, f in fnames.items():
                print(f"{n.ljust(w)}  {f.ljust(v)}  {summary(n)}")
            if not a.list:
                print("\nprint one with: shuffledp example NAME > FILE", file=sys.stderr)
            return 0
        sys.stdout.write(text(a.name))
        return 0

    p.set_defaults(func=run)
