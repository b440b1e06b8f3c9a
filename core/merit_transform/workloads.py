"""Ready-made MERIT transforms (paper, sections III and VI) with direct numpy references.

Each builder returns a `MeritTransform` for given sizes; `WORKLOADS` instantiates them at a size
small enough to verify quickly (evaluate R(M(A), M(B), op) and compare with the reference) plus
the default tile used for footprints and bank analysis. The MERIT-z model builds the same
transforms at the paper's full sizes (Tables VIII and IX) without data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from core.merit_transform.transform import AxisMap, MeritTransform, Operand
from core.nets.layers import conv_out


# ---------------------------------------------------------------- builders
def gemm(m: int, n: int, k: int, name: str = "gemm") -> MeritTransform:
    """C = A B with p = (m, n), a = (k) (Fig. 2)."""
    return MeritTransform(
        name, [("m", m), ("n", n)], [("k", k)],
        [Operand("A", (m, k), {"m": AxisMap(0), "k": AxisMap(1)}),
         Operand("B", (k, n), {"k": AxisMap(0), "n": AxisMap(1)})],
        "dot", description=f"GEMM ({m}x{k}) by ({k}x{n})")


def conv(cin: int, h: int, w: int, cout: int, k: int, stride: int = 1, dilation: int = 1, pad: int = 0,
         groups: int = 1, strategy: str = "dot", name: str = "conv", kw: int | None = None) -> MeritTransform:
    """Convolution: M(I)[p, a] = I[g*cig + ic, y*s + ky*dil - pad, x*s + kx*dil - pad] (eqs. 6, 7)."""
    kw = kw or k
    oh, ow = conv_out(h, k, stride, pad, dilation), conv_out(w, kw, stride, pad, dilation)
    cig, cog = cin // groups, cout // groups
    par = ([("g", groups)] if groups > 1 else []) + [("oc", cog), ("y", oh), ("x", ow)]
    acc = [("ic", cig), ("ky", k), ("kx", kw)]
    imap = {"ic": AxisMap(0, 1, 0), "y": AxisMap(1, stride, -pad), "ky": AxisMap(1, dilation, 0),
            "x": AxisMap(2, stride, -pad), "kx": AxisMap(2, dilation, 0)}
    wmap = {"oc": AxisMap(0), "ic": AxisMap(1), "ky": AxisMap(2), "kx": AxisMap(3)}
    if groups > 1:
        imap["g"] = AxisMap(0, cig, 0)
        wmap["g"] = AxisMap(0, cog, 0)
    ops = [Operand("I", (cin, h, w), imap, (0, pad, pad) if pad else ()),
           Operand("W", (cout, cig, k, kw), wmap)]
    if strategy == "residual":
        ops.append(Operand("R", (cout, oh, ow), {"oc": AxisMap(0), "y": AxisMap(1), "x": AxisMap(2)}
                           | ({"g": AxisMap(0, cog, 0)} if groups > 1 else {})))
    extra = []
    if stride > 1:
        extra.append(f"stride {stride}")
    if dilation > 1:
        extra.append(f"dilation {dilation}")
    if groups > 1:
        extra.append(f"{groups} groups")
    return MeritTransform(name, par, acc, ops, strategy, output_shape=(cout, oh, ow),
                          description=f"{k}x{kw} convolution {cin}->{cout} on {h}x{w}"
                          + (f" ({', '.join(extra)})" if extra else ""))


def alexnet_conv1(half_channels: int = 48, size: int = 55) -> MeritTransform:
    """Equation 6 literally: (p1,p2,p3,a1,a2,a3) in NDRange(48,55,55,3,11,11),
    M(I) = I[a1, 4 p2 + a2 - 5, 4 p3 + a3 - 5], M(k) = k[p1, a1, a2, a3] (with ReLU, Listing 1)."""
    n_in = 224 if size == 55 else 4 * (size - 1) + 6
    return MeritTransform(
        "alexnet-conv1", [("p1", half_channels), ("p2", size), ("p3", size)], [("a1", 3), ("a2", 11), ("a3", 11)],
        [Operand("I", (3, n_in, n_in), {"a1": AxisMap(0), "p2": AxisMap(1, 4, 0), "a2": AxisMap(1, 1, -5),
                                        "p3": AxisMap(2, 4, 0), "a3": AxisMap(2, 1, -5)}, (0, 5, 5)),
         Operand("k", (half_channels, 3, 11, 11), {"p1": AxisMap(0), "a1": AxisMap(1), "a2": AxisMap(2),
                                                   "a3": AxisMap(3)})],
        "relu", description="AlexNet CONV1, eq. 6: 11x11 kernel, stride 4, one GPU half (48 maps), fused ReLU")


def correlation(c: int, h: int, w: int, disp: int, name: str = "correlation") -> MeritTransform:
    """FlowNet correlation (eq. 8): M(I1) = I1[a1, p1, p2], M(I2) = I2[a1, p1 + p3 - D, p2 + p4 - D]."""
    d = 2 * disp + 1
    return MeritTransform(
        name, [("p1", h), ("p2", w), ("p3", d), ("p4", d)], [("a1", c)],
        [Operand("I1", (c, h, w), {"a1": AxisMap(0), "p1": AxisMap(1), "p2": AxisMap(2)}),
         Operand("I2", (c, h, w), {"a1": AxisMap(0), "p1": AxisMap(1), "p3": AxisMap(1, 1, -disp),
                                   "p2": AxisMap(2), "p4": AxisMap(2, 1, -disp)}, (0, disp, disp))],
        "dot", description=f"correlation layer, {c} channels, {h}x{w}, displacement +-{disp}")


def motion_estimation(h: int, w: int, block: int, search: int, name: str = "motion") -> MeritTransform:
    """Block matching: SAD between an 8x8 block of the current frame and shifted reference blocks."""
    d = 2 * search + 1
    bh, bw = h // block, w // block
    return MeritTransform(
        name, [("by", bh), ("bx", bw), ("dy", d), ("dx", d)], [("i", block), ("j", block)],
        [Operand("cur", (h, w), {"by": AxisMap(0, block, 0), "i": AxisMap(0), "bx": AxisMap(1, block, 0),
                                 "j": AxisMap(1)}),
         Operand("ref", (h, w), {"by": AxisMap(0, block, 0), "dy": AxisMap(0, 1, -search), "i": AxisMap(0),
                                 "bx": AxisMap(1, block, 0), "dx": AxisMap(1, 1, -search), "j": AxisMap(1)},
                 (search, search))],
        "l1", description=f"block motion estimation, {block}x{block} blocks, search +-{search}, {h}x{w} frames")


def bilateral(h: int, w: int, k: int, sigma_s: float = 2.0, sigma_r: float = 0.1) -> MeritTransform:
    """Listings 2 and 3: centre pixel in PreLoop, neighbour and two spatial look-up tables in Loop."""
    r = k // 2
    oh, ow = h - 2 * r, w - 2 * r
    return MeritTransform(
        "bilateral", [("y", oh), ("x", ow)], [("ky", k), ("kx", k)],
        [Operand("img", (h, w), {"y": AxisMap(0, 1, r), "x": AxisMap(1, 1, r)}),
         Operand("img", (h, w), {"y": AxisMap(0), "ky": AxisMap(0), "x": AxisMap(1), "kx": AxisMap(1)}),
         Operand("gs", (k,), {"ky": AxisMap(0)}),
         Operand("gs", (k,), {"kx": AxisMap(0)})],
        "bilateral", params={"norm": -1.0 / (2 * sigma_r ** 2), "sigma_s": sigma_s, "sigma_r": sigma_r},
        description=f"bilateral filter, {k}x{k} window, sigma_s {sigma_s}, sigma_r {sigma_r}")


def depthwise(c: int, h: int, w: int, k: int = 3, stride: int = 1, pad: int = 1) -> MeritTransform:
    oh, ow = conv_out(h, k, stride, pad), conv_out(w, k, stride, pad)
    return MeritTransform(
        "depthwise", [("c", c), ("y", oh), ("x", ow)], [("ky", k), ("kx", k)],
        [Operand("I", (c, h, w), {"c": AxisMap(0), "y": AxisMap(1, stride, -pad), "ky": AxisMap(1),
                                  "x": AxisMap(2, stride, -pad), "kx": AxisMap(2)}, (0, pad, pad)),
         Operand("W", (c, k, k), {"c": AxisMap(0), "ky": AxisMap(1), "kx": AxisMap(2)})],
        "dot", description=f"depthwise {k}x{k} convolution, {c} channels, {h}x{w}")


def pixel_shuffle(c: int, h: int, w: int, r: int) -> MeritTransform:
    """ESPCN sub-pixel shuffle: out[c, y r + i, x r + j] = in[c r^2 + i r + j, y, x]; nothing accumulates."""
    return MeritTransform(
        "pixel-shuffle", [("c", c), ("y", h), ("i", r), ("x", w), ("j", r)], [],
        [Operand("I", (c * r * r, h, w), {"c": AxisMap(0, r * r, 0), "i": AxisMap(0, r, 0), "j": AxisMap(0),
                                          "y": AxisMap(1), "x": AxisMap(2)})],
        "copy", output_shape=(c, h * r, w * r), description=f"pixel shuffle x{r}, {c} output channels")


def separable_stages(h: int, w: int, k: int) -> list[MeritTransform]:
    """Separable filter as two chained transforms: a row pass into `rows`, then a column pass."""
    rows = MeritTransform(
        "rows", [("y", h), ("x", w - k + 1)], [("j", k)],
        [Operand("img", (h, w), {"y": AxisMap(0), "x": AxisMap(1), "j": AxisMap(1)}),
         Operand("kh", (k,), {"j": AxisMap(0)})], "dot", description=f"separable filter row pass ({k} taps)")
    cols = MeritTransform(
        "cols", [("y", h - k + 1), ("x", w - k + 1)], [("i", k)],
        [Operand("rows", (h, w - k + 1), {"y": AxisMap(0), "i": AxisMap(0), "x": AxisMap(1)}),
         Operand("kv", (k,), {"i": AxisMap(0)})], "dot", description=f"separable filter column pass ({k} taps)")
    return [rows, cols]


# ---------------------------------------------------------------- direct references
def conv_ref(I: np.ndarray, W: np.ndarray, stride: int = 1, dilation: int = 1, pad: int = 0,
             groups: int = 1) -> np.ndarray:
    """Direct convolution by shifted slices (cross-correlation, as in CNNs)."""
    cin, h, w = I.shape
    cout, cig, k, kw = W.shape
    Ip = np.pad(I, [(0, 0), (pad, pad), (pad, pad)])
    oh, ow = conv_out(h, k, stride, pad, dilation), conv_out(w, kw, stride, pad, dilation)
    out = np.zeros((cout, oh, ow))
    cog = cout // groups
    for ky in range(k):
        for kx in range(kw):
            y0, x0 = ky * dilation, kx * dilation
            sl = Ip[:, y0:y0 + (oh - 1) * stride + 1:stride, x0:x0 + (ow - 1) * stride + 1:stride]
            for g in range(groups):
                out[g * cog:(g + 1) * cog] += np.einsum(
                    "oc,cyx->oyx", W[g * cog:(g + 1) * cog, :, ky, kx], sl[g * cig:(g + 1) * cig])
    return out


def correlation_ref(I1: np.ndarray, I2: np.ndarray, disp: int) -> np.ndarray:
    c, h, w = I1.shape
    d = 2 * disp + 1
    P = np.pad(I2, [(0, 0), (disp, disp), (disp, disp)])
    out = np.zeros((h, w, d, d))
    for dy in range(d):
        for dx in range(d):
            out[:, :, dy, dx] = (I1 * P[:, dy:dy + h, dx:dx + w]).sum(axis=0)
    return out


def motion_ref(cur: np.ndarray, ref: np.ndarray, block: int, search: int) -> np.ndarray:
    h, w = cur.shape
    d = 2 * search + 1
    P = np.pad(ref, search)
    bh, bw = h // block, w // block
    out = np.zeros((bh, bw, d, d))
    for by in range(bh):
        for bx in range(bw):
            c = cur[by * block:(by + 1) * block, bx * block:(bx + 1) * block]
            for dy in range(d):
                for dx in range(d):
                    y, x = by * block + dy, bx * block + dx
                    out[by, bx, dy, dx] = np.abs(c - P[y:y + block, x:x + block]).sum()
    return out


def bilateral_ref(img: np.ndarray, gs: np.ndarray, sigma_r: float) -> np.ndarray:
    k = gs.size
    r = k // 2
    h, w = img.shape
    center = img[r:h - r, r:w - r]
    num = np.zeros_like(center)
    den = np.zeros_like(center)
    for i in range(k):
        for j in range(k):
            nb = img[i:i + h - 2 * r, j:j + w - 2 * r]
            wgt = gs[i] * gs[j] * np.exp(-((center - nb) ** 2) / (2 * sigma_r ** 2))
            num += wgt * nb
            den += wgt
    return num / den


def depthwise_ref(I: np.ndarray, W: np.ndarray, stride: int, pad: int) -> np.ndarray:
    c = I.shape[0]
    return conv_ref(I, W.reshape(c, 1, *W.shape[1:]), stride=stride, pad=pad, groups=c)


def pixel_shuffle_ref(I: np.ndarray, r: int) -> np.ndarray:
    cr2, h, w = I.shape
    c = cr2 // (r * r)
    return I.reshape(c, r, r, h, w).transpose(0, 3, 1, 4, 2).reshape(c, h * r, w * r)


def separable_ref(img: np.ndarray, kh: np.ndarray, kv: np.ndarray) -> np.ndarray:
    """2-D valid cross-correlation with the outer-product kernel, over numpy's sliding windows."""
    k2 = np.outer(kv, kh)
    win = np.lib.stride_tricks.sliding_window_view(img, k2.shape)
    return np.einsum("yxij,ij->yx", win, k2)


# ---------------------------------------------------------------- the catalogue
@dataclass
class Workload:
    """Transforms (chained when more than one), data, direct reference and the default tile."""

    name: str
    title: str
    stages: list[MeritTransform]
    make_data: Callable[[np.random.Generator], dict[str, np.ndarray]]
    reference: Callable[[dict[str, np.ndarray]], np.ndarray] | None    # None: a transform file gave none
    tile: dict[str, int] = field(default_factory=dict)     # index -> tile size (missing: full)
    bank_operand: str = ""                                  # operand whose footprint goes to the banks
    paper: str = ""

    @property
    def transform(self) -> MeritTransform:
        return self.stages[-1]


def _gauss(k: int, sigma: float) -> np.ndarray:
    x = np.arange(k) - k // 2
    g = np.exp(-x * x / (2 * sigma * sigma))
    return g / g.sum()


def _conv_workload(name: str, title: str, t: MeritTransform, stride: int, dilation: int, pad: int,
                   groups: int, tile: dict[str, int], paper: str, residual: bool = False) -> Workload:
    I_shape = t.operand("I").shape
    W_shape = t.operand("W").shape

    def make(rng: np.random.Generator) -> dict[str, np.ndarray]:
        d = {"I": rng.standard_normal(I_shape), "W": rng.standard_normal(W_shape)}
        if residual:
            d["R"] = rng.standard_normal(t.operand("R").shape)
        return d

    def ref(d: dict[str, np.ndarray]) -> np.ndarray:
        out = conv_ref(d["I"], d["W"], stride, dilation, pad, groups)
        if residual:
            out = out + d["R"]
        if t.strategy == "relu":
            out = np.maximum(out, 0)
        return out

    return Workload(name, title, [t], make, ref, tile, "I", paper)


def _build_catalogue() -> dict[str, Workload]:
    w: dict[str, Workload] = {}
    g = gemm(48, 40, 64)
    w["gemm"] = Workload("gemm", "GEMM (Fig. 2)", [g],
                         lambda r: {"A": r.standard_normal((48, 64)), "B": r.standard_normal((64, 40))},
                         lambda d: d["A"] @ d["B"], {"m": 16, "n": 8, "k": 16}, "A", "Fig. 2, eq. 1")
    c3 = conv(1, 18, 18, 1, 3, name="conv3x3")
    w["conv3x3"] = _conv_workload("conv3x3", "3x3 convolution (Fig. 6 example)", c3, 1, 1, 0, 1,
                                  {"y": 4, "x": 4}, "Fig. 3b, Fig. 6 (4x4 output block, 6x6 patch)")
    c5 = conv(1, 36, 28, 1, 5, name="conv5x5")
    w["conv5x5"] = _conv_workload("conv5x5", "5x5 convolution (eq. 9 example)", c5, 1, 1, 0, 1,
                                  {"y": 16, "x": 8}, "Section IV-A: (16,8) output tile -> (20,12) footprint")
    a1 = alexnet_conv1()
    w["alexnet-conv1"] = Workload(
        "alexnet-conv1", "AlexNet CONV1 (eq. 6)", [a1],
        lambda r: {"I": r.standard_normal((3, 224, 224)), "k": r.standard_normal((48, 3, 11, 11))},
        lambda d: np.maximum(conv_ref(d["I"], d["k"], stride=4, pad=5)[:, :55, :55], 0),
        {"p1": 4, "p2": 8, "p3": 8}, "I", "eq. 6")
    dil = conv(8, 20, 20, 8, 3, dilation=2, pad=2, name="dilated")
    w["dilated"] = _conv_workload("dilated", "Dilated convolution (eq. 7)", dil, 1, 2, 2, 1,
                                  {"oc": 8, "y": 4, "x": 8}, "eq. 7, Table IX")
    st = conv(4, 23, 23, 8, 3, stride=2, pad=1, name="strided")
    w["strided"] = _conv_workload("strided", "Strided 3x3 convolution", st, 2, 1, 1, 1,
                                  {"oc": 8, "y": 4, "x": 4}, "Fig. 6 (ii-c) stride case")
    res = conv(8, 12, 12, 8, 3, pad=1, strategy="residual", name="residual")
    w["residual"] = _conv_workload("residual", "Convolution + residual add", res, 1, 1, 1, 1,
                                   {"oc": 8, "y": 4, "x": 8}, "Section III-B (PostLoop adds a tensor)", True)
    cr = correlation(16, 12, 12, 3)
    w["correlation"] = Workload(
        "correlation", "Correlation layer (FlowNet, eq. 8)", [cr],
        lambda r: {"I1": r.standard_normal((16, 12, 12)), "I2": r.standard_normal((16, 12, 12))},
        lambda d: correlation_ref(d["I1"], d["I2"], 3), {"p1": 2, "p2": 4, "p3": 4, "p4": 4}, "I2", "eq. 8")
    me = motion_estimation(32, 48, 8, 4)

    def me_data(r: np.random.Generator) -> dict[str, np.ndarray]:
        ref = r.integers(0, 256, (32, 48)).astype(float)
        return {"cur": np.roll(ref, (2, -3), axis=(0, 1)), "ref": ref}

    w["motion"] = Workload("motion", "Block motion estimation (L1)", [me], me_data,
                           lambda d: motion_ref(d["cur"], d["ref"], 8, 4), {"by": 1, "bx": 1, "dy": 8, "dx": 8}, "ref",
                           "eq. 4 (L1 distance), Table IX")
    bl = bilateral(24, 28, 5)
    w["bilateral"] = Workload(
        "bilateral", "Bilateral filter (Listings 2, 3)", [bl],
        lambda r: {"img": r.random((24, 28)), "gs": _gauss(5, 2.0)},
        lambda d: bilateral_ref(d["img"], d["gs"], 0.1), {"y": 16, "x": 16}, "img", "Listings 2 and 3")
    sep = separable_stages(24, 32, 5)
    w["separable"] = Workload(
        "separable", "Separable filter (two passes)", sep,
        lambda r: {"img": r.standard_normal((24, 32)), "kh": _gauss(5, 1.0), "kv": np.array([1., 4, 6, 4, 1]) / 16},
        lambda d: separable_ref(d["img"], d["kh"], d["kv"]), {"y": 8, "x": 16}, "img", "Tables IV, V")
    dw = depthwise(8, 16, 16)
    w["depthwise"] = Workload(
        "depthwise", "Depthwise convolution (MobileNet)", [dw],
        lambda r: {"I": r.standard_normal((8, 16, 16)), "W": r.standard_normal((8, 3, 3))},
        lambda d: depthwise_ref(d["I"], d["W"], 1, 1), {"c": 1, "y": 4, "x": 8}, "I", "Table IX")
    ps = pixel_shuffle(4, 6, 8, 2)
    w["pixel-shuffle"] = Workload(
        "pixel-shuffle", "Pixel shuffle (ESPCN)", [ps],
        lambda r: {"I": r.standard_normal((16, 6, 8))},
        lambda d: pixel_shuffle_ref(d["I"], 2), {"c": 1, "y": 2, "i": 2, "x": 4, "j": 2}, "I", "Table IX")
    return w


WORKLOADS: dict[str, Workload] = _build_catalogue()


def names() -> list[str]:
    return list(WORKLOADS)
