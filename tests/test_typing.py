"""The public API is typed (the package ships py.typed) and the hints are checked by mypy.

The mypy configuration (``[tool.mypy]`` in pyproject.toml) lists the modules that define
``shuffledp.__all__``; it is lenient on purpose (internals are followed for their types,
their own errors are not reported).
"""

import inspect
import pathlib
import subprocess
import sys

import pytest

import shuffledp as sd

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: Methods whose return type is an internal structure of the blanket bound, not API.
_NOT_API = {"blanket_pairs"}


def test_mypy_passes_on_the_public_api(tmp_path):
    pytest.importorskip("mypy")
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "Success" in proc.stdout


def test_mypy_checks_every_module_defining_the_public_api():
    tomllib = pytest.importorskip("tomllib")     # Python >= 3.11
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    checked = {pathlib.Path(f).as_posix() for f in cfg["files"]}
    for name in sd.__all__:
        obj = getattr(sd, name)
        mod = obj.__name__ if inspect.ismodule(obj) else obj.__module__
        path = pathlib.Path(sys.modules[mod].__file__).relative_to(ROOT).as_posix()
        assert path in checked, f"{name} is defined in {path}, which mypy does not check"


def _public_callables():
    objs = {n: getattr(sd, n) for n in sd.__all__ if not inspect.ismodule(getattr(sd, n))}
    objs.update({f"calibrate.{n}": getattr(sd.calibrate, n) for n in sd.calibrate.__all__})
    for name, obj in objs.items():
        if inspect.isclass(obj):
            for m, f in vars(obj).items():
                if (m.startswith("_") and m != "__init__") or m in _NOT_API:
                    continue
                f = f.fget if isinstance(f, property) else f
                f = f.__func__ if isinstance(f, (staticmethod, classmethod)) else f
                if inspect.isfunction(f):
                    yield f"{name}.{m}", f
        elif inspect.isfunction(obj):
            yield name, obj


def test_every_public_function_and_method_is_annotated():
    missing = []
    for name, f in _public_callables():
        sig = inspect.signature(f)
        params = [p for p, v in sig.parameters.items()
                  if p not in ("self", "cls") and v.annotation is inspect.Parameter.empty]
        if params or sig.return_annotation is inspect.Signature.empty:
            missing.append(f"{name}({', '.join(params)})"
                           + (" -> ?" if sig.return_annotation is inspect.Signature.empty else ""))
    assert missing == []


def test_the_package_is_marked_typed():
    assert (ROOT / "src" / "shuffledp" / "py.typed").is_file()
