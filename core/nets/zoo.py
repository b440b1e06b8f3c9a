"""The built-in model zoo: each module in core/nets/models/ defines NAME, TITLE and build()."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from core.nets.layers import Network


@lru_cache(maxsize=None)
def _modules() -> dict:
    from core.nets import models

    mods = {}
    for info in pkgutil.iter_modules(models.__path__):
        mod = importlib.import_module(f"core.nets.models.{info.name}")
        mods[mod.NAME] = mod
    return dict(sorted(mods.items()))


def names() -> list[str]:
    return list(_modules())


def titles() -> dict[str, str]:
    return {n: m.TITLE for n, m in _modules().items()}


def get(name: str) -> Network:
    """A fresh copy of a zoo network by name (e.g. "vgg16")."""
    mods = _modules()
    if name not in mods:
        raise KeyError(f"unknown network {name!r}; known: {', '.join(mods)}")
    return mods[name].build()
