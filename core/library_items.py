"""New and imported library items, without Qt.

What a freshly added workload or target of each kind starts as, the variants offered when adding one
(zoo networks, built-in MERIT workloads, filter presets), the files that can be imported into the
library (ONNX, kernel JSON, transform JSON), and the text forms the item editors accept (kernels
typed as text, one layer spec per line). The library browser only presents these; the CLI readers
they reuse stay the one source of each file format.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from core.checks import check_name, printable_name
from core.errors import InputError
from core.kinds import kind_of
from core.workload import (MAX_KERNEL_SIZE, TARGET_KINDS, WORKLOAD_KINDS, CnnNetwork, ConvLayers,
                           MeritTransformWorkload, Target, Workload, workload_from_json)

IMPORT_FILTER = "Workload files (*.onnx *.json);;ONNX models (*.onnx);;Kernel or MERIT transform JSON (*.json)"


# ---------------------------------------------------------------- new items
def workload_variants(kind: str) -> dict[str, str]:
    """The named starting points of a workload kind (value -> title); empty when it has none."""
    found = kind_of("workloads", kind)
    return found.variants() if found else {}


def new_workload(kind: str, variant: str | None = None) -> tuple[str, Workload]:
    """(name, value) of a new workload of `kind`, from `variant` (see workload_variants) or a default
    that an engine of that kind runs as it is."""
    found = kind_of("workloads", kind)
    if found is None:
        raise InputError(f"unknown workload kind {kind!r}; one of {', '.join(WORKLOAD_KINDS)}", "kind")
    variants = found.variants()
    if variant is not None and variant not in variants:
        raise InputError(f"unknown {found.title} {variant!r}; known: {', '.join(variants)}", "variant")
    name, value = found.new(variant)
    return name, value


def new_target(kind: str) -> tuple[str, Target]:
    """(name, value) of a new target of `kind`, on the target's defaults."""
    found = kind_of("targets", kind)
    if found is None:
        raise InputError(f"unknown target kind {kind!r}; one of {', '.join(TARGET_KINDS)}", "kind")
    name, value = found.new(None)
    return name, value


# ---------------------------------------------------------------- text forms
def parse_kernel_text(text: str) -> list[list[list[float]]]:
    """Matrices typed or pasted as text: numbers split by spaces/commas, rows by lines or ';',
    kernels by blank lines. Raises InputError naming the line."""
    kernels: list[list[list[float]]] = []
    current: list[list[float]] = []
    lines = text.replace(";", "\n").splitlines()
    for n, line in enumerate(lines, 1):
        cleaned = line.strip().strip("[](){}").strip()
        if not cleaned:
            if current:
                kernels.append(current)
                current = []
            continue
        row = []
        for tok in re.split(r"[\s,]+", cleaned.replace("[", " ").replace("]", " ").strip()):
            if not tok:
                continue
            try:
                value = float(tok)
            except ValueError:
                raise InputError(f"{tok[:40]!r} is not a number", f"pasted text line {n}") from None
            if not math.isfinite(value):
                raise InputError(f"{tok[:40]!r} is not a finite number", f"pasted text line {n}")
            row.append(value)
        if not row:
            raise InputError("no numbers on this line", f"pasted text line {n}")
        if current and len(row) != len(current[0]):
            raise InputError(f"ragged rows: {len(row)} values, the kernel's first row has {len(current[0])}",
                             f"pasted text line {n}")
        current.append(row)
    if current:
        kernels.append(current)
    if not kernels:
        raise InputError("no numbers found", "pasted text")
    for i, k in enumerate(kernels):
        if len(k) > MAX_KERNEL_SIZE or len(k[0]) > MAX_KERNEL_SIZE:
            raise InputError(f"kernel {i + 1} is {len(k)}x{len(k[0])}; the limit is "
                             f"{MAX_KERNEL_SIZE}x{MAX_KERNEL_SIZE}", "pasted text")
    return kernels


def layers_from_text(text: str) -> ConvLayers:
    """One layer spec per line (blank lines skipped), each checked by the bound engine's reader;
    InputError names the line."""
    from core.bound.shapes import parse_layer_spec

    specs = []
    for n, line in enumerate(text.splitlines(), 1):
        spec = line.strip()
        if spec:
            parse_layer_spec(spec, where=f"line {n}")
            specs.append(spec)
    layers = ConvLayers(specs)
    layers.validate("layers")
    return layers


# ---------------------------------------------------------------- files
def check_onnx_file(path: str) -> str:
    """The network's name if `path` is an ONNX model this program can read; InputError naming the
    file and the problem otherwise."""
    from core.nets.onnx_import import load_onnx

    try:
        return load_onnx(path).name
    except InputError as exc:
        if str(path) in exc.where:          # the importer's messages already name the file
            raise
        raise InputError(exc.message, f"{path}: {exc.where}" if exc.where else str(path)) from None


_SUMMARIES: dict[tuple[str, int, int], str] = {}      # (path, size, mtime) -> summary: read each model once


def network_summary(cnn: CnnNetwork) -> str:
    """What a CNN item holds, in one line: its layers by kind, input, operations and parameters
    ("VGG-16: 16 layers (13 conv, 3 FC), 5 pool; input 3x224x224; 30.95 GOps; 138.4 million
    parameters"). An ONNX file is read once per version of the file; InputError if it cannot be."""
    from core.display import format_number
    from core.nets import zoo
    from core.nets.opcount import layer_counts, params

    if cnn.source == "builtin":
        return "the built-in CNN trained on scikit-learn's digits (weights and validation set included)"
    key: tuple[str, int, int] | None = None
    if cnn.source == "onnx":
        from core.nets.onnx_import import load_onnx

        st = Path(cnn.onnx_path).stat() if Path(cnn.onnx_path).is_file() else None
        if st is None:
            raise InputError("file not found", cnn.onnx_path)
        key = (str(Path(cnn.onnx_path).resolve()), st.st_size, int(st.st_mtime_ns))
        if key in _SUMMARIES:
            return _SUMMARIES[key]
        net = load_onnx(cnn.onnx_path)
    else:
        net = zoo.get(cnn.network)
    n = layer_counts(net)
    weighted = n["conv"] + n["fc"]
    parts = [f"{n['conv']} conv"] + ([f"{n['fc']} FC"] if n["fc"] else [])
    rest = [f"{n['pool']} pool"] if n["pool"] else []
    rest += [f"{n['eltwise']} add/concat"] if n["eltwise"] else []
    c, h, w = net.input_shape
    text = (f"{net.title or net.name}: {weighted} layers ({', '.join(parts)})" + (f", {', '.join(rest)}" if rest else "")
            + f"; input {c}x{h}x{w}; {format_number(net.gops * 1e9, 'Ops')}; {format_number(params(net))} parameters")
    if key is not None:
        _SUMMARIES[key] = text
    return text


def check_validation_file(path: str) -> None:
    """A validation set must be an existing .npz file (images x, labels y; read when a run starts)."""
    p = Path(path)
    if p.suffix.lower() != ".npz":
        raise InputError("a validation set is a numpy .npz file (arrays x and y)", str(path))
    if not p.is_file():
        raise InputError("file not found", str(path))


def load_transform(path: str) -> MeritTransformWorkload:
    """A MERIT transform JSON file as a workload, checked by MERIT's own reader."""
    from core.merit_transform.fileformat import load_transform_file

    data = load_transform_file(path)
    w = MeritTransformWorkload(transform=data)
    try:
        w.validate("transform")
    except InputError as exc:
        raise InputError(exc.message, f"{path}: {exc.where}") from None
    return w


# What an imported JSON file should look like, said with every refusal (issue 30: a bad kernel file
# gave no hint of the format). docs/cain.md and docs/merit.md have the whole formats.
KERNEL_FILE_HINT = ('A kernel file is JSON like {"name": "blur", "denominator": 16, "kernels": [{"name": "k1", '
                    '"values": [[1, 2, 1], [2, 4, 2], [1, 2, 1]]}]}: odd-sized square kernels up to 7x7, '
                    'integer numerators over the denominator, rows north to south (docs/cain.md).')
TRANSFORM_FILE_HINT = ('A MERIT transform file is JSON with "parallel", "accumulate" and "operands" lists '
                       '(docs/merit.md).')


def _with_hint(exc: InputError, hint: str) -> InputError:
    return InputError(f"{exc.message.rstrip('.')}. {hint}", exc.where)


def import_file(path: str) -> tuple[str, Workload]:
    """(name, workload) read from a file: an ONNX model (a CNN), a kernel JSON file (the format
    `main.py cain --kernels` reads), a MERIT transform JSON file, or any workload's JSON form.
    InputError names the file and the problem; nothing is changed by a failed import."""
    p = Path(path)
    stem = printable_name(p.stem) or "imported"         # a file's name may hold what a name may not
    if p.suffix.lower() == ".onnx":
        check_onnx_file(path)
        return stem, CnnNetwork(onnx_path=str(path))
    if p.suffix.lower() != ".json":
        raise InputError("not a file the library imports: expected an ONNX model (.onnx) or a kernel or MERIT "
                         "transform file (.json)", str(path))
    try:
        data = _read_json(path)
    except InputError as exc:
        raise _with_hint(exc, KERNEL_FILE_HINT) from None
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {type(data).__name__}. {KERNEL_FILE_HINT}", str(path))
    kind = data.get("kind")
    if kind == "kernels" or (kind is None and "kernels" in data):
        from core.cain.engine import load_kernel_file

        try:
            return stem, load_kernel_file(path)
        except InputError as exc:
            raise _with_hint(exc, KERNEL_FILE_HINT) from None
    if kind is None and "operands" in data:
        try:
            w = load_transform(path)
        except InputError as exc:
            raise _with_hint(exc, TRANSFORM_FILE_HINT) from None
        return check_name(str((w.transform or {}).get("name") or stem), f"{path}: name"), w
    if isinstance(kind, str) and kind in WORKLOAD_KINDS:
        try:
            return stem, workload_from_json(data, "")
        except InputError as exc:
            raise InputError(exc.message, f"{path}: {exc.where}" if exc.where else str(path)) from None
    raise InputError('neither a kernel file (a "kernels" list) nor a MERIT transform (an "operands" list). '
                     f"{KERNEL_FILE_HINT} {TRANSFORM_FILE_HINT}", str(path))


def _read_json(path: str) -> Any:
    """The file as JSON, with the checks of every input file (UTF-8, nesting, finite numbers)."""
    from core.checks import read_json_file

    return read_json_file(path, "file")
