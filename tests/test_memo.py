"""``shuffledp.clear_caches()`` empties every memo cache of the library.

The caches are found here independently of the registry: every function decorated with
``lru_cache`` / ``cache`` / ``memo`` in the source (read with ``ast``), and the hand-kept
dict caches the registry names. A cache added later with any of these decorators is
checked without editing this file.
"""

import ast
import importlib
import pathlib

import shuffledp as sd
from shuffledp.core import _memo

SRC = pathlib.Path(sd.__file__).resolve().parent
DECORATORS = {"lru_cache", "cache", "memo"}


def _decorated():
    """{module name: [qualified names of memoised functions]} from the source."""
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        mod = ".".join(("shuffledp",) + path.relative_to(SRC).with_suffix("").parts)
        mod = mod.removesuffix(".__init__")
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for d in node.decorator_list:
                f = d.func if isinstance(d, ast.Call) else d
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name in DECORATORS:
                    out.setdefault(mod, []).append(node.name)
    return out


def test_every_memo_in_the_source_is_registered_and_cleared():
    found = _decorated()
    assert sum(map(len, found.values())) >= 10            # the scan works
    for mod in found:
        importlib.import_module(mod)
    sd.epsilon(sd.Shuffle(sd.LDP(1.0), n=500), 1e-6, rounds=3)     # fills some caches
    sd.epsilon(sd.Shuffle(sd.RandomizedResponse(2.0, 3), n=50, sampling=sd.CheckIn(0.5)), 1e-6)
    reg = _memo.caches()
    for mod, names in found.items():
        for name in names:
            assert f"{mod}.{name}" in reg, f"{mod}.{name} is memoised but not in the registry"
    assert any(c.cache_info().currsize for c in reg.values() if hasattr(c, "cache_info"))
    sd.clear_caches()
    for name, c in reg.items():
        size = c.cache_info().currsize if hasattr(c, "cache_info") else len(c)
        assert size == 0, f"{name} still holds {size} entries"


def test_clearing_changes_no_answer():
    p = sd.Shuffle(sd.RandomizedResponse(1.0, 4), n=2000)
    a = sd.epsilon(p, 1e-7, rounds=5).epsilon
    sd.clear_caches()
    assert sd.epsilon(p, 1e-7, rounds=5).epsilon == a
