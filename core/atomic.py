"""Atomic file writes: a temporary file in the same folder, fsync, then rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes, keep_backup: bool = False) -> None:
    """Replace `path` with `data` so a reader never sees a half-written file.

    With keep_backup, the previous version is kept as `<path>.bak`.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if keep_backup and path.exists():
            # Copy, not move: the old file stays in place until the new one replaces it.
            bak = path.with_name(path.name + ".bak")
            atomic_write_bytes(bak, path.read_bytes())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_text(path: Path, text: str, keep_backup: bool = False) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), keep_backup=keep_backup)
