"""Conv-layer specs as a comparison's workload (issue 51): the one place a spec source is resolved.

A comparison names its workload by one string, its *source*: a zoo name, an ONNX file, or, for a
conv-layers workload (core.workload.ConvLayers), `layers: SPEC; SPEC; ...` with each spec as
`--layer` reads it (core.bound.shapes.parse_layer_spec). Spec layers are independent problems
(their shapes need not chain), so each is costed on its own: `layer_onnx` writes one spec as a
one-convolution network (core.nets) to an ONNX file, which every engine's existing network path
reads (Cappuccino builds and times a program from it, f-CNNx maps it, Cain reads its kernels).
The file is content-addressed in the project's cache folder (core.paths.cache_dir) and written
again whenever it is missing, so nothing depends on a cache file existing; the source string, not
the file, is what a comparison records.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import replace
from pathlib import Path

from core.bound.shapes import ConvShape, parse_layer_spec
from core.errors import InputError
from core.nets.layers import Conv, Network

PREFIX = "layers:"
SEPARATOR = ";"
SEED = 0                                # the exported layer's weights (random, He-initialised)
FORMAT = 1                              # bumped when the exported file changes for the same shape
MAX_WEIGHTS = 64 * 1024 * 1024          # 256 MB of float32 weights in one layer's file
_WRITING = threading.Lock()


def layers_source(specs: list[str], where: str = "layers") -> str:
    """The source string of these specs (InputError: none, or one holding the separator)."""
    specs = [" ".join(s.split()) for s in specs]
    if not specs or not all(specs):
        raise InputError("no layer given: add a spec like Ci=64,Hi=56,Wi=56,Co=128,kernel=3,pad=1", where)
    for s in specs:
        if SEPARATOR in s:
            raise InputError(f"a layer spec cannot hold {SEPARATOR!r}: {s[:60]!r}", where)
    return PREFIX + " " + f"{SEPARATOR} ".join(specs)


def is_layers_source(source: str) -> bool:
    return source.startswith(PREFIX)


def layer_specs(source: str) -> list[str]:
    """The spec texts of a layers source (as given)."""
    return [s.strip() for s in source[len(PREFIX):].split(SEPARATOR) if s.strip()]


def spec_shapes(source: str, where: str = "layers") -> list[ConvShape]:
    """Each spec of a layers source, read and checked (InputError names the spec), with unique
    names: a name given twice (every unnamed spec is "layer") gets its spec's number."""
    specs = layer_specs(source)
    if not specs:
        raise InputError("no layer given: add a spec like Ci=64,Hi=56,Wi=56,Co=128,kernel=3,pad=1", where)
    shapes = []
    for i, text in enumerate(specs):
        at = where if len(specs) == 1 else f"{where} #{i + 1}"
        shape = parse_layer_spec(text, where=at)
        if shape.B != 1:
            raise InputError(f"batch must be 1, got {shape.B}: each target is costed for one image", at)
        if shape.weights > MAX_WEIGHTS:
            raise InputError(f"{shape.weights} weights are more than the {MAX_WEIGHTS} a costed layer may have", at)
        shapes.append(shape)
    names = [s.name for s in shapes]
    return [replace(s, name=f"{s.name}{i + 1}") if names.count(s.name) > 1 else s for i, s in enumerate(shapes)]


def title_of(shapes: list[ConvShape]) -> str:
    """A layers workload in words ("2 conv layers (conv1, conv2)"), read as a network's title is."""
    n = len(shapes)
    names = ", ".join(s.name for s in shapes[:4]) + (", ..." if n > 4 else "")
    return f"{n} conv layer{'s' if n != 1 else ''} ({names})"


def layer_network(shape: ConvShape) -> Network:
    """One spec as a network of its one convolution, named as the spec (the engines' records and
    notes then name it so)."""
    conv = Conv(shape.name, shape.Ci, shape.Hi, shape.Wi, shape.Co, shape.Hk, shape.Wk, stride=shape.stride,
                pad=shape.pad, groups=shape.groups, dilation=shape.dilation)
    return Network(name="conv_layer", title=f"conv layer {shape.name}", input_shape=(shape.Ci, shape.Hi, shape.Wi),
                   layers=[conv], inputs={shape.name: ["input"]})


def layers_folder() -> Path:
    from core import paths

    return paths.cache_dir() / "layers"


def layer_onnx(shape: ConvShape, folder: Path | None = None) -> str:
    """The path of an ONNX file of one spec's layer (core.nets.onnx_export, seeded weights), in the
    cache folder under a name made of its shape, with its sample images beside it (`validation_of`);
    each written when missing (atomically)."""
    from core.nets.onnx_export import export

    key = {"format": FORMAT, "seed": SEED, **{k: getattr(shape, k) for k in (
        "name", "Ci", "Hi", "Wi", "Co", "Hk", "Wk", "stride", "pad", "groups", "dilation")}}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    path = (folder or layers_folder()) / f"conv-{digest}.onnx"
    with _WRITING:                      # a comparison's parts on threads ask for the same file at once
        if not path.is_file():
            export(layer_network(shape), path, seed=SEED)
        images = path.with_suffix(".npz")
        if not images.is_file():
            _write_images(images, (shape.Ci, shape.Hi, shape.Wi))
    return str(path)


def validation_of(onnx_path: str) -> str:
    """The sample images of a layer file `layer_onnx` wrote ("" for any other file). Cappuccino runs
    a network on images: a layer has none of its own, so these are seeded random inputs, labelled
    class 0 (only the precise program is costed: no accuracy is asked of them)."""
    p = Path(onnx_path)
    if p.parent != layers_folder() or not p.name.startswith("conv-") or p.suffix != ".onnx":
        return ""
    return str(p.with_suffix(".npz"))


IMAGES = 8          # Cappuccino's measured cost runs at most this many (core.cappuccino.cost.network_cost)


def _write_images(path: Path, shape: tuple[int, int, int]) -> None:
    import os

    import numpy as np

    rng = np.random.default_rng(SEED + 1)
    x = rng.standard_normal((IMAGES, *shape)).astype(np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp.npz")
    try:
        np.savez(tmp, x=x, y=np.zeros(IMAGES, np.int64))
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
