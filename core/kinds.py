"""Open registries of library item kinds: workloads (kernel sets, CNNs, MERIT transforms, ...) and
targets (SCAMP-5, FPGA boards, ...).

A kind registers itself where its class is defined, with what the rest of the program needs of it:
its title, its JSON reader, a one-line summary for the library, the items a fresh project starts
with, and how a new item of the kind is made (with its named variants). Session reading, the starter
project, the library browser and its "Add" menu look kinds up here, and the GUI finds each kind's
editor from it (gui/editors/<kind>.py), so adding a kind touches no shared file: a package
`core/<pkg>/` that defines kinds does so in a module `core/<pkg>/item_kinds.py`, which the registry
imports on first use (as core.engine finds engines). The engines that fit a kind are the engines
that name it (EngineSpec.workload_kinds / target_kinds).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Literal, Mapping

Lib = Literal["workloads", "targets"]
LIBS: tuple[Lib, ...] = ("workloads", "targets")


@dataclass(frozen=True)
class ItemKind:
    """One kind of library item."""

    lib: Lib
    name: str                                       # the JSON "kind", e.g. "kernels"
    title: str                                      # for people, e.g. "Convolution kernels"
    cls: type
    read: Callable[[Any, str], Any]                 # (JSON form, field path) -> item; InputError on bad input
    summary: Callable[[Any], str]                   # one line for the library browser
    new: Callable[[str | None], tuple[str, Any]]    # variant (None: the default) -> (name, item)
    variants: Callable[[], dict[str, str]] = field(default=lambda: {})     # variant -> title
    # a fresh project's items of this kind: (rank in the starter library, name, item)
    starters: Callable[[], list[tuple[int, str, Any]]] = field(default=lambda: [])
    order: int = 100                                # place in lists of kinds
    # the name an item takes from its values ("Accelerator, 64 KiB"): an item so named follows its
    # values when they change, until the user renames it (core.project); None: names are the user's
    auto_name: Callable[[Any], str] | None = None


_KINDS: dict[Lib, dict[str, ItemKind]] = {"workloads": {}, "targets": {}}
_DISCOVERED = False
_REGISTERED = 0         # kinds registered so far: the sorted lists below are of this many
# per library: (the registry dict sorted, the registration count then, the kinds in their order);
# kinds() is read tens of thousands of times per session (titles, problems, editors)
_SORTED: dict[Lib, tuple[dict[str, ItemKind], int, dict[str, ItemKind]]] = {}


def register(kind: ItemKind) -> ItemKind:
    """Add a kind (a second kind of the same name in the same library is a programming error)."""
    known = _KINDS[kind.lib]
    if kind.name in known and known[kind.name].cls is not kind.cls:
        raise ValueError(f"a second {kind.lib[:-1]} kind is named {kind.name!r}")
    known[kind.name] = kind
    global _REGISTERED
    _REGISTERED += 1
    return kind


def _discover() -> None:
    """Import every core/<pkg>/item_kinds.py (and core.workload, which defines the common kinds)."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    import core

    importlib.import_module("core.workload")
    for info in pkgutil.iter_modules(core.__path__):
        if info.ispkg and (Path(core.__path__[0]) / info.name / "item_kinds.py").exists():
            importlib.import_module(f"core.{info.name}.item_kinds")


def kinds(lib: Lib) -> dict[str, ItemKind]:
    """The kinds of a library, in their order."""
    _discover()
    known = _KINDS[lib]
    cached = _SORTED.get(lib)
    if cached is None or cached[0] is not known or cached[1] != _REGISTERED:
        cached = _SORTED[lib] = (known, _REGISTERED, dict(sorted(known.items(), key=lambda kv: (kv[1].order, kv[0]))))
    return dict(cached[2])


def titles(lib: Lib) -> dict[str, str]:
    return {name: k.title for name, k in kinds(lib).items()}


def kind_of(lib: Lib, name: str) -> ItemKind | None:
    return kinds(lib).get(name)


def generated_name(lib: Lib, value: Any) -> str | None:
    """The name an item of its kind takes from its values, or None where the kind has none."""
    k = kinds(lib).get(str(getattr(value, "kind", "")))
    return k.auto_name(value) if k is not None and k.auto_name is not None else None


def starters(lib: Lib) -> list[tuple[str, Any]]:
    """The items a fresh project's library starts with, in their rank."""
    items = [s for k in kinds(lib).values() for s in k.starters()]
    return [(name, value) for _, name, value in sorted(items, key=lambda s: s[0])]


class KindTitles(Mapping[str, str]):
    """kind -> title of one library, read from the registry each time (so kinds registered later
    are in it): what the readers, the library and the choice bar list."""

    def __init__(self, lib: Lib) -> None:
        self.lib = lib

    def __getitem__(self, name: str) -> str:
        return kinds(self.lib)[name].title

    def __iter__(self) -> Iterator[str]:
        return iter(kinds(self.lib))

    def __len__(self) -> int:
        return len(kinds(self.lib))
