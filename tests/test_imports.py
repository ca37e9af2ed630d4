"""Import cycles between the modules of ``shuffledp``, read from the source with ``ast``.

Every ``import`` / ``from ... import`` counts, at module level or inside a function (a
function-local import only postpones a cycle). A cycle is a strongly connected component
of more than one module. The cycles known today are listed in ``KNOWN_CYCLES``: the test
fails when a new one appears or a known one takes in another module (the count can only
go down), and when a known one is gone (delete it from the list: the ratchet tightens).
"""

from __future__ import annotations

import ast
import pathlib
import sys

import shuffledp

SRC = pathlib.Path(shuffledp.__file__).resolve().parent
PKG = "shuffledp"

#: Cycles still in the code (issue 28 lists how they go): remove an entry when its cycle
#: is broken; never add one.
KNOWN_CYCLES = [
]


def _modules() -> dict[str, tuple[pathlib.Path, bool]]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = (PKG,) + path.relative_to(SRC).with_suffix("").parts
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _targets(node, here: str, is_pkg: bool, mods) -> list[str]:
    """The package modules an import statement of module ``here`` loads."""
    if isinstance(node, ast.Import):
        return [a.name if a.name in mods else a.name.rpartition(".")[0]
                for a in node.names
                if a.name in mods or a.name.rpartition(".")[0] in mods]
    if node.level:
        base = (here if is_pkg else here.rpartition(".")[0]).split(".")
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    out = []
    for a in node.names:
        sub = f"{target}.{a.name}"
        if sub in mods:                  # from . import calibrate: the submodule
            out.append(sub)
        elif target in mods:             # from .ledger import Accountant: the module
            out.append(target)
    return out


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph = {m: set() for m in mods}
    for m, (path, is_pkg) in mods.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[m].update(t for t in _targets(node, m, is_pkg, mods) if t != m)
    return graph


def cycles(graph) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return out


def test_the_graph_is_read():
    g = import_graph()
    assert len(g) >= 30
    assert "shuffledp.accounting.ledger" in g["shuffledp.interop.ledger_io"]           # from .ledger import ...
    assert "shuffledp.compose.conversions" in g["shuffledp.bounds.base"]    # from .. import conversions
    assert "shuffledp.accounting.calibrate" in g["shuffledp"]                  # from . import calibrate
    # a planted cycle is found
    g2 = {k: set(v) for k, v in g.items()}
    g2["shuffledp.numerics"].add("shuffledp.accounting.ledger")
    assert any({"shuffledp.numerics", "shuffledp.accounting.ledger"} <= c for c in cycles(g2))


def test_no_new_import_cycle():
    found = cycles(import_graph())
    for c in found:
        assert any(c <= k for k in KNOWN_CYCLES), (
            f"new import cycle (or a known one grew): {sorted(c)}; import downwards only")
    for k in KNOWN_CYCLES:
        assert any(k <= c for c in found), (
            f"the cycle {sorted(k)} is gone: delete it from KNOWN_CYCLES")
    assert len(found) <= len(KNOWN_CYCLES)


#: Layers above the pairs (issue 28, item 3): a module of ``shuffledp.pairs`` may not
#: import any of them, directly or through another module.
ABOVE_PAIRS = ("shuffledp.bounds", "shuffledp.compose", "shuffledp.accounting.accountant",
               "shuffledp.accounting.ledger", "shuffledp.accounting.calibrate", "shuffledp.apps.cli")


def _above_pairs(name: str) -> bool:
    return any(name == a or name.startswith(a + ".") for a in ABOVE_PAIRS)


def pairs_violations(g) -> list[str]:
    """Modules of ``shuffledp.pairs`` that import a layer above them, directly or through
    the modules they import."""
    out = []
    for m in sorted(x for x in g if x == "shuffledp.pairs" or x.startswith("shuffledp.pairs.")):
        seen, todo = set(), [m]
        while todo:
            for t in g[todo.pop()] - seen:
                seen.add(t)
                todo.append(t)
        reached = sorted(t for t in seen if _above_pairs(t))
        if reached:
            out.append(f"{m} -> {reached}")
    return out


def test_pairs_import_only_below_them():
    g = import_graph()
    assert "shuffledp.pairs.clone.hockey" in g and "shuffledp.pairs.base" in g
    bad = pairs_violations(g)
    assert not bad, "pairs sit below bounds and composers:\n" + "\n".join(bad)


def test_the_pairs_check_finds_an_upward_import():
    g = {k: set(v) for k, v in import_graph().items()}
    # through another module: hockey -> numerics -> ledger (planted)
    g["shuffledp.numerics"].add("shuffledp.accounting.ledger")
    bad = pairs_violations(g)
    assert any(b.startswith("shuffledp.pairs.clone.hockey ->") and "shuffledp.accounting.ledger" in b
               for b in bad)
    assert not _above_pairs("shuffledp.boundsx") and _above_pairs("shuffledp.bounds.clones")


def _private_imports() -> list[tuple[str, str]]:
    """(importing module, imported name) for every private name (one leading underscore)
    imported from a module in another folder. The package's private *modules* (``_lazy``,
    ``_validate``, ``_memo``, ...) are its internals and may be imported anywhere inside it;
    a private function, class or constant may only be imported by a module of its own
    folder (a name another layer needs is given a public name)."""
    out = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        here = list(rel.parent.parts)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = here[:len(here) - (node.level - 1)] if node.level > 1 else here
                target = base + (node.module.split(".") if node.module else [])
            elif (node.module or "").split(".")[0] == PKG:
                target = node.module.split(".")[1:]
            else:
                continue
            for a in node.names:
                if not a.name.startswith("_") or a.name.startswith("__"):
                    continue
                if (SRC.joinpath(*target, a.name + ".py").exists()
                        or SRC.joinpath(*target, a.name).is_dir()):
                    continue                        # a private module: package internals
                # the module holding the name: target (a module path); its folder
                mod_dir = target[:-1] if SRC.joinpath(*target).with_suffix(".py").exists() \
                    else target
                if mod_dir != here:
                    out.append((str(rel), ".".join(target + [a.name])))
    return out


def test_no_private_name_is_imported_from_another_folder():
    bad = _private_imports()
    assert not bad, f"private names imported across folders (give them public names): {bad}"


#: The layers, lowest first: each is a folder of ``src/shuffledp``, and a module may
#: import only from its own folder and the folders below (docs/architecture.md). The
#: top level holds only the public API: ``__init__`` (what ``import shuffledp`` gives),
#: ``__main__`` (``python -m shuffledp``) and the public paths of the integrations
#: (``shuffledp.opacus``, ``shuffledp.flower``: the interop modules themselves); the
#: example scripts shipped in ``examples/`` count as apps.
LAYERS = ["core", "numerics", "pairs", "compose", "bounds", "accounting", "interop", "apps"]
#: Top-level modules and the layer they count in (None: the public API, may import all).
TOP_LEVEL = {"shuffledp": None, "shuffledp.__main__": None, "shuffledp.opacus": None,
             "shuffledp.flower": None}


def _layer(module: str):
    if module in TOP_LEVEL:
        return TOP_LEVEL[module]
    parts = module.split(".")[1:]
    if parts and parts[0] in LAYERS:
        return LAYERS.index(parts[0])
    if parts and parts[0] == "examples":          # scripts shipped as files for users
        return LAYERS.index("apps")
    raise AssertionError(f"module {module} is in no layer folder: move it into one of "
                         f"{LAYERS} (or add a public alias to TOP_LEVEL)")


def _upward(g) -> list:
    return sorted((m, LAYERS[_layer(m)], d, LAYERS[_layer(d)])
                  for m, deps in g.items() if _layer(m) is not None
                  for d in deps if _layer(d) is not None and _layer(d) > _layer(m))


def test_every_module_is_in_a_layer_folder():
    for m in import_graph():
        _layer(m)                                 # raises for a module outside the folders
    assert _layer("shuffledp.core.results") == 0 and _layer("shuffledp.apps.fl.sim") == 7


def test_imports_only_go_down_the_layers():
    up = _upward(import_graph())
    assert not up, f"upward imports (module, layer, imports, higher layer): {up}"


def test_an_upward_import_is_caught():
    g = import_graph()
    g["shuffledp.pairs.law"] = set(g["shuffledp.pairs.law"]) | {"shuffledp.accounting.select"}
    assert _upward(g) == [("shuffledp.pairs.law", "pairs", "shuffledp.accounting.select", "accounting")]
