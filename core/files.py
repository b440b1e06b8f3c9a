"""Reading a user's file: only regular files, and never more than a stated number of bytes.

Every reader of a user-named file (kernel and transform files, sessions, programs, images, ONNX
models, validation sets) comes through here, so a FIFO, a device or a folder is refused at once
instead of blocking forever (a FIFO waits for a writer) or reading without end (/dev/zero), and a
file too large for its kind is refused before it is read, naming the file and the limit.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from core.errors import InputError

MB = 1 << 20
# Limits by kind of file, far above what the app writes or ships: a kernel or transform file is a
# few KB, a program a few KB, a session a few MB (gzip) and a large ONNX model a few hundred MB.
TEXT_LIMIT = 64 * MB
SESSION_LIMIT = 1 << 30
MODEL_LIMIT = 2 << 30             # protobuf's own limit for one ONNX file


def _special(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def regular_file(path: str | Path, what: str = "file", limit: int | None = None) -> Path:
    """`path` if it names a regular file (after links) of at most `limit` bytes; InputError naming
    the file otherwise. For readers that open the file themselves (PIL, onnx)."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"cannot read the {what}: no such file", str(p)) from None
    except OSError as exc:
        raise InputError(f"cannot read the {what}: {exc.strerror or exc}", str(p)) from None
    _check(st, p, what, limit)
    return p


def _check(st: os.stat_result, p: Path, what: str, limit: int | None) -> None:
    if not stat.S_ISREG(st.st_mode):
        kind = _special(st.st_mode)
        article = "an" if what[:1] in "aeiou" else "a"
        raise InputError(f"is {kind}, not {article} {what}" if kind == "a folder" else
                         f"is {kind}; {article} {what} must be a regular file", str(p))
    if limit is not None and st.st_size > limit:
        raise InputError(f"the {what} is {_size(st.st_size)}; at most {_size(limit)} is read", str(p))


def read_bytes(path: str | Path, what: str = "file", limit: int = TEXT_LIMIT) -> bytes:
    """The bytes of a regular file of at most `limit` bytes. Opened without blocking (a FIFO swapped in
    after the check cannot hang the read) and read to at most limit + 1 bytes (a file that grows
    while read is refused, not read without end)."""
    p = regular_file(path, what, limit)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(f"cannot read the {what}: {exc.strerror or exc}", str(p)) from None
    try:
        _check(os.fstat(fd), p, what, limit)            # the file opened is the file checked
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(limit + 1 - total, 16 * MB))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise InputError(f"cannot read the {what}: {exc.strerror or exc}", str(p)) from None
    finally:
        os.close(fd)
    if total > limit:
        raise InputError(f"the {what} is larger than {_size(limit)}, the most that is read", str(p))
    return b"".join(chunks)


def _size(n: int) -> str:
    return f"{n / MB:.0f} MB" if n >= MB else f"{n} bytes"


def output_folder(folder: str | Path, names: list[str], flag: str) -> Path:
    """Check, before anything is written, that `folder` can take the files `names` (relative paths,
    e.g. "gemm.c", "data/gemm/in0.f32"): the folder is a folder or can be made, and no name is taken
    by a folder or a special file. Files already there are replaced; nothing is created here (but a
    probe file, removed at once), so a refused run leaves the user's folder as it was. InputError names `flag` (e.g. `--emit`)."""
    root = Path(folder)
    for p in [root, *root.parents]:            # the nearest part of the path that exists
        if p.exists() or p.is_symlink():
            if not p.is_dir():
                raise InputError(f"{p} is {'a file' if p.is_file() else 'not a folder'}; expected a folder "
                                 f"to write into (or a new folder's name)", flag)
            if not os.access(p, os.W_OK | os.X_OK):
                raise InputError(f"cannot write into {p}: permission denied", flag)
            can_hold_files(p, flag)
            break
    for name in names:
        rel = Path(name)
        for sub in reversed(rel.parents[:-1]):          # the folders on the way: "data", "data/gemm"
            q = root / sub
            if (q.exists() or q.is_symlink()) and not q.is_dir():
                raise InputError(f"{q} is a file; the generated files need a folder of that name", flag)
        q = root / rel
        if (q.exists() or q.is_symlink()) and not q.is_file():
            what = "a folder" if q.is_dir() else "not a regular file"
            raise InputError(f"{q} is {what}, and a generated file has that name; choose another folder "
                             f"or move it away", flag)
    return root


def output_files(flags: dict[str, str | Path | None]) -> str | None:
    """For a script's options naming files it will write ({"--save": path, ...}; None: not given):
    each one's folder proven to take it before any work starts. The first problem as one line
    (`--save: cannot create files in /proc: ...`), or None."""
    for flag, path in flags.items():
        if path:
            try:
                output_folder(Path(path).parent, [Path(path).name], flag)
            except InputError as exc:
                return str(exc)
    return None


def can_hold_files(folder: Path, flag: str) -> None:
    """Prove that the existing folder `folder` can take a new file by making one and removing it:
    permission bits do not tell (root passes every access check, /proc and /sys refuse new files, a
    read-only mount). InputError naming `flag` and the reason otherwise."""
    import tempfile

    try:
        fd, probe = tempfile.mkstemp(prefix=".dfx-probe-", dir=folder)
    except OSError as exc:
        raise InputError(f"cannot create files in {folder}: {(exc.strerror or str(exc)).lower()}", flag) from None
    os.close(fd)
    os.unlink(probe)


def file_problem(path: str | Path) -> str | None:
    """Why `path` cannot be read as a file, in a few words ("not found", "is a named pipe (FIFO), not
    a regular file"), or None when it is a regular file: for checks that name the problem before a run
    (the choice bar), where a FIFO used to read as "not found"."""
    try:
        mode = Path(path).stat().st_mode
    except OSError:
        return "not found"
    return None if stat.S_ISREG(mode) else f"is {_special(mode)}, not a regular file"
