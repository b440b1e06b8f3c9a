"""core/ and sims/ run without Qt: importing every module there must load no Qt module."""

import pkgutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules(package: str) -> list[str]:
    names = [package]
    for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
        names.append(info.name)
    return names


def test_core_and_sims_import_no_qt():
    mods = _modules("core") + _modules("sims")
    assert "core.session" in mods and "core.jobs" in mods
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}:\n"
        "    importlib.import_module(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('PySide6', 'PyQt5', 'PyQt6', 'pyqtgraph', 'superqt', 'qtpy', 'shiboken6'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"Qt modules loaded by core/sims: {out.stdout.strip()}"


def test_every_engine_loads():
    from core.engine import LOAD_ERRORS, engines

    names = engines()
    assert not LOAD_ERRORS, LOAD_ERRORS
    assert len({s.order for s in names.values()}) == len(names)


def _layers() -> list[str]:
    import re
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contracts = [c for c in conf["contracts"] if c["type"] == "layers"]
    assert len(contracts) == 1 and "ignore_imports" not in contracts[0], "one layers contract, with no exceptions"
    return [m for layer in contracts[0]["layers"] for m in re.split(r"[|:]", layer.strip("()").replace("(", "")
                                                                      .replace(")", "")) if m.strip()]


def test_every_module_of_core_and_sims_sits_in_a_layer():
    """import-linter checks only the modules its layers name, so a new module outside every layer
    would be free to import anything: each module must be a named layer or inside one."""
    named = {m.strip() for m in _layers()}
    loose = [m for m in _modules("core") + _modules("sims") if m not in ("core", "sims")
             and not any(m == n or m.startswith(n + ".") for n in named)]
    assert not loose, f"modules in no import-linter layer (pyproject.toml): {loose}"
