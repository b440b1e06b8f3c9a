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
