"""The paper's networks (and the rest of the zoo) as executable models for the Cappuccino engine.

A zoo name becomes an ONNX file (core.nets.onnx_export: the zoo's layer table, seeded He-random
weights, batch-norm / LRN where the published network has them), written once to a cache folder
($DFX_ONNX_CACHE, default ~/.cache/dataflow-explorer/onnx; never committed: AlexNet's is 244 MB)
and then imported like any ONNX file (core.cappuccino.graph_import). No trained weights exist for
these here, so there are no real labels either: the validation images are seeded random inputs
and their labels the precise network's own top-1 class, so "accuracy" in the inexact-mode search
means agreement with the precise float32 network, and the result says so.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from core.errors import InputError
from core.nets import onnx_export, zoo

PAPER = ("alexnet", "squeezenet11", "googlenet", "resnet18", "mobilenet_v1")
BENCHMARK = PAPER + ("vgg16",)      # issue 35's six: the paper's five and VGG-16 (15.5 GMACs, 553 MB ONNX)
DEFAULT_IMAGES = 8
LABELS_NOTE = "labels are the precise network's own top-1 class (random weights: no real labels)"


def cache_dir() -> Path:
    return Path(os.environ.get("DFX_ONNX_CACHE") or Path.home() / ".cache" / "dataflow-explorer" / "onnx")


def onnx_path(name: str, resolution: int | None = None, divisor: int = 1, seed: int = 0,
              folder: Path | None = None) -> Path:
    """The ONNX file of zoo network `name` (generated on first use)."""
    if name not in zoo.names():
        raise InputError(f"unknown network {name!r}; the zoo has {', '.join(zoo.names())}", "model")
    net = onnx_export.scaled(zoo.get(name), resolution, divisor)
    c, h, w = net.input_shape
    path = (folder or cache_dir()) / f"{name}-{c}x{h}x{w}-d{divisor}-seed{seed}.onnx"
    if not path.is_file():
        onnx_export.export(net, path, seed)
    return path


def load(name: str, images: int = DEFAULT_IMAGES, resolution: int | None = None, divisor: int = 1, seed: int = 0,
         folder: Path | None = None):
    """Zoo network `name` as a CnnModel with `images` seeded sample inputs (see the module docstring)."""
    from core.cappuccino.forward import forward_reference
    from core.cappuccino.graph_import import import_onnx
    from core.cappuccino.model import CnnModel

    path = onnx_path(name, resolution, divisor, seed, folder)
    g = import_onnx(path)
    rng = np.random.default_rng(seed + 1)
    x = rng.standard_normal((max(1, images),) + tuple(g.input_shape)).astype(np.float32)
    title = zoo.titles()[name] + ("" if resolution is None and divisor == 1 else
                                  f", {g.input_shape[1]}x{g.input_shape[2]} input, channels / {divisor}")
    g.network.title = title
    model = CnnModel(name, g.network, g.ops, x, np.zeros(len(x), np.int64),
                     f"{zoo.get(name).notes} {g.notes}",
                     {"weights": g.weights, "labels": LABELS_NOTE, "onnx": str(path)})
    logits, model.precise_outputs = forward_reference(model, x, keep=True)
    model.y_val = logits.argmax(1)
    return model
