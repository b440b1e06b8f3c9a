"""The system C compiler, for the engines that build C (MERIT's generated code, Cappuccino's
synthesised programs, Cain's compiled search and exact prover): `$CC` when it names one on PATH, else
the first of the usual names found; and CompiledLibrary, a C source of ours built and loaded once."""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

from core import faults


def find_compiler(names: tuple[str, ...] = ("gcc", "cc", "clang")) -> str | None:
    env = os.environ.get("CC")
    if env and shutil.which(env):
        return shutil.which(env)
    for n in names:
        path = shutil.which(n)
        if path:
            return path
    return None


class CompiledLibrary:
    """A C source of ours built into a shared library, once per version, and loaded once.

    The file is named by a hash of the source, the flags and the machine, so a stale build is never
    loaded; it is written to a temporary name and renamed, so a half-written library is never seen;
    a build or load that failed is remembered (raised again, not retried). `declare` gives the
    loaded library's functions their ctypes signatures. Errors are `error` with a readable message."""

    def __init__(self, source: Path, build_dir: Path, stem: str, flags: tuple[str, ...],
                 declare: Callable[[ctypes.CDLL], None], error: type[Exception], libs: tuple[str, ...] = (),
                 timeout_s: float = 120.0) -> None:
        self.source, self.build_dir, self.stem, self.flags, self.libs = source, build_dir, stem, flags, libs
        self.declare, self.error, self.timeout_s = declare, error, timeout_s
        self._lib: ctypes.CDLL | None = None
        self._failed: Exception | None = None

    def path(self) -> Path:
        try:
            text = self.source.read_bytes()
        except OSError as exc:
            raise self.error(f"the source {self.source} cannot be read: {exc}") from exc
        key = hashlib.sha256(text + " ".join(self.flags).encode() + platform.machine().encode())
        return self.build_dir / f"lib{self.stem}-{key.hexdigest()[:16]}.so"

    def build(self) -> Path:
        """Compile unless this version is built already."""
        out = self.path()
        if out.exists():
            return out
        cc = find_compiler()
        if cc is None:
            text = faults.no_compiler(self.source.name)
            raise self.error(text) from faults.NoCompiler(text)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=out.parent)
        except OSError as exc:      # the build folder is a file, read-only, full: the machine's, in words
            fault = faults.MachineFault(faults.folder_fault(out.parent, exc, f"the compiled {self.source.name}"))
            raise self.error(str(fault)) from fault
        os.close(fd)
        try:
            proc = subprocess.run([cc, *self.flags, "-o", tmp, str(self.source), *self.libs], capture_output=True,
                                  text=True, timeout=self.timeout_s)
            if proc.returncode != 0:
                raise self.error(f"building {self.source.name} failed: {proc.stderr.strip()[:2000]}")
            os.replace(tmp, out)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return out

    def load(self) -> ctypes.CDLL:
        if self._lib is not None:
            return self._lib
        if self._failed is not None:
            raise self._failed
        try:
            lib = ctypes.CDLL(str(self.build()))
        except self.error as exc:
            self._failed = exc
            raise
        except (OSError, subprocess.SubprocessError) as exc:
            text = faults.describe(exc)
            if text is not None:
                self._failed = self.error(text)
                raise self._failed from faults.MachineFault(text)
            self._failed = self.error(f"building or loading {self.source.name} failed: {exc}")
            raise self._failed from exc
        self.declare(lib)
        self._lib = lib
        return lib
