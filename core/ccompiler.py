"""The system C compiler, for the engines that build C (MERIT's generated code, Cappuccino's
synthesised programs, Cain's compiled published search): `$CC` when it names one on PATH, else the
first of the usual names found."""

from __future__ import annotations

import os
import shutil


def find_compiler(names: tuple[str, ...] = ("gcc", "cc", "clang")) -> str | None:
    env = os.environ.get("CC")
    if env and shutil.which(env):
        return shutil.which(env)
    for n in names:
        path = shutil.which(n)
        if path:
            return path
    return None
