"""Atomic file writes: a temporary file in the same folder, fsync, then rename.

Writers of one folder take turns (an advisory lock on the folder, released by the system when a
process dies), so everything between reading what is on disk and replacing it -- the backup copy, a
caller's check that the file is still the version it read -- happens with no other writer of ours in
between. A temporary file of ours still there while we hold the lock was left by a writer that
crashed, and is removed.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Callable, Iterator

try:
    import fcntl
except ImportError:            # not on POSIX: writes still atomic, just not serialised
    fcntl = None  # type: ignore[assignment]

TMP_SUFFIX = ".tmp"


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


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Exclusive advisory lock on a folder (flock on its descriptor: no lock file to leave behind)."""
    fd = None
    if fcntl is not None:
        try:
            fd = os.open(folder, os.O_RDONLY)
        except (FileNotFoundError, NotADirectoryError):
            raise              # the write cannot succeed: say so, naming the folder
        except OSError:        # a folder we may write but not read: go on unserialised
            fd = None
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:    # a file system without flock: go on unserialised
                os.close(fd)
                fd = None
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)       # closing releases the lock


def _temp_prefix(path: Path) -> str:
    return f".{path.name}."


def remove_stale_temps(path: Path) -> list[Path]:
    """Temporary files of ours for `path` (and its backup) left by a writer that died; call with the
    folder lock held, when no live writer of ours can own one."""
    removed: list[Path] = []
    prefix = _temp_prefix(path)
    try:
        names = os.listdir(path.parent)
    except OSError:
        return removed
    for name in names:
        if name.startswith(prefix) and name.endswith(TMP_SUFFIX):
            stale = path.parent / name
            try:
                if stat.S_ISREG(os.lstat(stale).st_mode):
                    os.unlink(stale)
                    removed.append(stale)
            except OSError:
                pass
    return removed


def _replace(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=TMP_SUFFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), _mode_for(path))
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (a crash right after must not bring the old file back)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, keep_backup: bool = False,
                       check: Callable[[bytes | None], None] | None = None) -> None:
    """Replace `path` with `data` so a reader never sees a half-written file.

    With keep_backup, the version on disk just before this write is kept as `<path>.bak`. `check`
    gets that version's bytes (None: no file) while no other writer can change it, and may raise to
    leave everything as it is (e.g. the file is no longer the version the caller read).
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    with folder_lock(folder):
        remove_stale_temps(path)
        current: bytes | None = None
        if keep_backup or check is not None:
            try:
                current = path.read_bytes()
            except FileNotFoundError:
                current = None
        if check is not None:
            check(current)
        if keep_backup and current is not None:
            # Copy, not move: the old file stays in place until the new one replaces it.
            _replace(path.with_name(path.name + ".bak"), current)
        _replace(path, data)
        _sync_folder(folder)


def atomic_write_text(path: Path, text: str, keep_backup: bool = False,
                      check: Callable[[bytes | None], None] | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), keep_backup=keep_backup, check=check)
