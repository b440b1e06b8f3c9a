"""What an engine exposes, and the registry that finds engines without a central list.

Each engine lives in a package `core/<pkg>/` whose module `core/<pkg>/engine.py` defines
`ENGINE = EngineSpec(...)`. The GUI, the command line and session validation all work from this
registry, so adding an engine touches no shared file.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from core.jobs import CancelToken, Event
from core.results import EngineResult
from core.workload import Target, Workload, target_from_json, workload_from_json


@dataclass(frozen=True)
class JobRequest:
    """Everything a run needs: the workload and target picked in the window, and engine settings."""

    workload: Workload | None
    target: Target | None
    settings: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The request's one JSON form (what a worker process or a Dask worker is sent)."""
        return {"workload": None if self.workload is None else self.workload.to_json(),
                "target": None if self.target is None else self.target.to_json(),
                "settings": self.settings}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "JobRequest":
        return cls(None if d.get("workload") is None else workload_from_json(d["workload"]),
                   None if d.get("target") is None else target_from_json(d["target"]), dict(d.get("settings") or {}))


@dataclass(frozen=True)
class EngineSpec:
    name: str                      # CLI subcommand and session key, e.g. "cain"
    title: str                     # tab title, e.g. "FPSP code search"
    summary: str                   # what the engine does, shown before the first run
    run: Callable[[JobRequest, CancelToken], Iterator[Event]]
    default_settings: Callable[[], dict[str, Any]]
    add_cli_arguments: Callable[[argparse.ArgumentParser], None]
    request_from_cli: Callable[[argparse.Namespace], JobRequest]
    format_text: Callable[[EngineResult], str]     # the result for people (the command line without --json)
    # The engine's typed result (core.results.EngineResult subclass): what its run yields last, read
    # back on load (older versions brought forward) and read by its panel, text output and studies.
    result_type: type[EngineResult]
    # Workload kinds ("kernels", "cnn_set", "fpsp_filter") and target kinds ("scamp5", "fpga",
    # "dataflow", "mobile_soc") the engine reads from the window; empty when it uses none. The
    # window switches to a fitting kind when the user opens the engine's tab.
    workload_kinds: tuple[str, ...] = ()
    target_kinds: tuple[str, ...] = ()
    # The typed partial results the engine streams, by kind (Cain: {"plan": ProgramPlan}): classes with
    # `from_json(data, where)`, through which a session's or a study record's partial results are read.
    partial_types: dict[str, Any] = field(default_factory=dict)
    # JSON schema of the settings (validated on load). Its "properties" carry each setting's type and
    # range ("minimum"/"maximum"), a "title" (widget label) and a "description" (tooltip): the GUI's
    # binding builds its widgets' ranges from it, so a value core accepts is never clamped.
    settings_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    order: int = 100
    # Why a workload/target the kinds allow still does not fit (e.g. a CNN without weights for an
    # engine that needs them); None when it fits.
    workload_problem: Callable[[Workload], str | None] | None = None
    # Which of the fitting workloads a new project's tab starts on first (Cappuccino: the trained
    # digits CNN before VGG-16, which it runs too but in minutes); None: the library's order.
    preferred_workload: Callable[[Workload], bool] | None = None
    # Session format 1 kept some workloads and targets inside engine settings (MERIT's workload list,
    # Cappuccino's model, the bound's network): returns (settings without them, the workload and
    # target they implied, or None).
    migrate_v1_settings: Callable[[dict[str, Any]], tuple[dict[str, Any], Workload | None, Target | None]] | None = None
    # Session format 2 kept some target quantities in engine settings as overrides (the bound's memory
    # and word size): (settings, target as JSON or None) -> (settings without them, the target with them).
    migrate_v2_setup: Callable[[dict[str, Any], dict[str, Any] | None],
                               tuple[dict[str, Any], dict[str, Any] | None]] | None = None


_REGISTRY: dict[str, EngineSpec] | None = None
# Engines that failed to load: package -> reason. Shown in the GUI log and on the command line,
# and a test requires it to be empty; one broken engine must not take the others down.
LOAD_ERRORS: dict[str, str] = {}


def _discover() -> dict[str, EngineSpec]:
    import core

    found: dict[str, EngineSpec] = {}
    for info in pkgutil.iter_modules(core.__path__):
        if not info.ispkg or not (Path(core.__path__[0]) / info.name / "engine.py").exists():
            continue
        try:
            module = importlib.import_module(f"core.{info.name}.engine")
        except Exception as exc:
            LOAD_ERRORS[info.name] = f"{type(exc).__name__}: {exc}"
            continue
        spec = getattr(module, "ENGINE", None)
        if not isinstance(spec, EngineSpec):
            LOAD_ERRORS[info.name] = "core.%s.engine defines no ENGINE = EngineSpec(...)" % info.name
        elif spec.name in found:
            LOAD_ERRORS[info.name] = f"a second engine is named {spec.name!r}"
        else:
            found[spec.name] = spec
    return dict(sorted(found.items(), key=lambda kv: (kv[1].order, kv[0])))


def engines() -> dict[str, EngineSpec]:
    """All engines, in tab order."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = _discover()
    return _REGISTRY


def get_engine(name: str) -> EngineSpec:
    try:
        return engines()[name]
    except KeyError:
        raise KeyError(f"no engine named {name!r}; known: {', '.join(engines())}") from None
