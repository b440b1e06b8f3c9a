"""The network computed two ways: the row-major reference and Cappuccino's map-major layout.

Both take a per-layer computing mode (precise / relaxed / imprecise, see numerics.py). The
map-major computation reads weights and feature maps in the reordered layout of layout.py and
each layer writes its output straight into the next layer's (padded) map-major frame, exactly
like the synthesised C program; comparing the two is the program's check of the reordering.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.cappuccino import layout
from core.cappuccino.model import CnnModel, ConvOp, PoolOp
from core.cappuccino.numerics import (IMPRECISE, PRECISE, conv2d_nchw, mode_input, mode_output, mode_weights,
                                      pool_nchw, to_half)

Modes = dict[str, str]


def apply_op(op, x: np.ndarray, half: bool, mode: str = PRECISE) -> tuple[np.ndarray, bool]:
    """One layer of the reference pass; `half` says whether x is stored in binary16."""
    if isinstance(op, ConvOp):
        y = conv2d_nchw(mode_input(x, mode), mode_weights(op.weight, mode), mode_weights(op.bias, mode),
                        op.stride, op.pad)
        if op.relu:
            y = np.maximum(y, np.float32(0))
        return mode_output(y, mode), mode == IMPRECISE
    y = pool_nchw(x, op.k, op.stride, op.pad, op.mode, op.ceil_mode)
    return (to_half(y) if half else y), half


def forward_reference(model: CnnModel, x: np.ndarray, modes: Modes | None = None,
                      keep: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
    """Row-major (NCHW) forward pass; returns logits (B, classes) and, with keep, every layer's output."""
    modes = modes or {}
    outs: list[np.ndarray] = []
    half = False                    # is the current tensor stored in binary16?
    for op in model.ops:
        x, half = apply_op(op, x, half, modes.get(op.name, PRECISE))
        if keep:
            outs.append(x)
    return x.reshape(len(x), -1), outs


def forward_map_major(model: CnnModel, x: np.ndarray, V: int, modes: Modes | None = None
                      ) -> tuple[np.ndarray, list[np.ndarray]]:
    """The same network in map-major layout; returns logits and every layer's map-major frame."""
    modes = modes or {}
    ops = model.ops
    buf = layout.pack_feature_maps(x, V, layout.frame_halo(ops, -1))
    frames: list[np.ndarray] = []
    half = False
    for i, op in enumerate(ops):
        halo_in = layout.frame_halo(ops, i - 1)
        halo_out = layout.frame_halo(ops, i)
        if isinstance(op, ConvOp):
            mode = modes.get(op.name, PRECISE)
            out = _conv_map_major(op, mode_input(buf, mode), halo_in, V, mode)
            if op.relu:
                out = np.maximum(out, np.float32(0))
            out = mode_output(out, mode)
            half = mode == IMPRECISE
        else:
            out = _pool_map_major(op, buf, halo_in)
            if half:
                out = to_half(out)
        buf = layout.frame(out, halo_out)
        frames.append(buf)
    m = ops[-1].out_shape[0]
    return layout.unpack_feature_maps(buf, m, layout.frame_halo(ops, len(ops) - 1)).reshape(len(x), -1), frames


def _conv_map_major(op: ConvOp, buf: np.ndarray, halo: int, V: int, mode: str) -> np.ndarray:
    """(B, S_in, Hp, Wp, V) frame -> (B, S_out, OH, OW, V) unpadded output."""
    m, n, kh, kw = op.weight.shape
    w = layout.weights_map_major(mode_weights(op.weight, mode), V)          # S_out,S_in,KH,KW,Vout,Vin
    bias = layout.pad_maps(mode_weights(op.bias, mode), V).reshape(-1, V)    # S_out, V
    # the frame's halo equals op.pad (the producer wrote into this layer's padded frame)
    assert halo == op.pad, (op.name, halo, op.pad)
    _, _, oh, ow = op.out_shape[0], None, op.out_shape[1], op.out_shape[2]
    win = np.lib.stride_tricks.sliding_window_view(buf, (kh, kw), axis=(2, 3))   # B,S,R,C,V,kh,kw
    win = win[:, :, : (oh - 1) * op.stride + 1: op.stride, : (ow - 1) * op.stride + 1: op.stride]
    out = np.einsum("bsrcvij,tsijlv->btrcl", win, w, optimize=True).astype(np.float32)
    return out + bias[None, :, None, None, :]


def _pool_map_major(op: PoolOp, buf: np.ndarray, halo: int) -> np.ndarray:
    """Pooling acts lane by lane, so the map-major frame is pooled in place of NCHW maps."""
    b, s, hp, wp, v = buf.shape
    inner = buf[:, :, halo:hp - halo, halo:wp - halo, :] if halo else buf
    as_nchw = inner.transpose(0, 1, 4, 2, 3).reshape(b, s * v, inner.shape[2], inner.shape[3])
    pooled = pool_nchw(as_nchw, op.k, op.stride, op.pad, op.mode, op.ceil_mode)
    return pooled.reshape(b, s, v, pooled.shape[2], pooled.shape[3]).transpose(0, 1, 3, 4, 2)


@dataclass
class LayoutCheck:
    """How the map-major computation compares with the reference, layer by layer."""

    max_abs_diff: dict[str, float]
    zero_overhead_ok: dict[str, bool]
    same_classes: float          # fraction of images classified alike
    ok: bool

    def to_json(self) -> dict:
        return {"max_abs_diff": self.max_abs_diff, "zero_overhead_ok": self.zero_overhead_ok,
                "classification_agreement": self.same_classes, "ok": self.ok}


def check_layouts(model: CnnModel, x: np.ndarray, V: int, modes: Modes | None = None,
                  tol: float = 1e-3) -> LayoutCheck:
    """Compute the network both ways and compare every layer; also check the OLP store order.

    The zero-overhead check: in every layer, the value OLP thread t computes for its (m, r, c)
    (equations 3-5, layout.olp_thread_to_output) must sit at position t of the map-major output,
    i.e. the thread writes to its own id and the next layer needs no reordering pass.
    """
    ref_logits, ref_outs = forward_reference(model, x, modes, keep=True)
    mm_logits, frames = forward_map_major(model, x, V, modes)
    diffs, zero = {}, {}
    ok = True
    for i, op in enumerate(model.ops):
        c, h, w = op.out_shape
        halo = layout.frame_halo(model.ops, i)
        unpacked = layout.unpack_feature_maps(frames[i], c, halo)
        scale = max(1.0, float(np.abs(ref_outs[i]).max()))
        d = float(np.abs(unpacked - ref_outs[i]).max()) / scale
        diffs[op.name] = d
        inner = frames[i][:, :, halo:halo + h, halo:halo + w, :] if halo else frames[i]
        flat = inner.reshape(len(x), -1)
        t = np.arange(flat.shape[1])
        m, r, col = layout.olp_thread_to_output(t, c, h, w, V, map_major=True)
        real = m < c
        ref = ref_outs[i][:, np.minimum(m, c - 1), r, col]
        zero[op.name] = bool(np.allclose(flat[:, real], ref[:, real], rtol=tol, atol=tol * scale)
                             and np.all(flat[:, ~real] == 0))
        ok = ok and d <= tol and zero[op.name]
    same = float((ref_logits.argmax(1) == mm_logits.argmax(1)).mean())
    return LayoutCheck(diffs, zero, same, ok and same == 1.0)
