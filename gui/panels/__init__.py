"""Engine panels. Each module here defines PANEL, an EnginePanel subclass for one engine;
engines without a module get the GenericPanel."""

from __future__ import annotations

import importlib
import pkgutil

from gui.panels.base import EnginePanel


def panel_classes() -> dict[str, type[EnginePanel]]:
    found: dict[str, type[EnginePanel]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name in ("base", "generic"):
            continue
        mod = importlib.import_module(f"gui.panels.{info.name}")
        cls = getattr(mod, "PANEL", None)
        if cls is not None:
            found[cls.engine_name] = cls
    return found
