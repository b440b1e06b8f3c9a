"""Reference numpy arithmetic: convolution, pooling and the three computing modes.

Everything is float32 NCHW; these functions are the reference the map-major computation and the
synthesised C programs are checked against.
"""

from __future__ import annotations

import numpy as np

PRECISE, RELAXED, IMPRECISE = "precise", "relaxed", "imprecise"
MODES = (PRECISE, RELAXED, IMPRECISE)
INEXACT = (RELAXED, IMPRECISE)
FLT_MIN = np.float32(np.finfo(np.float32).tiny)     # smallest normal float32


def conv2d_nchw(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """(B, N, H, W) * (M, N, KH, KW) + b -> (B, M, OH, OW), float32 accumulation via im2col."""
    m, n, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))) if pad else x
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
    bsz, _, oh, ow = win.shape[:4]
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(bsz * oh * ow, n * kh * kw)
    out = cols @ w.reshape(m, -1).T.astype(np.float32) + b.astype(np.float32)
    return out.reshape(bsz, oh, ow, m).transpose(0, 3, 1, 2).astype(np.float32, copy=False)


def pool_nchw(x: np.ndarray, k: int, stride: int, pad: int = 0, mode: str = "max",
              ceil_mode: bool = False) -> np.ndarray:
    """Max or average pooling (average counts only in-bounds pixels, like the C programs)."""
    b, c, h, w = x.shape
    oh = _pool_out(h, k, stride, pad, ceil_mode)
    ow = _pool_out(w, k, stride, pad, ceil_mode)
    out = np.empty((b, c, oh, ow), np.float32)
    for r in range(oh):
        r0, r1 = max(r * stride - pad, 0), min(r * stride - pad + k, h)
        for col in range(ow):
            c0, c1 = max(col * stride - pad, 0), min(col * stride - pad + k, w)
            win = x[:, :, r0:r1, c0:c1]
            out[:, :, r, col] = win.max(axis=(2, 3)) if mode == "max" else win.mean(axis=(2, 3))
    return out


def maxpool_nchw(x: np.ndarray, k: int, stride: int) -> np.ndarray:
    return pool_nchw(x, k, stride, 0, "max")


def _pool_out(n: int, k: int, stride: int, pad: int, ceil_mode: bool) -> int:
    span = n + 2 * pad - k
    return (-(-span // stride) if ceil_mode else span // stride) + 1


def to_half(x: np.ndarray) -> np.ndarray:
    """Round to IEEE binary16 and back: the value an imprecise layer stores."""
    return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)


def flush_denormals(x: np.ndarray) -> np.ndarray:
    """Flush-to-zero / denormals-are-zero: float32 subnormals become (signed) zero."""
    x = np.asarray(x, np.float32)
    return np.where(np.abs(x) < FLT_MIN, np.float32(0) * x, x).astype(np.float32)


def mode_weights(w: np.ndarray, mode: str) -> np.ndarray:
    """The weights a layer computes with in `mode` (converted once, at synthesis time)."""
    if mode == IMPRECISE:
        return to_half(w)
    if mode == RELAXED:
        return flush_denormals(w)
    return np.asarray(w, np.float32)


def mode_input(x: np.ndarray, mode: str) -> np.ndarray:
    """A relaxed layer reads denormal inputs as zero (DAZ); other modes read inputs as stored."""
    return flush_denormals(x) if mode == RELAXED else x


def mode_output(y: np.ndarray, mode: str) -> np.ndarray:
    """Imprecise layers store binary16 outputs; relaxed layers flush denormal results (FTZ)."""
    if mode == IMPRECISE:
        return to_half(y)
    if mode == RELAXED:
        return flush_denormals(y)
    return y
