"""The network computed two ways: the row-major reference and Cappuccino's map-major layout.

Both take a per-layer computing mode (precise / relaxed / imprecise, see numerics.py) and walk the
model's DAG in topological order. The map-major computation reads weights and feature maps in the
reordered layout of layout.py and each op writes its output straight into its consumers' (padded)
map-major frame, exactly like the synthesised C program; comparing the two is the program's check
of the reordering.

Storage: an imprecise convolution stores binary16; every other op computes in float32 from the
stored values and stores binary16 only when all its inputs are stored that way.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

import numpy as np

from core.cappuccino import layout
from core.cappuccino.model import (INPUT, AddOp, CnnModel, ConcatOp, ConvOp, GlobalAvgPoolOp, LrnOp, Op, PoolOp,
                                   SoftmaxOp)
from core.cappuccino.numerics import (IMPRECISE, INT8, PRECISE, conv2d_int8_nchw, conv2d_nchw, global_avg_pool_nchw,
                                      int8_inverse, int8_multipliers, int8_weights, lrn_nchw, mode_input, mode_output,
                                      mode_weights, pool_nchw, quantise_u8, softmax_rows, to_half)

Modes = dict[str, str]


def apply_node(op: Op, xs: list[np.ndarray], halves: list[bool], mode: str = PRECISE) -> tuple[np.ndarray, bool]:
    """One op of the reference pass on its input tensors; `halves` say which are stored in binary16."""
    if isinstance(op, ConvOp):
        x = xs[0].reshape((len(xs[0]),) + tuple(op.in_shape))      # an fc may read a flattened tensor
        if mode == INT8:
            check_int8(op)
            y = conv2d_int8_nchw(x, op.weight, op.bias, op.stride, op.int8_scale, op.pads4)
            return (np.maximum(y, np.float32(0)) if op.relu else y), False
        y = conv2d_nchw(mode_input(x, mode), mode_weights(op.weight, mode), mode_weights(op.bias, mode),
                        op.stride, op.pad, op.groups, op.pads)
        if op.relu:
            y = np.maximum(y, np.float32(0))
        return mode_output(y, mode), mode == IMPRECISE
    half = all(halves)
    x = xs[0]
    if isinstance(op, PoolOp):
        y = pool_nchw(x, op.k, op.stride, op.pad, op.mode, op.ceil_mode, op.pads, op.count_include_pad)
    elif isinstance(op, GlobalAvgPoolOp):
        y = global_avg_pool_nchw(x)
    elif isinstance(op, ConcatOp):
        y = np.concatenate(xs, axis=1)
    elif isinstance(op, AddOp):
        y = xs[0].astype(np.float32, copy=True)
        for other in xs[1:]:
            y = y + other
        if op.relu:
            y = np.maximum(y, np.float32(0))
    elif isinstance(op, LrnOp):
        y = lrn_nchw(x, op.size, op.alpha, op.beta, op.bias)
    elif isinstance(op, SoftmaxOp):
        y = softmax_rows(x.reshape((len(x),) + tuple(op.in_shape)))
    else:                                           # pragma: no cover - check_graph admits only these
        raise TypeError(f"unknown op {op!r}")
    return (to_half(y) if half else y), half


def int8_problem(op: ConvOp) -> str | None:
    """Why op cannot run in int8 mode (None: it can). Grouped and depthwise convolutions stay float."""
    if op.groups != 1:
        return f"{op.name}: grouped or depthwise convolutions have no int8 mode"
    if op.int8_scale <= 0:
        return f"{op.name}: int8 mode needs a calibrated input scale (inexact.calibrate_int8)"
    return None


def check_int8(op: ConvOp) -> None:
    problem = int8_problem(op)
    if problem:
        raise ValueError(problem)


def apply_op(op: Op, x: np.ndarray, half: bool, mode: str = PRECISE) -> tuple[np.ndarray, bool]:
    """One single-input op of the reference pass; `half` says whether x is stored in binary16."""
    return apply_node(op, [x], [half], mode)


def last_reads(model: CnnModel) -> dict[str, int]:
    """For each tensor, the index of the last op that reads it (so it can be freed after)."""
    last: dict[str, int] = {}
    for i, op in enumerate(model.ops):
        for t in op.inputs:
            last[t] = i
    return last


def forward_reference(model: CnnModel, x: np.ndarray, modes: Modes | None = None,
                      keep: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
    """Row-major (NCHW) forward pass; returns the output (B, F) and, with keep, every op's output."""
    modes = modes or {}
    outs: list[np.ndarray] = []
    live: dict[str, tuple[np.ndarray, bool]] = {INPUT: (x, False)}
    last = last_reads(model)
    y = x
    for i, op in enumerate(model.ops):
        y, half = apply_node(op, [live[t][0] for t in op.inputs], [live[t][1] for t in op.inputs],
                             modes.get(op.name, PRECISE))
        for t in set(op.inputs):
            if last[t] == i:
                del live[t]
        live[op.name] = (y, half)
        if keep:
            outs.append(y)
    return y.reshape(len(y), -1), outs


# ------------------------------------------------------------------ map-major
def forward_map_major(model: CnnModel, x: np.ndarray, V: int, modes: Modes | None = None,
                      keep: bool = True) -> tuple[np.ndarray, list[np.ndarray]]:
    """The same network in map-major layout; returns the output and every op's map-major frame."""
    modes = modes or {}
    ops = model.ops
    halos = {INPUT: layout.frame_halo(ops, -1)}
    halos.update({op.name: layout.frame_halo(ops, i) for i, op in enumerate(ops)})
    live: dict[str, tuple[np.ndarray, bool]] = {INPUT: (layout.pack_feature_maps(x, V, halos[INPUT]), False)}
    shapes = {INPUT: model.input_shape}
    last = last_reads(model)
    frames: list[np.ndarray] = []
    buf = live[INPUT][0]
    for i, op in enumerate(ops):
        ins = [(live[t][0], halos[t], shapes[t]) for t in op.inputs]
        halves = [live[t][1] for t in op.inputs]
        if isinstance(op, ConvOp):
            mode = modes.get(op.name, PRECISE)
            src, halo_in, shape_in = ins[0]
            if tuple(shape_in) != tuple(op.in_shape):      # an fc reading a tensor of another shape
                flat = layout.unpack_feature_maps(src, shape_in[0], halo_in).reshape((len(x),) + op.in_shape)
                src, halo_in = layout.pack_feature_maps(flat, V, 0), 0
            out = (_conv_int8_map_major(op, src, halo_in, V) if mode == INT8
                   else _conv_map_major(op, mode_input(src, mode), halo_in, V, mode))
            if op.relu:
                out = np.maximum(out, np.float32(0))
            out = mode_output(out, mode)
            half = mode == IMPRECISE
        else:
            out = _other_map_major(op, ins, V, len(x))
            half = all(halves)
            if half:
                out = to_half(out)
        buf = layout.frame(out, halos[op.name])
        for t in set(op.inputs):
            if last[t] == i:
                del live[t]
        live[op.name] = (buf, half)
        shapes[op.name] = op.out_shape
        if keep:
            frames.append(buf)
    m = ops[-1].out_shape[0]
    return layout.unpack_feature_maps(buf, m, halos[ops[-1].name]).reshape(len(x), -1), frames


def _inner(buf: np.ndarray, halo: int) -> np.ndarray:
    b, s, hp, wp, v = buf.shape
    return buf[:, :, halo:hp - halo, halo:wp - halo, :] if halo else buf


def _windows(op: ConvOp, buf: np.ndarray, halo: int) -> np.ndarray:
    """(B, S, R, C, V, KH, KW) windows of the input frame at the output pixels' positions.

    The frame's halo is the largest pad among its readers; this op starts reading at
    (halo - top, halo - left), so its own padding is the frame's zero border."""
    _, _, kh, kw = op.weight.shape
    top, left, _, _ = op.pads4
    assert halo >= max(op.pads4), (op.name, halo, op.pads4)
    _, oh, ow = op.out_shape
    r0, c0 = halo - top, halo - left
    win = np.lib.stride_tricks.sliding_window_view(buf[:, :, r0:, c0:], (kh, kw), axis=(2, 3))
    return win[:, :, : (oh - 1) * op.stride + 1: op.stride, : (ow - 1) * op.stride + 1: op.stride]


def _conv_map_major(op: ConvOp, buf: np.ndarray, halo: int, V: int, mode: str) -> np.ndarray:
    """(B, S_in, Hp, Wp, V) frame -> (B, S_out, OH, OW, V) unpadded output."""
    win = _windows(op, buf, halo)                                            # B,S,R,C,V,kh,kw
    bias = layout.pad_maps(mode_weights(op.bias, mode), V).reshape(-1, V)    # S_out, V
    w_mode = mode_weights(op.weight, mode)
    if op.depthwise:
        w = layout.weights_depthwise_map_major(w_mode, V)                    # S, KH, KW, V
        out = np.einsum("bsrcvij,sijv->bsrcv", win, w, optimize=True)
    elif op.groups > 1 and layout.group_aligned(op, V):
        wg = layout.weights_grouped_map_major(w_mode, op.groups, V)          # G,S_out/G,S_in/G,KH,KW,Vo,Vi
        g, si = op.groups, win.shape[1] // op.groups
        out = np.concatenate([np.einsum("bsrcvij,tsijlv->btrcl", win[:, k * si:(k + 1) * si], wg[k], optimize=True)
                              for k in range(g)], axis=1)
    else:           # dense, or groups not on stack boundaries: the block-diagonal dense equivalent
        dense = w_mode if op.groups == 1 else layout.expand_groups(w_mode, op.groups)
        w = layout.weights_map_major(dense, V)                               # S_out,S_in,KH,KW,Vout,Vin
        out = np.einsum("bsrcvij,tsijlv->btrcl", win, w, optimize=True)
    return out.astype(np.float32) + bias[None, :, None, None, :]


def _conv_int8_map_major(op: ConvOp, buf: np.ndarray, halo: int, V: int) -> np.ndarray:
    """The int8 mode on the map-major frame: u8 frame (halo and padding lanes quantise to 0) x s8
    map-major weights summed exactly, then the same float32 epilogue as the reference."""
    check_int8(op)
    q = quantise_u8(buf, int8_inverse(op.int8_scale)).astype(np.float64)
    win = _windows(op, q, halo)
    wq, ws = int8_weights(op.weight)
    w = layout.weights_map_major(wq.astype(np.float64), V)
    acc = np.einsum("bsrcvij,tsijlv->btrcl", win, w, optimize=True)
    mult = layout.pad_maps(int8_multipliers(op.int8_scale, ws), V).reshape(-1, V)
    bias = layout.pad_maps(np.asarray(op.bias, np.float32), V).reshape(-1, V)
    y = acc.astype(np.float32) * mult[None, :, None, None, :]
    return (y + bias[None, :, None, None, :]).astype(np.float32)


def _lanes_as_nchw(inner: np.ndarray) -> np.ndarray:
    """A (B, S, H, W, V) map-major block viewed as (B, S*V, H, W) (lane-wise ops act on it in place)."""
    b, s, h, w, v = inner.shape
    return inner.transpose(0, 1, 4, 2, 3).reshape(b, s * v, h, w)


def _nchw_as_lanes(x: np.ndarray, V: int) -> np.ndarray:
    b, c, h, w = x.shape
    return x.reshape(b, c // V, V, h, w).transpose(0, 1, 3, 4, 2)


def _other_map_major(op: Op, ins: list[tuple[np.ndarray, int, tuple]], V: int, batch: int) -> np.ndarray:
    """The non-convolution kinds on map-major frames -> (B, S_out, OH, OW, V) unpadded output."""
    src, halo, shape = ins[0]
    inner = _inner(src, halo)
    if isinstance(op, PoolOp):              # lane by lane: the frame is pooled in place of NCHW maps
        pooled = pool_nchw(_lanes_as_nchw(inner), op.k, op.stride, op.pad, op.mode, op.ceil_mode, op.pads,
                           op.count_include_pad)
        return _nchw_as_lanes(pooled, V)
    if isinstance(op, GlobalAvgPoolOp):
        return inner.mean(axis=(2, 3), keepdims=True, dtype=np.float32)
    if isinstance(op, AddOp):
        y = inner.astype(np.float32, copy=True)
        for other, h, _ in ins[1:]:
            y = y + _inner(other, h)
        return np.maximum(y, np.float32(0)) if op.relu else y
    if isinstance(op, ConcatOp):
        # map c of the output is map c - offset of input j: stack (c // V, lane c % V), equation (2)
        c_out, h, w = op.out_shape
        out = np.zeros((batch, layout.stacks(c_out, V), h, w, V), np.float32)
        offset = 0
        for (buf, hj, sj) in ins:
            s_in, l_in = layout.channel_lanes(sj[0], V)
            m_out = np.arange(offset, offset + sj[0])
            out[:, m_out // V, :, :, m_out % V] = _inner(buf, hj)[:, s_in, :, :, l_in]    # (maps, B, H, W)
            offset += sj[0]
        return out
    if isinstance(op, LrnOp):               # across maps: lanes of one pixel, then the next stack's
        c = op.in_shape[0]
        y = lrn_nchw(_lanes_as_nchw(inner)[:, :c], op.size, op.alpha, op.beta, op.bias)
        return _nchw_as_lanes(layout.pad_maps(y, V, axis=1), V)
    if isinstance(op, SoftmaxOp):           # over the real maps only (padded lanes stay zero)
        c = shape[0]
        flat = _lanes_as_nchw(inner)[:, :c].reshape((batch,) + tuple(op.in_shape))
        y = softmax_rows(flat).reshape(batch, c, inner.shape[2], inner.shape[3])
        return _nchw_as_lanes(layout.pad_maps(y, V, axis=1), V)
    raise TypeError(f"unknown op {op!r}")   # pragma: no cover


@dataclass
class LayoutCheck:
    """How the map-major computation compares with the reference, layer by layer."""

    max_abs_diff: dict[str, float]
    zero_overhead_ok: dict[str, bool]
    classification_agreement: float     # fraction of images classified alike
    ok: bool

    def to_json(self) -> dict:
        return asdict(self)


def check_layouts(model: CnnModel, x: np.ndarray, V: int, modes: Modes | None = None,
                  tol: float = 1e-3) -> LayoutCheck:
    """Compute the network both ways and compare every op; also check the OLP store order.

    The zero-overhead check: in every op, the value OLP thread t computes for its (m, r, c)
    (equations 3-5, layout.olp_thread_to_output) must sit at position t of the map-major output,
    i.e. the thread writes to its own id and the next op needs no reordering pass.
    """
    ref_logits, ref_outs = forward_reference(model, x, modes, keep=True)
    mm_logits, frames = forward_map_major(model, x, V, modes)
    if modes and INT8 in modes.values():
        # a float layer's last-bit difference (other summation order) may move an int8 layer's input
        # across a rounding boundary, and the chains drift apart by quantisation steps: compare every
        # op with the reference op applied to the map-major pass's own inputs instead
        ref_outs = _per_op_reference(model, x, modes, frames)
    diffs, zero = {}, {}
    ok = True
    for i, op in enumerate(model.ops):
        c, h, w = op.out_shape
        halo = layout.frame_halo(model.ops, i)
        ref = ref_outs[i].reshape((len(x),) + tuple(op.out_shape))
        unpacked = layout.unpack_feature_maps(frames[i], c, halo)
        scale = max(1.0, float(np.abs(ref).max()))
        d = float(np.abs(unpacked - ref).max()) / scale
        diffs[op.name] = d
        inner = frames[i][:, :, halo:halo + h, halo:halo + w, :] if halo else frames[i]
        flat = inner.reshape(len(x), -1)
        t = np.arange(flat.shape[1])
        m, r, col = layout.olp_thread_to_output(t, c, h, w, V, map_major=True)
        real = m < c
        expect = ref[:, np.minimum(m, c - 1), r, col]
        zero[op.name] = bool(np.allclose(flat[:, real], expect[:, real], rtol=tol, atol=tol * scale)
                             and np.all(flat[:, ~real] == 0))
        ok = ok and d <= tol and zero[op.name]
    same = float((ref_logits.argmax(1) == mm_logits.argmax(1)).mean())
    return LayoutCheck(diffs, zero, same, ok and same == 1.0)


def _per_op_reference(model: CnnModel, x: np.ndarray, modes: Modes, frames: list[np.ndarray]) -> list[np.ndarray]:
    """Every op's reference output computed from the map-major frames of its inputs (unpacked)."""
    ops = model.ops
    vals: dict[str, np.ndarray] = {INPUT: x}
    half: dict[str, bool] = {INPUT: False}
    outs = []
    for i, op in enumerate(ops):
        mode = modes.get(op.name, PRECISE) if isinstance(op, ConvOp) else PRECISE
        y, h = apply_node(op, [vals[t] for t in op.inputs], [half[t] for t in op.inputs], mode)
        outs.append(y)
        inner = layout.unpack_feature_maps(frames[i], op.out_shape[0], layout.frame_halo(ops, i))
        vals[op.name] = inner.reshape((len(x),) + tuple(op.out_shape))
        half[op.name] = h
    return outs


# ------------------------------------------------------------------ incremental evaluation
class WorkCounter:
    """MACs computed so far (images x per-image MACs), shared by a cache and its subsets."""

    def __init__(self) -> None:
        self.macs = 0.0


def op_work(op: Op) -> float:
    """One image's work of an op in MACs: a convolution's or fc's MACs, else its output's size."""
    return float(op.macs) if isinstance(op, ConvOp) else float(np.prod(op.out_shape))


class ActivationCache:
    """Every op's precise output for a batch of images, so that a mode assignment is computed only
    from the first op whose result differs from the precise one onwards (issue 35: VGG-16's mode
    search in minutes, not hours).

    The rule that skips work is exact, never an estimate: an op whose inputs all hold their precise
    values and whose mode gives the precise output bit for bit (a relaxed layer that meets no
    denormal: DAZ and FTZ change nothing) leaves the network in its precise state, so nothing after
    it is recomputed; whether it does is remembered per (op, mode). Once a tensor differs, every op
    that reads it is recomputed, and its output compared with the precise one again (a difference
    that a ReLU or a max pooling removes ends the recomputation of that branch).

    With `prefix_bytes` > 0 the differing tensors still to be read after each op are kept per
    canonical mode prefix (layers proven precise-equal count as precise), up to that many bytes, so
    a greedy search that extends one assignment recomputes from the newly changed layer only.
    `computed` counts the ops evaluated (a machine-independent measure of the work, for tests);
    `work` the MACs they took (non-arithmetic ops count their outputs), shared with the subsets, so
    that the engine reports the search's progress by work done rather than configurations counted.
    """

    def __init__(self, model: CnnModel, x: np.ndarray, outs: list[np.ndarray] | None = None,
                 prefix_bytes: int = 0, check: Callable[[], None] = lambda: None) -> None:
        self.model = model
        self.x = x
        self.outs = outs if outs is not None else forward_reference(model, x, keep=True)[1]
        self.last = last_reads(model)
        self.prefix_bytes = prefix_bytes
        self.check = check
        self.same: dict[tuple[str, str], bool] = {}
        self._prefix: dict[tuple, dict[str, tuple[np.ndarray, bool]]] = {}
        self._bytes = 0
        self._index = {op.name: i for i, op in enumerate(model.ops)}
        self.computed = 0
        self.work = WorkCounter()

    def subset(self, rows: np.ndarray | None, prefix_bytes: int | None = None) -> "ActivationCache":
        """The cache of some of the images (a seeded search sample; None: all of them, sharing the
        arrays) with its own prefix store of `prefix_bytes`."""
        x, outs = (self.x, self.outs) if rows is None else (self.x[rows], [o[rows] for o in self.outs])
        sub = ActivationCache(self.model, x, outs, self.prefix_bytes if prefix_bytes is None else prefix_bytes,
                              self.check)
        sub.same = dict(self.same)      # equal on the whole batch is equal on its rows (not conversely)
        sub.work = self.work
        return sub

    def precise_logits(self) -> np.ndarray:
        return self.outs[-1].reshape(len(self.x), -1)

    def logits(self, modes: Modes | None = None) -> np.ndarray:
        """The (B, F) output with `modes` (layer -> mode; missing layers precise), as forward_reference."""
        modes = modes or {}
        ops = self.model.ops
        diff: dict[str, tuple[np.ndarray, bool]] = {}      # tensors that differ from precise -> (values, half)
        canon: list[str] = []                               # the modes that shaped the state so far
        i = 0
        while i < len(ops):
            op = ops[i]
            mode = modes.get(op.name, PRECISE) if isinstance(op, ConvOp) else PRECISE
            reads_diff = any(t in diff for t in op.inputs)
            if not reads_diff and (mode == PRECISE or self.same.get((op.name, mode))):
                canon.append(PRECISE)               # the precise output, already cached
            else:
                hit = self._prefix.get(tuple(canon) + (mode,)) if self.prefix_bytes else None
                if hit is not None:
                    diff = dict(hit)
                    canon.append(mode)
                    i += 1
                    continue
                self.check()
                xs = [diff[t][0] if t in diff else self._input(t) for t in op.inputs]
                halves = [diff[t][1] if t in diff else False for t in op.inputs]
                y, half = apply_node(op, xs, halves, mode)
                self.computed += 1
                self.work.macs += op_work(op) * len(self.x)
                equal = not half and _bitwise_equal(y, self.outs[i])
                if not reads_diff:
                    self.same[(op.name, mode)] = equal
                canon.append(PRECISE if equal and not reads_diff else mode)
                if not equal:
                    diff[op.name] = (y, half)
            for t in set(op.inputs):
                if self.last[t] == i:
                    diff.pop(t, None)
            if diff and self.prefix_bytes and i < len(ops) - 1:
                self._remember(tuple(canon), diff)
            i += 1
        last = ops[-1].name
        y = diff[last][0] if last in diff else self.outs[-1]
        return y.reshape(len(self.x), -1)

    def _input(self, name: str) -> np.ndarray:
        if name == INPUT:
            return self.x
        return self.outs[self._index[name]]

    def _remember(self, key: tuple, diff: dict[str, tuple[np.ndarray, bool]]) -> None:
        if key in self._prefix:
            return
        size = sum(a.nbytes for a, _ in diff.values())
        if size > self.prefix_bytes:
            return
        if self._bytes + size > self.prefix_bytes:
            self._prefix, self._bytes = {}, 0
        self._prefix[key] = dict(diff)
        self._bytes += size


def _bitwise_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Same shape, type and bits (a -0 where the precise output holds +0 counts as different)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(np.array_equal(np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8)))
