"""Train the built-in digits CNN with numpy only and store it in assets/digits_cnn.npz.

Run as `python -m core.cappuccino.train_digits`. The data are scikit-learn's `load_digits` 8x8
images (scaled to [0, 1]); a stratified 20 % split (seed 0) is held out as the validation set the
engine uses for its inexact-computing analysis. Training is deterministic (fixed seed, numpy
only): conv 3x3 (1->16) + ReLU, max-pool 2, conv 3x3 (16->32) + ReLU, max-pool 2, fully
connected 128->10, softmax cross-entropy, Adam.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, cast

import numpy as np

from core.cappuccino.numerics import conv2d_nchw, maxpool_nchw
from core.paths import ASSETS

ASSET = ASSETS / "digits_cnn.npz"
SEED = 0
VALIDATION_FRACTION = 0.2


def digits_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x_train, y_train, x_val, y_val, val_index): images as (B, 1, 8, 8) float32 in [0, 1]."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    data = load_digits()
    x = (data.images.astype(np.float32) / 16.0)[:, None, :, :]
    y = data.target.astype(np.int64)
    idx = np.arange(len(y))
    tr, va = train_test_split(idx, test_size=VALIDATION_FRACTION, random_state=SEED, stratify=y)
    va = np.sort(va)
    tr = np.sort(tr)
    return x[tr], y[tr], x[va], y[va], va


# ------------------------------------------------------------------ backward passes (im2col)
def _im2col(x: np.ndarray, k: int, pad: int) -> np.ndarray:
    """(B, C, H, W) -> (B, H, W, C*k*k) patches for a stride-1 convolution."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))   # B,C,H,W,k,k
    b, c, h, w = win.shape[:4]
    return win.transpose(0, 2, 3, 1, 4, 5).reshape(b, h, w, c * k * k)


def _conv_backward(x: np.ndarray, w: np.ndarray, gy: np.ndarray, pad: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradients of a stride-1 'same' convolution with respect to input, weight and bias."""
    m, c, k, _ = w.shape
    cols = _im2col(x, k, pad)                                   # B,H,W,CKK
    gw = np.einsum("bmhw,bhwk->mk", gy, cols).reshape(w.shape)
    gb = gy.sum(axis=(0, 2, 3))
    # input gradient: full convolution of gy with the flipped, transposed kernel
    wf = w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3)
    gx = conv2d_nchw(gy, wf, np.zeros(c, np.float32), stride=1, pad=k - 1 - pad)
    return gx, gw, gb


def _pool_backward(x: np.ndarray, y: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """Route the gradient of a 2x2/2 max-pool to the first maximum of each window."""
    b, c, h, w = x.shape
    win = x.reshape(b, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(b, c, h // 2, w // 2, 4)
    arg = win.argmax(axis=-1)
    mask = np.zeros_like(win)
    np.put_along_axis(mask, arg[..., None], 1.0, axis=-1)
    g = mask * gy[..., None]
    return g.reshape(b, c, h // 2, w // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(b, c, h, w)


def forward(params: dict[str, np.ndarray], x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    a1 = conv2d_nchw(x, params["conv1.weight"], params["conv1.bias"], 1, 1)
    r1 = np.maximum(a1, 0)
    p1 = maxpool_nchw(r1, 2, 2)
    a2 = conv2d_nchw(p1, params["conv2.weight"], params["conv2.bias"], 1, 1)
    r2 = np.maximum(a2, 0)
    p2 = maxpool_nchw(r2, 2, 2)
    flat = p2.reshape(len(x), -1)
    logits = flat @ params["fc.weight"].T + params["fc.bias"]
    return logits, [x, a1, r1, p1, a2, r2, p2, flat]


def train(epochs: int = 40, batch: int = 32, lr: float = 2e-3, log=print) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    xtr, ytr, xva, yva, va_idx = digits_split()

    def he(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    params = {
        "conv1.weight": he((16, 1, 3, 3), 9), "conv1.bias": np.zeros(16, np.float32),
        "conv2.weight": he((32, 16, 3, 3), 144), "conv2.bias": np.zeros(32, np.float32),
        "fc.weight": he((10, 128), 128), "fc.bias": np.zeros(10, np.float32),
    }
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(v) for k, v in params.items()}
    step = 0
    for epoch in range(epochs):
        order = rng.permutation(len(ytr))
        for start in range(0, len(order), batch):
            sel = order[start:start + batch]
            xb, yb = xtr[sel], ytr[sel]
            logits, (x0, a1, r1, p1, a2, r2, p2, flat) = forward(params, xb)
            z = logits - logits.max(axis=1, keepdims=True)
            prob = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
            g = prob
            g[np.arange(len(yb)), yb] -= 1.0
            g /= len(yb)
            grads = {"fc.weight": g.T @ flat, "fc.bias": g.sum(0)}
            gp2 = (g @ params["fc.weight"]).reshape(p2.shape)
            ga2 = _pool_backward(r2, p2, gp2) * (a2 > 0)
            gp1, grads["conv2.weight"], grads["conv2.bias"] = _conv_backward(p1, params["conv2.weight"], ga2, 1)
            ga1 = _pool_backward(r1, p1, gp1) * (a1 > 0)
            _, grads["conv1.weight"], grads["conv1.bias"] = _conv_backward(x0, params["conv1.weight"], ga1, 1)
            step += 1
            for k in params:                                   # Adam
                m[k] = 0.9 * m[k] + 0.1 * grads[k]
                v[k] = 0.999 * v[k] + 0.001 * grads[k] ** 2
                mh = m[k] / (1 - 0.9 ** step)
                vh = v[k] / (1 - 0.999 ** step)
                params[k] = (params[k] - lr * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)
        if (epoch + 1) % 5 == 0:
            acc = (forward(params, xva)[0].argmax(1) == yva).mean()
            log(f"epoch {epoch + 1}: validation accuracy {100 * acc:.2f} %")
    params = {k: val.astype(np.float32) for k, val in params.items()}
    train_acc = float((forward(params, xtr)[0].argmax(1) == ytr).mean())
    val_acc = float((forward(params, xva)[0].argmax(1) == yva).mean())
    params["val_index"] = va_idx.astype(np.int64)
    params["train_accuracy"] = np.array(train_acc)
    params["val_accuracy"] = np.array(val_acc)
    return params


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--out", type=Path, default=ASSET)
    args = ap.parse_args(argv)
    import io

    from core.atomic import atomic_write_bytes

    params = train(epochs=args.epochs)
    buf = io.BytesIO()
    np.savez_compressed(buf, **cast(dict[str, Any], params))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(args.out, buf.getvalue())
    args.out.chmod(0o644)
    print(f"train accuracy {100 * float(params['train_accuracy']):.2f} %, "
          f"validation accuracy {100 * float(params['val_accuracy']):.2f} % "
          f"({len(params['val_index'])} held-out images); wrote {args.out}")


if __name__ == "__main__":
    main()
