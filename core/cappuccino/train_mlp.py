"""A second trained model with real validation data: an MLP on scikit-learn's breast-cancer set.

The inexact-mode search needs a network whose accuracy means something; besides the digits CNN
this one is trained here, deterministically (scikit-learn MLPClassifier, random_state 0, on a
stratified 80/20 split of the 569 Wisconsin breast-cancer samples, features standardised with the
training split's mean and deviation, which are folded into the first layer). It is written as an
ONNX file (Gemm + Relu, flat (N, 30) input) and a validation .npz (x: (B, 30, 1, 1), y), so it runs
through the engine's ONNX path:

    python -m core.cappuccino.train_mlp --out /tmp/cancer_mlp.onnx --validation /tmp/cancer_val.npz
    python main.py cappuccino --model /tmp/cancer_mlp.onnx --validation /tmp/cancer_val.npz
"""

from __future__ import annotations

import argparse
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HIDDEN = (32, 16)


@dataclass
class TrainedMlp:
    layers: list[tuple[np.ndarray, np.ndarray]]   # (W (out, in), b) per layer, standardisation folded in
    x_val: np.ndarray                             # (B, 30) raw features
    y_val: np.ndarray
    train_accuracy: float
    val_accuracy: float                           # scikit-learn's own prediction, percent


def train(seed: int = 0) -> TrainedMlp:
    from sklearn.datasets import load_breast_cancer
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier

    data = load_breast_cancer()
    x, y = data.data.astype(np.float64), data.target.astype(np.int64)
    x_tr, x_val, y_tr, y_val = train_test_split(x, y, test_size=0.2, stratify=y, random_state=seed)
    mu, sd = x_tr.mean(0), x_tr.std(0)
    clf = MLPClassifier(HIDDEN, activation="relu", max_iter=400, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit((x_tr - mu) / sd, y_tr)
    layers = [(w.T.copy(), b.copy()) for w, b in zip(clf.coefs_, clf.intercepts_)]
    # the output layer of a binary MLPClassifier is one logistic unit; as two logits [0, z] it has the same argmax
    w_out, b_out = layers[-1]
    layers[-1] = (np.vstack([np.zeros_like(w_out), w_out]), np.concatenate([[0.0], b_out]))
    w0, b0 = layers[0]                              # fold (x - mu) / sd into the first layer
    layers[0] = (w0 / sd, b0 - (w0 / sd) @ mu)
    return TrainedMlp([(w.astype(np.float32), b.astype(np.float32)) for w, b in layers],
                      x_val.astype(np.float32), y_val,
                      float(100 * clf.score((x_tr - mu) / sd, y_tr)), float(100 * clf.score((x_val - mu) / sd, y_val)))


def to_onnx(mlp: TrainedMlp, path: str | Path) -> Path:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    inits: list[Any] = []
    for i, (w, b) in enumerate(mlp.layers):
        inits += [numpy_helper.from_array(w, f"fc{i}.weight"), numpy_helper.from_array(b, f"fc{i}.bias")]
        nodes.append(helper.make_node("Gemm", [nodes[-1].output[0] if nodes else "input", f"fc{i}.weight",
                                               f"fc{i}.bias"], [f"fc{i}"], name=f"fc{i}", transB=1))
        if i < len(mlp.layers) - 1:
            nodes.append(helper.make_node("Relu", [f"fc{i}"], [f"fc{i}/relu"]))
    graph = helper.make_graph(nodes, "cancer_mlp",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, mlp.x_val.shape[1]])],
                              [helper.make_tensor_value_info(nodes[-1].output[0], TensorProto.FLOAT,
                                                             [1, len(mlp.layers[-1][1])])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="dataflow-explorer")
    model.ir_version = min(model.ir_version, 8)
    helper.set_model_props(model, {"weights": "trained (scikit-learn MLPClassifier, breast cancer, seed 0)"})
    onnx.checker.check_model(model)
    path = Path(path)
    onnx.save(model, str(path))
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Train the breast-cancer MLP and write it as ONNX plus its validation set")
    ap.add_argument("--out", required=True, help="ONNX file to write")
    ap.add_argument("--validation", required=True, help=".npz to write (arrays x, y)")
    a = ap.parse_args(argv)
    mlp = train()
    to_onnx(mlp, a.out)
    np.savez(a.validation, x=mlp.x_val[:, :, None, None], y=mlp.y_val)     # (B, 30, 1, 1): C, H, W
    print(f"train accuracy {mlp.train_accuracy:.2f} %, validation accuracy {mlp.val_accuracy:.2f} % "
          f"({len(mlp.y_val)} images); wrote {a.out} and {a.validation}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
