"""Evaluate Vec(C) = R(M(A), M(B), op) (eq. 1) with numpy.

Two paths compute the same thing:
* `evaluate`: M(operand) is gathered with index arrays (eq. 5) for a block of output rows at a
  time and the strategy is applied row-wise; bilinear strategies (dot, ReLU, residual) instead
  gather each operand only over the indices it moves with and contract with einsum, so the
  repetition M() implies is never materialised.
* `naive_rows`: a deliberately plain loop over eq. 5 element by element, running the strategy in
  its PreLoop / Loop / PostLoop form (Listings 1 and 2), used to cross-check both the vectorised
  gather and the vectorised strategy on sampled outputs.
"""

from __future__ import annotations

import itertools
import math
import string
from typing import Callable

import numpy as np

from core.errors import InputError
from core.merit.result import MGrid
from core.merit_transform.strategies import Strategy, get_strategy
from core.merit_transform.transform import MeritTransform, Operand


def _check_data(t: MeritTransform, data: dict[str, np.ndarray]) -> None:
    for op in t.operands:
        if op.name not in data:
            raise InputError(f"no data for operand {op.name!r}", f"data.{op.name}")
        if tuple(np.shape(data[op.name])) != tuple(op.shape):
            raise InputError(f"data for {op.name!r} has shape {np.shape(data[op.name])}, the transform "
                             f"declares {tuple(op.shape)}", f"data.{op.name}")
    s = get_strategy(t.strategy)
    if s.name == "bilateral" and "norm" not in t.params:
        raise InputError("the bilateral strategy needs params.norm (= -1 / (2 sigma_r^2))", "transform.params")


def _compact(t: MeritTransform, op: Operand, arr: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """M(op) over only the indices op moves with (its repetition axes left out)."""
    used = [n for n, _ in t.indices if n in op.maps]
    sizes = dict(t.indices)
    k = {}
    for pos, n in enumerate(used):
        shape = [1] * len(used)
        shape[pos] = sizes[n]
        k[n] = np.arange(sizes[n]).reshape(shape)
    if not used:
        return np.asarray(t.gather(op, arr, {})).reshape(()), []
    return t.gather(op, arr, k), used


def evaluate(t: MeritTransform, data: dict[str, np.ndarray], check: Callable[[], None] | None = None,
             block_elems: int = 1 << 21) -> np.ndarray:
    """Vec(C) reshaped to the transform's output shape."""
    _check_data(t, data)
    s = get_strategy(t.strategy)
    if s.bilinear and compact_elements(t) <= COMPACT_MAX_ELEMENTS:
        flat = _evaluate_bilinear(t, s, data)
    else:
        flat = _evaluate_rows(t, s, data, check, block_elems)
    return flat.reshape(t.out_shape())


def _evaluate_bilinear(t: MeritTransform, s: Strategy, data: dict[str, np.ndarray]) -> np.ndarray:
    letters = dict(zip([n for n, _ in t.indices], string.ascii_letters))
    a_op, b_op = t.operands[0], t.operands[1]
    ca, ua = _compact(t, a_op, data[a_op.name])
    cb, ub = _compact(t, b_op, data[b_op.name])
    present_p = [n for n, _ in t.parallel if n in ua or n in ub]
    spec = (f"{''.join(letters[n] for n in ua)},{''.join(letters[n] for n in ub)}"
            f"->{''.join(letters[n] for n in present_p)}")
    acc = np.einsum(spec, ca, cb, optimize=True)
    # accumulated indices neither operand moves with repeat the same product
    for n, size in t.accumulate:
        if n not in ua and n not in ub:
            acc = acc * size
    shape = [size if n in present_p else 1 for n, size in t.parallel]
    acc = np.broadcast_to(np.reshape(acc, shape), t.p_sizes).reshape(-1)
    if s.name == "relu":
        return np.maximum(acc, 0)
    if s.name == "residual":
        r_op = t.operands[2]
        cr, ur = _compact(t, r_op, data[r_op.name])
        rshape = [size if n in ur else 1 for n, size in t.parallel]
        r = np.broadcast_to(np.reshape(cr, rshape), t.p_sizes).reshape(-1)
        out = acc + r
        return np.maximum(out, 0) if t.params.get("relu", False) else out
    return np.array(acc)


COMPACT_MAX_ELEMENTS = 1 << 25     # an operand gathered over its indices larger than this (256 MB in
                                   # float64: im2col of a real layer) is streamed in blocks of outputs instead


def compact_elements(t: MeritTransform) -> int:
    """Elements of the largest operand gathered over the indices it moves with (the einsum path's M())."""
    sizes = dict(t.indices)
    return max((math.prod(sizes[n] for n in op.maps) for op in t.operands), default=1)


def evaluate_rows(t: MeritTransform, data: dict[str, np.ndarray], rows: np.ndarray,
                  check: Callable[[], None] | None = None, block_elems: int = 1 << 21) -> np.ndarray:
    """Outputs at the flat numbers `rows` (row-major over p) only, exactly as `evaluate` computes them
    (in float64 for float inputs): M() gathered for those outputs, in blocks; verification of a large
    transform on a sample (core.merit.sample)."""
    _check_data(t, data)
    return _evaluate_rows(t, get_strategy(t.strategy), data, check, block_elems,
                          np.asarray(rows, dtype=np.int64))


def _gather_padded(t: MeritTransform, op: Operand, padded: np.ndarray, k: dict[str, np.ndarray]) -> np.ndarray:
    """t.gather on an operand already padded."""
    xs = t.coords(op, k)
    full = np.broadcast_shapes(*[np.shape(v) for v in k.values()]) if k else ()
    return padded[tuple(np.broadcast_to(x + p, full) for x, p in zip(xs, op.padding()))]


def _evaluate_rows(t: MeritTransform, s: Strategy, data: dict[str, np.ndarray],
                   check: Callable[[], None] | None, block_elems: int, rows: np.ndarray | None = None) -> np.ndarray:
    """Blocks of output rows (all, or the flat numbers `rows`), M() gathered for one block at a time:
    memory bounded by `block_elems` whatever the size of the transform."""
    A = t.a_count
    P = t.p_count if rows is None else len(rows)
    rows_per_block = max(1, block_elems // max(A, 1))
    a_idx = np.unravel_index(np.arange(A), t.a_sizes) if t.accumulate else ()
    a_k = {n: a_idx[i].reshape(1, A) for i, (n, _) in enumerate(t.accumulate)}
    out = np.empty(P, dtype=np.result_type(*[data[o.name] for o in t.operands], np.float64))
    padded: dict[tuple[str, tuple[int, ...]], np.ndarray] = {}      # each operand padded once, not per block
    for op in t.operands:
        pad = op.padding()
        if (op.name, pad) not in padded:
            arr = np.asarray(data[op.name])
            padded[(op.name, pad)] = np.pad(arr, [(p, p) for p in pad]) if any(pad) else arr
    for r0 in range(0, P, rows_per_block):
        if check:
            check()
        r1 = min(P, r0 + rows_per_block)
        flat = np.arange(r0, r1) if rows is None else rows[r0:r1]
        p_idx = np.unravel_index(flat, t.p_sizes) if t.parallel else ()
        k = {n: p_idx[i].reshape(-1, 1) for i, (n, _) in enumerate(t.parallel)}
        k.update(a_k)
        xs = []
        for op, per_output in zip(t.operands, s.per_output):
            used = {n: v for n, v in k.items() if n in op.maps}
            g = (_gather_padded(t, op, padded[(op.name, op.padding())], used) if used
                 else np.asarray(data[op.name]).reshape(-1)[:1].reshape(1, 1))
            target = (r1 - r0, 1) if per_output else (r1 - r0, A)
            xs.append(np.broadcast_to(g, target))
        out[r0:r1] = s.rows(xs, t.params)
    return out


def naive_rows(t: MeritTransform, data: dict[str, np.ndarray], rows: list[int]) -> np.ndarray:
    """Outputs at flat row numbers `rows`, computed by walking eq. 5 one element at a time."""
    s = get_strategy(t.strategy)
    padded = {}
    for op in t.operands:
        pad = op.padding()
        padded[op.name] = (np.pad(data[op.name], [(p, p) for p in pad]), pad)
    a_combos = list(itertools.product(*[range(n) for n in t.a_sizes])) if t.accumulate else [()]
    results = []
    for r in rows:
        p_vals = np.unravel_index(r, t.p_sizes) if t.parallel else ()
        k_p = {n: int(v) for (n, _), v in zip(t.parallel, p_vals)}
        def element(oi: int, k: dict[str, int]) -> float:
            op = t.operands[oi]
            x = [0] * len(op.shape)
            for idx, m in op.maps.items():
                x[m.axis] += k[idx] * m.stride + m.offset
            arr, pad = padded[op.name]
            return float(arr[tuple(xi + pi for xi, pi in zip(x, pad))])

        once = [element(oi, k_p) for oi, po in enumerate(s.per_output) if po]
        loop_ops = [oi for oi, po in enumerate(s.per_output) if not po]
        strat = s.scalar(t.params)
        strat.pre(once)
        for combo in a_combos:
            k = dict(k_p)
            k.update({n: v for (n, _), v in zip(t.accumulate, combo)})
            strat.loop([element(oi, k) for oi in loop_ops])
        results.append(strat.post(once))
    return np.array(results)


def m_grid(t: MeritTransform, op: Operand, max_rows: int = 32, max_cols: int = 36) -> MGrid:
    """A corner of M(op) as source coordinates: rows = flattened p, columns = flattened a."""
    R, C = min(t.p_count, max_rows), min(t.a_count, max_cols)
    p_idx = np.unravel_index(np.arange(R), t.p_sizes) if t.parallel else ()
    a_idx = np.unravel_index(np.arange(C), t.a_sizes) if t.accumulate else ()
    k = {n: p_idx[i].reshape(-1, 1) for i, (n, _) in enumerate(t.parallel)}
    k.update({n: a_idx[i].reshape(1, -1) for i, (n, _) in enumerate(t.accumulate)})
    xs = t.coords(op, {n: v for n, v in k.items() if n in op.maps})
    coords = [np.broadcast_to(x, (R, C)).tolist() for x in xs] if xs else []
    return MGrid(operand=op.name, shape=[int(s) for s in op.shape], rows=R, cols=C,
                 p_labels=[list(map(int, c)) for c in zip(*p_idx)] if t.parallel else [[] for _ in range(R)],
                 a_labels=[list(map(int, c)) for c in zip(*a_idx)] if t.accumulate else [[] for _ in range(C)],
                 coords=coords)     # coords[axis][row][col]
