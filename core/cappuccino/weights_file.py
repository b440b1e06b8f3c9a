"""The binary weight file a synthesised Cappuccino program reads at start-up.

Weights are data, not C literals, so the program's source stays a few hundred lines whatever the
model's size and builds in seconds. Layout (little-endian):

    0   magic        8 bytes  b"CAPPWTS\\0"
    8   version      u32      FORMAT_VERSION
    12  V            u32      vector width the sections are reordered for
    16  op count     u32      one section per op of the program (empty for ops without weights)
    20  reserved     u32      0
    24  fingerprint  u64      hash of the program's op table (network, modes, V): a file written for
                              another network or other modes is refused
    32  table        op count x (offset u64, size u64)
    ..  sections     each at a 64-byte aligned offset (the program loads the file into aligned memory)

The C loader (synth_kernels.c, load_weights) checks every field against what the program was
synthesised for and exits with status 3 and a message naming the file and the field; `read` here
applies the same checks (raising WeightFileError) for the round-trip tests and tools.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path

from core.errors import InputError

MAGIC = b"CAPPWTS\0"
FORMAT_VERSION = 1
HEADER = struct.Struct("<8sIIIIQ")
ENTRY = struct.Struct("<QQ")
ALIGN = 64


class WeightFileError(InputError):
    """A weight file that does not belong to the program (or is damaged); the message says why."""


@dataclass
class WeightFile:
    vector_width: int
    fingerprint: int
    sections: list[bytes]           # one per op, b"" for ops without weights


def fingerprint(text: str) -> int:
    """64-bit fingerprint of a description of the op table (stable across runs and machines)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def encode(wf: WeightFile) -> bytes:
    """The file's bytes: header, table, then the 64-byte aligned sections."""
    n = len(wf.sections)
    offset = _align(HEADER.size + ENTRY.size * n)
    table, chunks = [], []
    for sec in wf.sections:
        table.append(ENTRY.pack(offset if sec else 0, len(sec)))
        if sec:
            chunks.append((offset, sec))
            offset = _align(offset + len(sec))
    out = bytearray(offset)
    HEADER.pack_into(out, 0, MAGIC, FORMAT_VERSION, wf.vector_width, n, 0, wf.fingerprint)
    out[HEADER.size:HEADER.size + ENTRY.size * n] = b"".join(table)
    for off, sec in chunks:
        out[off:off + len(sec)] = sec
    return bytes(out)


def write(path: Path, wf: WeightFile) -> int:
    """Write atomically; returns the file size in bytes."""
    from core.atomic import atomic_write_bytes

    data = encode(wf)
    atomic_write_bytes(Path(path), data)
    return len(data)


def decode(data: bytes, where: str = "weights", expect_sizes: list[int] | None = None,
           expect_fingerprint: int | None = None, expect_v: int | None = None) -> WeightFile:
    """Parse and check a weight file (the same checks as the C loader)."""
    if len(data) < HEADER.size:
        raise WeightFileError(f"{len(data)} bytes, shorter than the {HEADER.size}-byte header", where)
    magic, version, v, n, _, fp = HEADER.unpack_from(data, 0)
    if magic != MAGIC:
        raise WeightFileError(f"not a Cappuccino weight file (magic {magic!r}, expected {MAGIC!r})", where)
    if version != FORMAT_VERSION:
        raise WeightFileError(f"format version {version}, this program reads {FORMAT_VERSION}", where)
    if expect_v is not None and v != expect_v:
        raise WeightFileError(f"written for vector width {v}, the program has V={expect_v}", where)
    if expect_sizes is not None and n != len(expect_sizes):
        raise WeightFileError(f"{n} ops, the program has {len(expect_sizes)}", where)
    if expect_fingerprint is not None and fp != expect_fingerprint:
        raise WeightFileError("written for another network or other modes (fingerprint differs)", where)
    if len(data) < HEADER.size + ENTRY.size * n:
        raise WeightFileError(f"truncated op table ({n} ops need {HEADER.size + ENTRY.size * n} bytes, "
                              f"file has {len(data)})", where)
    sections = []
    for i in range(n):
        off, size = ENTRY.unpack_from(data, HEADER.size + ENTRY.size * i)
        if expect_sizes is not None and size != expect_sizes[i]:
            raise WeightFileError(f"op {i}: {size} bytes of weights, expected {expect_sizes[i]}", where)
        if size and (off % ALIGN or off + size > len(data)):
            raise WeightFileError(f"op {i}: section at {off}+{size} outside the file ({len(data)} bytes) "
                                  "or not 64-byte aligned", where)
        sections.append(bytes(data[off:off + size]) if size else b"")
    return WeightFile(v, fp, sections)


def read(path: Path, **expect) -> WeightFile:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise WeightFileError(f"cannot read: {exc.strerror or exc}", str(p)) from None
    return decode(data, str(p), **expect)
