"""Atomic file writes: a temporary file in the same folder, fsync, then rename."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def _mode_for(path: Path) -> int:
    """The permissions the file would have if written in place: those of the file it replaces,
    else the usual 0666 less the umask (mkstemp's own 0600 would hide sessions from other users)."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    try:       # Linux shows it without changing it (os.umask would, for every thread, for a moment)
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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
            os.fchmod(fh.fileno(), _mode_for(path))
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
