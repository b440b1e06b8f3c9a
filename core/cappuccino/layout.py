"""Map-major data layout and the OLP thread-id maps (the paper's equations 1-5, reconstructed).

The paper's equations were lost in extraction; from its text and figures 4, 5 and 7 they are:

(1) row-major order of a 3-D tensor of M maps, H rows, W columns, addresses (map, row, col):
        addr_rm(m, r, c) = (m*H + r)*W + c
(2) map-major order for vector width V: maps are grouped into S = ceil(M/V) stacks of V maps;
    inside a stack the V maps of one pixel are adjacent, then the next column, then the next
    row ("we start indexing the second row only after all first rows of all layers are indexed"):
        addr_mm(m, r, c) = ((floor(m/V)*H + r)*W + c)*V + (m mod V)
    e.g. V = 4: (0,0,0) (1,0,0) (2,0,0) (3,0,0) (0,0,1) (1,0,1) ...   (map, row, col)
(3)-(5) the OLP thread t (0 <= t < S*V*H*W) computes the output element stored at address t of
    the map-major output, so that the output needs no reordering pass:
        (3) r = floor(t / (V*W)) mod H
        (4) c = floor(t / V) mod W
        (5) m = floor(t / (V*W*H))*V + (t mod V)        (stack, then map inside the stack)
    The default (row-major) assignment is m = floor(t/(H*W)), r = floor(t/W) mod H, c = t mod W.
When M is not a multiple of V the last stack is padded with all-zero maps (zero weights and bias),
whose threads compute zeros. A layer writes into the frame its consumer reads: a convolution with
padding p reads a frame with a zero halo of p pixels, so the producer stores to
((s*(H+2p) + r+p)*(W+2p) + c+p)*V + lane and the consumer needs no bounds checks.

Weights are reordered once, at synthesis time, to (S_out, S_in, KH, KW, V_out, V_in): the input
maps of a filter bank are map-major (V_in lanes = V consecutive input maps at one kernel tap), and
the V filter banks of one output stack are interleaved so that the V consecutive OLP threads
t..t+V-1 (same pixel, V consecutive output maps) read adjacent weight vectors.
"""

from __future__ import annotations

import numpy as np

from core.cappuccino.model import INPUT, ConvOp, Op


def stacks(maps: int, V: int) -> int:
    return -(-maps // V)


def pad_maps(a: np.ndarray, V: int, axis: int = 0) -> np.ndarray:
    """Zero-pad axis `axis` up to a multiple of V."""
    n = a.shape[axis]
    extra = stacks(n, V) * V - n
    if not extra:
        return a
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, extra)
    return np.pad(a, widths)


def frame_halo(ops: list[Op], producer: int) -> int:
    """Zero border of the buffer written by ops[producer] (-1: the input image): the largest pad of
    the convolutions that read it. A consumer with a smaller pad reads at offset (halo - its pad);
    pooling and the other kinds read the interior only (max pooling must not see zeros)."""
    tensor = INPUT if producer < 0 else ops[producer].name
    readers = [op for op in ops if tensor in op.inputs]
    if not readers and not any(op.inputs for op in ops):       # ops not linked yet: a chain
        readers = ops[producer + 1:producer + 2]
    return max([max(op.pads4) for op in readers if isinstance(op, ConvOp)], default=0)


def group_aligned(op: ConvOp, V: int) -> bool:
    """Each group's input and output maps start at a stack boundary, so a group is a dense
    convolution over whole stacks (AlexNet's two groups for V <= 16)."""
    n, m = op.in_shape[0], op.weight.shape[0]
    return (n // op.groups) % V == 0 and (m // op.groups) % V == 0


def expand_groups(w: np.ndarray, groups: int) -> np.ndarray:
    """(M, N/g, KH, KW) grouped weights -> the (M, N, KH, KW) block-diagonal dense equivalent."""
    m, ng, kh, kw = w.shape
    mg = m // groups
    dense = np.zeros((m, ng * groups, kh, kw), np.float32)
    for g in range(groups):
        dense[g * mg:(g + 1) * mg, g * ng:(g + 1) * ng] = w[g * mg:(g + 1) * mg]
    return dense


def weights_depthwise_map_major(w: np.ndarray, V: int) -> np.ndarray:
    """Depthwise (M, 1, KH, KW) -> (S, KH, KW, V): lane l of stack s is map s*V+l, so one vector
    multiply-add serves V maps at one tap (input and output lanes coincide)."""
    m, _, kh, kw = w.shape
    wp = pad_maps(np.asarray(w, np.float32)[:, 0], V, 0)
    return np.ascontiguousarray(wp.reshape(-1, V, kh, kw).transpose(0, 2, 3, 1))


def weights_grouped_map_major(w: np.ndarray, groups: int, V: int) -> np.ndarray:
    """Grouped (M, N/g, KH, KW) with stack-aligned groups -> (G, S_out/G, S_in/G, KH, KW, V_out, V_in):
    group g's filter banks in the dense map-major order of its own stacks."""
    m = w.shape[0]
    mg = m // groups
    return np.stack([weights_map_major(w[g * mg:(g + 1) * mg], V) for g in range(groups)])


def channel_lanes(c: int, V: int) -> tuple[np.ndarray, np.ndarray]:
    """(stack, lane) of each of c maps: map m sits in stack m // V, lane m % V (equation 2)."""
    m = np.arange(c)
    return m // V, m % V


def pack_feature_maps(x: np.ndarray, V: int, halo: int = 0) -> np.ndarray:
    """(B, C, H, W) row-major -> (B, S, H+2h, W+2h, V) map-major frame with a zero halo."""
    b, c, h, w = x.shape
    xs = pad_maps(np.asarray(x, np.float32), V, axis=1).reshape(b, stacks(c, V), V, h, w)
    return frame(xs.transpose(0, 1, 3, 4, 2), halo)


def frame(inner: np.ndarray, halo: int) -> np.ndarray:
    """(B, S, H, W, V) -> the same with a zero border of `halo` pixels."""
    if not halo:
        return np.ascontiguousarray(inner)
    return np.pad(inner, ((0, 0), (0, 0), (halo, halo), (halo, halo), (0, 0)))


def unpack_feature_maps(buf: np.ndarray, c: int, halo: int = 0) -> np.ndarray:
    """(B, S, Hp, Wp, V) map-major frame -> (B, C, H, W) row-major."""
    b, s, hp, wp, v = buf.shape
    inner = buf[:, :, halo:hp - halo, halo:wp - halo, :] if halo else buf
    return inner.transpose(0, 1, 4, 2, 3).reshape(b, s * v, hp - 2 * halo, wp - 2 * halo)[:, :c]


def weights_map_major(w: np.ndarray, V: int) -> np.ndarray:
    """(M, N, KH, KW) -> (S_out, S_in, KH, KW, V_out, V_in), zero-padded maps."""
    m, n, kh, kw = w.shape
    wp = pad_maps(pad_maps(np.asarray(w, np.float32), V, 0), V, 1)
    so, si = wp.shape[0] // V, wp.shape[1] // V
    return np.ascontiguousarray(wp.reshape(so, V, si, V, kh, kw).transpose(0, 2, 4, 5, 1, 3))


def address_row_major(m, r, c, H: int, W: int):
    """Equation (1)."""
    return (np.asarray(m) * H + r) * W + c


def address_map_major(m, r, c, H: int, W: int, V: int):
    """Equation (2)."""
    m = np.asarray(m)
    return ((m // V * H + r) * W + c) * V + m % V


def olp_thread_to_output(t, M: int, H: int, W: int, V: int, map_major: bool = True):
    """Equations (3)-(5): the (map, row, col) that OLP thread t computes (arrays allowed)."""
    t = np.asarray(t)
    if not map_major:
        return t // (H * W), (t // W) % H, t % W
    r = (t // (V * W)) % H                   # (3)
    c = (t // V) % W                         # (4)
    m = (t // (V * W * H)) * V + t % V       # (5)
    return m, r, c


def olp_threads(M: int, H: int, W: int, V: int) -> int:
    """Number of OLP threads of a layer with M output maps padded to whole stacks."""
    return stacks(M, V) * V * H * W


def worker_ranges(groups: int, workers: int) -> list[tuple[int, int]]:
    """Static split of the V-thread groups (one pixel of one output stack) over the workers."""
    return [(w * groups // workers, (w + 1) * groups // workers) for w in range(workers)]


def worker_of_outputs(M: int, H: int, W: int, V: int, workers: int) -> np.ndarray:
    """(M, H, W) array: which worker (hardware thread) computes each output pixel."""
    t = np.arange(olp_threads(M, H, W, V))
    m, r, c = olp_thread_to_output(t, M, H, W, V)
    owner = np.empty(len(t), np.int64)
    for w, (g0, g1) in enumerate(worker_ranges(len(t) // V, workers)):
        owner[g0 * V:g1 * V] = w
    out = np.full((stacks(M, V) * V, H, W), -1, np.int64)
    out[m, r, c] = owner
    return out[:M]


def layout_example(M: int, H: int, W: int, V: int) -> dict[str, list]:
    """Addresses of every element in row-major and map-major order (for the before/after picture)."""
    m, r, c = np.meshgrid(np.arange(M), np.arange(H), np.arange(W), indexing="ij")
    return {"row_major": address_row_major(m, r, c, H, W).tolist(),
            "map_major": address_map_major(m, r, c, H, W, V).tolist()}
