"""Reference numpy arithmetic: convolution, pooling, LRN, softmax and the three computing modes.

Everything is float32 NCHW; these functions are the reference the map-major computation and the
synthesised C programs are checked against.
"""

from __future__ import annotations

import numpy as np

PRECISE, RELAXED, IMPRECISE = "precise", "relaxed", "imprecise"
MODES = (PRECISE, RELAXED, IMPRECISE)
INEXACT = (RELAXED, IMPRECISE)
# 8-bit integer mode (issue 35, bullet 2): opt-in, never part of MODES, so runs that do not ask for
# it see exactly the three modes above
INT8 = "int8"
ALL_MODES = MODES + (INT8,)
U8_MAX, S8_MAX = 255, 127
FLT_MIN = np.float32(np.finfo(np.float32).tiny)     # smallest normal float32


def conv2d_nchw(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int, pad: int, groups: int = 1,
                pads: tuple[int, int, int, int] | None = None) -> np.ndarray:
    """(B, N, H, W) * (M, N/groups, KH, KW) + b -> (B, M, OH, OW), float32 accumulation via im2col.

    `pads` (top, left, bottom, right) overrides the symmetric `pad`; depthwise convolution
    (groups == N == M) is a per-channel window sum, other groups one matrix product each."""
    m, ng, kh, kw = w.shape
    t, left, bot, r = pads if pads is not None else (pad,) * 4
    xp = np.pad(x, ((0, 0), (0, 0), (t, bot), (left, r))) if t or left or bot or r else x
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
    bsz, _, oh, ow = win.shape[:4]
    w = np.asarray(w, np.float32)
    if groups == 1:
        cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(bsz * oh * ow, ng * kh * kw)
        out = cols @ w.reshape(m, -1).T + np.asarray(b, np.float32)
        return out.reshape(bsz, oh, ow, m).transpose(0, 3, 1, 2).astype(np.float32, copy=False)
    if ng == 1 and m == groups:             # depthwise: one strided view per kernel tap
        y = np.zeros((bsz, m, oh, ow), np.float32)
        tmp = np.empty_like(y)
        for i in range(kh):
            for j in range(kw):
                np.multiply(xp[:, :, i:i + (oh - 1) * stride + 1:stride, j:j + (ow - 1) * stride + 1:stride],
                            w[None, :, 0, i, j, None, None], out=tmp)
                y += tmp
        return y + np.asarray(b, np.float32)[None, :, None, None]
    mg = m // groups
    parts = [conv2d_nchw(x[:, g * ng:(g + 1) * ng], w[g * mg:(g + 1) * mg], np.asarray(b)[g * mg:(g + 1) * mg],
                         stride, pad, 1, pads) for g in range(groups)]
    return np.concatenate(parts, axis=1)


def pool_nchw(x: np.ndarray, k: int, stride: int, pad: int = 0, mode: str = "max",
              ceil_mode: bool = False, pads: tuple[int, int, int, int] | None = None,
              count_include_pad: bool = False) -> np.ndarray:
    """Max or average pooling with ONNX semantics: max ignores the padding; average divides by the
    in-bounds count, or with count_include_pad by the window clipped to the padded map."""
    b, c, h, w = x.shape
    t, left, bot, rt = pads if pads is not None else (pad,) * 4
    oh = _pool_out(h, k, stride, t, ceil_mode, bot)
    ow = _pool_out(w, k, stride, left, ceil_mode, rt)
    # pad so that every window lies inside (max: -inf never wins; average: zeros add nothing)
    after_h = max(0, (oh - 1) * stride + k - h - t)
    after_w = max(0, (ow - 1) * stride + k - w - left)
    fill = -np.inf if mode == "max" else 0.0
    xp = np.pad(np.asarray(x, np.float32), ((0, 0), (0, 0), (t, after_h), (left, after_w)), constant_values=fill)
    taps = [xp[:, :, i:i + (oh - 1) * stride + 1:stride, j:j + (ow - 1) * stride + 1:stride]
            for i in range(k) for j in range(k)]           # one strided view per kernel tap
    acc = taps[0].copy()
    for tap in taps[1:]:
        if mode == "max":
            np.maximum(acc, tap, out=acc)
        else:
            acc += tap
    if mode == "max":
        return acc
    total = acc
    div = np.outer(_window_counts(h, k, stride, t, bot, oh, count_include_pad),
                   _window_counts(w, k, stride, left, rt, ow, count_include_pad))
    return (total / div.astype(np.float32)).astype(np.float32, copy=False)


def _window_counts(n: int, k: int, stride: int, begin: int, end: int, out: int, include_pad: bool) -> np.ndarray:
    """Per output position along one axis: how many input positions its window averages over."""
    lo = np.arange(out) * stride - begin
    hi = np.minimum(lo + k, n + end)
    if include_pad:
        return hi - lo
    return np.minimum(hi, n) - np.maximum(lo, 0)


def maxpool_nchw(x: np.ndarray, k: int, stride: int) -> np.ndarray:
    return pool_nchw(x, k, stride, 0, "max")


def _pool_out(n: int, k: int, stride: int, pad: int, ceil_mode: bool, pad_end: int | None = None) -> int:
    """Pooled size (ONNX / PyTorch: with ceil_mode the last window must start inside input + pad)."""
    end = pad if pad_end is None else pad_end
    span = n + pad + end - k
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= n + pad:
        out -= 1
    return out


def global_avg_pool_nchw(x: np.ndarray) -> np.ndarray:
    """(B, C, H, W) -> (B, C, 1, 1) means."""
    return np.asarray(x, np.float32).mean(axis=(2, 3), keepdims=True, dtype=np.float32)


def lrn_nchw(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    """ONNX LRN: x / (bias + alpha/size * sum of squares over channels [c-(size-1)//2, c+ceil((size-1)/2)])^beta."""
    x = np.asarray(x, np.float32)
    c = x.shape[1]
    lo, hi = (size - 1) // 2, -(-(size - 1) // 2)
    sq = np.pad(x * x, ((0, 0), (lo, hi), (0, 0), (0, 0)))
    win = sq[:, 0:c].copy()
    for j in range(1, size):
        win += sq[:, j:j + c]
    return (x / (np.float32(bias) + np.float32(alpha / size) * win) ** np.float32(beta)).astype(np.float32)


def softmax_rows(x: np.ndarray) -> np.ndarray:
    """Softmax over all values of each sample (axis 1 of the flattened (B, F) tensor), shape kept."""
    flat = np.asarray(x, np.float32).reshape(len(x), -1)
    e = np.exp(flat - flat.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32).reshape(x.shape)


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


# ------------------------------------------------------------------ int8 mode
def int8_weights(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-output-map weight quantisation: (int8 weights, float32 scale per map).

    scale[m] = max |w[m]| / 127 (1 for an all-zero map); q = clip(rint(w / scale), -127, 127),
    computed in float32 once at synthesis time (the C program reads the int8 values)."""
    w = np.asarray(w, np.float32)
    amax = np.abs(w.reshape(len(w), -1)).max(axis=1) if w.size else np.zeros(len(w), np.float32)
    scale = np.where(amax > 0, amax / np.float32(S8_MAX), np.float32(1)).astype(np.float32)
    q = np.clip(np.rint(w / scale.reshape((-1,) + (1,) * (w.ndim - 1))), -S8_MAX, S8_MAX).astype(np.int8)
    return q, scale


def int8_input_scale(amax: float) -> np.float32:
    """The per-tensor activation scale of a non-negative input whose calibrated maximum is amax."""
    return np.float32(amax / U8_MAX) if amax > 0 else np.float32(1)


def int8_inverse(scale: float) -> np.float32:
    """What the program multiplies an activation by before rounding (float32, stored in the weight file)."""
    return np.float32(1.0 / float(np.float32(scale)))


def quantise_u8(x: np.ndarray, inv: np.float32) -> np.ndarray:
    """u8 = clamp(rint(x * inv), 0, 255): float32 product, round half to even (the C program's
    vcvtps2dq under the default rounding mode), negatives to 0, large values saturate."""
    y = np.asarray(x, np.float32) * np.float32(inv)
    return np.clip(np.rint(y), 0, U8_MAX).astype(np.uint8)


def int8_multipliers(in_scale: float, w_scale: np.ndarray) -> np.ndarray:
    """The epilogue's per-map float32 factor turning the s32 sum into the output's units."""
    return (np.float32(in_scale) * np.asarray(w_scale, np.float32)).astype(np.float32)


def conv2d_int8_nchw(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int, in_scale: float,
                     pads: tuple[int, int, int, int]) -> np.ndarray:
    """The int8 mode of a dense convolution (groups 1), exactly as the program computes it:
    u8 input (quantise_u8) x s8 weights (int8_weights) summed exactly in s32 (here float64, exact
    below 2^53), then the float32 epilogue float(acc) * multiplier[m] + bias[m] (two roundings, no FMA)."""
    q = quantise_u8(x, int8_inverse(in_scale)).astype(np.float64)
    wq, ws = int8_weights(w)
    m, _, kh, kw = wq.shape
    t, left, bot, r = pads
    qp = np.pad(q, ((0, 0), (0, 0), (t, bot), (left, r))) if t or left or bot or r else q
    win = np.lib.stride_tricks.sliding_window_view(qp, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
    bsz, n, oh, ow = win.shape[:4]
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(bsz * oh * ow, n * kh * kw)
    acc = (cols @ wq.reshape(m, -1).astype(np.float64).T).reshape(bsz, oh, ow, m).transpose(0, 3, 1, 2)
    mult = int8_multipliers(in_scale, ws)
    y = acc.astype(np.float32) * mult[None, :, None, None]
    return (y + np.asarray(b, np.float32)[None, :, None, None]).astype(np.float32)
