"""core/ and sims/ run without Qt: importing every module there must load no Qt module."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules(package: str) -> list[str]:
    names = [package]
    for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
        names.append(info.name)
    return names


@pytest.mark.slow
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


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) for every import in a file, at any depth (function-level ones included)."""
    import ast

    out: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, [a.name for a in node.names]))
    return out


def test_the_gui_computes_only_what_core_declares():
    """The GUI never runs an engine in its process (README, Architecture). What it may compute with
    core/sims code is declared, with the reason, in core.simulate.replay.GUI_COMPUTES (the stepper's
    replay and the pure helpers that draw its steps): gui/ imports no other simulator module and no
    private name of core or sims."""
    from core.simulate.replay import GUI_COMPUTES

    bad = []
    for f in sorted((ROOT / "gui").rglob("*.py")):
        for mod, names in _imports(f):
            top = mod.split(".")[0]
            if top not in ("core", "sims"):
                continue
            bad += [f"{f.relative_to(ROOT)} imports private {mod}.{n}" for n in names
                    if n.startswith("_") and not n.startswith("__")]
            if top == "sims":
                for target in [mod] if mod != "sims.scamp5" else [f"{mod}.{n}" for n in names]:
                    if target not in GUI_COMPUTES:
                        bad.append(f"{f.relative_to(ROOT)} imports {target}, not declared in GUI_COMPUTES")
    assert not bad, "\n".join(bad)
    assert "core.simulate.replay" in GUI_COMPUTES and all(GUI_COMPUTES.values())
