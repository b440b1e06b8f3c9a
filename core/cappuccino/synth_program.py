"""The synthesised program for a DAG network: its plan (frames, tensors, ops, weight sections), its
C source (the fixed kernel library synth_kernels.c plus the model's tables and convolution
micro-kernels) and its weight file.

Plan decisions (the why):
* every tensor is a map-major frame (layout.py); its halo is the largest pad of the convolutions
  reading it, so convolutions never test bounds; frames are zeroed once, interiors overwritten;
* a concatenation costs nothing: each input that only the concatenation reads and that starts on a
  stack boundary is written by its producer straight into its channel slice of the concatenation's
  frame (nested concatenations too); other inputs get a copy op;
* a residual Add whose first summand is a convolution read by nothing else is fused into that
  convolution's epilogue (bias, + residual, ReLU), which then runs at the Add's place in the order;
* binary16 results follow forward.py's rule: an imprecise convolution's; any other op's iff all its
  inputs are binary16. Frames are float32 holding those values (half_frames: binary16 frames, a
  concatenation's frame binary16 iff every tensor in it is);
* a network input with fewer maps than V gets a narrow frame (3 lanes for colour images, not V);
* each op is shared out in chunks of at least CHUNK_WORK multiply-adds (see run_phase in the C);
* weights are reordered at synthesis time: dense/grouped convolutions and fully connected layers to
  (S_out, S_in of the group, KH, KW, V_in, V_out) -- the V lanes are V output maps (OLP threads
  t..t+V-1 of eqs. 3-5 are the lanes of one vector) -- depthwise to (S, KH, KW, V); binary16 for
  imprecise ops; the bias (float32, binary16-rounded when imprecise) follows at a 64-byte boundary.
* every convolution gets a register block (conv_blocking: rq output stacks x rp output pixels, the
  fewest estimated cycles for its shape among the blocks that fit the vector registers) and the C
  of a micro-kernel for its mode, input storage, block and pixel stride (conv_kernel_source; one
  per combination the model uses): the accumulators are named variables, so they stay in registers.
"""

from __future__ import annotations

import functools
import platform
from dataclasses import dataclass, field
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from core.cappuccino import layout, weights_file
from core.cappuccino.model import (INPUT, AddOp, CnnModel, ConcatOp, ConvOp, GlobalAvgPoolOp, LrnOp, Op, PoolOp,
                                   SoftmaxOp)
from core.cappuccino.numerics import (ALL_MODES, IMPRECISE, INT8, PRECISE, RELAXED, int8_inverse, int8_multipliers,
                                      int8_weights, mode_weights)
from core.cappuccino.forward import int8_problem
from core.errors import InputError

KERNELS = Path(__file__).with_name("synth_kernels.c")
KINDS = ("none", "conv", "dw", "maxpool", "avgpool", "gap", "add", "lrn", "softmax", "copy")
VECTOR_WIDTHS = (1, 2, 4, 8, 16)
ALIGN = 64
# Work sharing: an op is cut into at most 8 chunks per worker, each of at least CHUNK_WORK
# multiply-adds (or elements read, for the other kinds; a few microseconds on one core), so that a
# small op is one chunk, run by worker 0: sharing it costs more in claims, waiting and cache traffic
# than it saves. A network without any op worth sharing (the digits CNN) runs on one worker.
CHUNK_WORK = 100_000
CHUNKS_PER_WORKER = 8


@dataclass
class Frame:
    """A buffer in the arena: S stacks of (H + 2 halo) x (W + 2 halo) x V elements."""

    S: int
    H: int
    W: int
    halo: int
    half: bool
    V: int
    offset: int = 0
    lanes: int = 0              # elements per pixel and stack: V, or fewer for a narrow network input

    def __post_init__(self) -> None:
        self.lanes = self.lanes or self.V

    @property
    def nbytes(self) -> int:
        return self.S * (self.H + 2 * self.halo) * (self.W + 2 * self.halo) * self.lanes * (2 if self.half else 4)


@dataclass
class Tensor:
    """Channels c0 .. c0+C of a frame."""

    name: str
    buf: int
    c0: int
    C: int
    H: int
    W: int


@dataclass
class ProgOp:
    name: str
    kind: str
    mode: str = PRECISE
    relu: bool = False
    ins: list[int] = field(default_factory=list)
    out: int = -1
    res: int = -1
    kh: int = 0
    kw: int = 0
    stride: int = 1
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)
    gin: int = 0
    gout: int = 0
    klast: int = 0
    count_pad: bool = False
    lrn: tuple[int, float, float, float] = (0, 0.0, 0.0, 0.0)
    weights: bytes = b""            # the op's section of the weight file
    bias_offset: int = 0
    rnd: bool = False               # the result is binary16 (forward.py's storage rule)
    work: int = 0                   # multiply-adds (or elements touched): decides `chunks`
    chunks: int = 1                 # pieces the workers claim (see CHUNK_WORK)
    rq: int = 0                     # conv: the register block, rq output stacks x rp output pixels
    rp: int = 0
    flat: bool = False              # conv: 1x1 stride 1 over a frame without halo: blocks run across rows
    ps: int = 0                     # conv: elements between the inputs of neighbouring pixels of a block
    xh: bool = False                # conv: its input frame is binary16
    narrow: bool = False            # conv: its input frame has fewer lanes than V (a narrow network input)
    pool: int = -1                  # conv: the max pooling fused into it (its op index; fuse_pools)
    fused: bool = False             # maxpool: computed by the convolution before it


@dataclass
class Plan:
    model_name: str
    V: int
    threads: int
    frames: list[Frame]
    tensors: list[Tensor]
    ops: list[ProgOp]
    out_tensor: int
    input_shape: tuple[int, int, int]
    notes: list[str]
    half_frames: bool = False

    @property
    def arena_bytes(self) -> int:
        return sum(_align(f.nbytes) for f in self.frames)

    @property
    def weight_bytes(self) -> int:
        return sum(len(op.weights) for op in self.ops)


@dataclass
class Program:
    """What the synthesiser produces: the C source and the weight file's bytes."""

    source: str
    weights: bytes
    plan: Plan

    @property
    def source_lines(self) -> int:
        return self.source.count("\n") + 1


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def unsupported_ops(model: CnnModel) -> list[str]:
    """Ops the synthesiser cannot generate, each with its reason (empty: all fine)."""
    bad = []
    for op in model.ops:
        if not isinstance(op, (ConvOp, PoolOp, GlobalAvgPoolOp, ConcatOp, AddOp, LrnOp, SoftmaxOp)):
            bad.append(f"{op.name}: op kind {getattr(op, 'kind', type(op).__name__)!r}")
        elif isinstance(op, PoolOp) and op.mode not in ("max", "avg"):
            bad.append(f"{op.name}: pooling mode {op.mode!r}")
        elif isinstance(op, ConcatOp) and len({s[1:] for s in op.in_shapes}) != 1:
            bad.append(f"{op.name}: concatenation of maps of different sizes")
    return bad


# ------------------------------------------------------------------ planning
def plan(model: CnnModel, modes: dict[str, str], V: int, threads: int, half_frames: bool = False,
         shared: Sequence[bool] | None = None) -> Plan:
    """Frames, tensors and ops of the program for one mode assignment (conv name -> mode).

    shared: per program op (in plan order), whether the workers share it (in `chunks(work)` pieces)
    or worker 0 runs it alone; None: the CHUNK_WORK rule decides (core.cappuccino.sharing measures).

    half_frames: store binary16 tensors in binary16 frames (half the memory). By default every frame
    is float32 and an imprecise op stores its binary16-rounded values there: the same numbers, and a
    convolution's broadcast input needs no conversion (faster on x86, where F16C converts vectors)."""
    if V not in VECTOR_WIDTHS:
        raise InputError(f"vector width {V} not in {VECTOR_WIDTHS}", "vector_width")
    bad = unsupported_ops(model)
    if bad:
        raise InputError("cannot synthesise: " + "; ".join(bad), model.name)
    for name, mode in modes.items():
        if mode not in ALL_MODES:
            raise InputError(f"unknown mode {mode!r} for {name}", "modes")
    ops = model.ops
    for cop in model.conv_ops:
        if modes.get(cop.name) == INT8:
            problem = (f"{cop.name}: int8 mode reads the network input, which may be negative (it stays float)"
                       if INPUT in cop.inputs else int8_problem(cop))
            if problem:
                raise InputError(problem, "modes")
    shape = {INPUT: model.input_shape, **{op.name: op.out_shape for op in ops}}
    readers: dict[str, list[Op]] = {t: [] for t in shape}
    for op in ops:
        for t in op.inputs:
            readers[t].append(op)
    producer = {op.name: op for op in ops}
    notes: list[str] = []

    # binary16 storage (forward.py's rule)
    half: dict[str, bool] = {INPUT: False}
    for op in ops:
        half[op.name] = (modes.get(op.name, PRECISE) == IMPRECISE if isinstance(op, ConvOp)
                         else all(half[t] for t in op.inputs))

    # residual fusion: add(conv_out, other) with conv_out read only by the add
    fused: dict[str, AddOp] = {}            # conv name -> the add it runs as
    for op in ops:
        if isinstance(op, AddOp) and len(op.inputs) == 2:
            a, b = op.inputs
            conv = producer.get(a)
            if (isinstance(conv, ConvOp) and not conv.relu and not conv.fc and len(readers[a]) == 1
                    and a != b and shape[a] == shape[b] and conv.name not in fused):
                fused[conv.name] = op

    # zero-copy concatenation: alias[t] = (concat tensor, channel offset)
    alias: dict[str, tuple[str, int]] = {}
    for op in ops:
        if not isinstance(op, ConcatOp):
            continue
        c0 = 0
        for k, (t, s) in enumerate(zip(op.inputs, op.in_shapes)):
            p = producer.get(t)
            whole = s[0] % V == 0 or k == len(op.inputs) - 1      # its last stack's padding lanes hit no neighbour
            if (p is not None and c0 % V == 0 and whole and len(readers[t]) == 1 and t not in alias
                    and (not isinstance(p, ConvOp) or p.name not in fused) and op.inputs.count(t) == 1):
                alias[t] = (op.name, c0)
            c0 += s[0]

    def root(t: str) -> tuple[str, int]:
        off = 0
        while t in alias:
            t, o = alias[t]
            off += o
        return t, off

    # frames: one per root tensor; halo = largest pad of the convolutions reading it or its slices
    halo: dict[str, int] = {}
    for t in shape:
        r, _ = root(t)
        pads = [max(c.pads4) for c in readers[t] if isinstance(c, ConvOp)]
        halo[r] = max([halo.get(r, 0), *pads])
    frames: list[Frame] = []
    frame_of: dict[str, int] = {}
    tensors: list[Tensor] = []
    tensor_of: dict[str, int] = {}

    def tensor(t: str) -> int:
        if t in tensor_of:
            return tensor_of[t]
        r, off = root(t)
        if r not in frame_of:
            c, h, w = shape[r]
            frame_of[r] = len(frames)
            frames.append(Frame(layout.stacks(c, V), h, w, halo.get(r, 0), half[r] and half_frames, V))
        c, h, w = shape[t]
        tensor_of[t] = len(tensors)
        tensors.append(Tensor(t, frame_of[r], off, c, h, w))
        return tensor_of[t]

    tensor(INPUT)
    c_in = model.input_shape[0]
    if c_in < V and readers[INPUT] and all(isinstance(r, ConvOp) and not r.depthwise and r.groups == 1
                                           for r in readers[INPUT]):
        # a narrow input frame (e.g. 3 colour maps, not V lanes of mostly zeros): the first convolution
        # broadcasts its input values anyway, and reads 5x less memory at V=16
        frames[frame_of[INPUT]].lanes = c_in
    prog: list[ProgOp] = []
    deferred: dict[str, ProgOp] = {}          # fused convolutions, emitted at their add
    for op in ops:
        mode = modes.get(op.name, PRECISE) if isinstance(op, ConvOp) else PRECISE
        if isinstance(op, ConvOp):
            add = fused.get(op.name)
            out_name = add.name if add else op.name
            if add:
                tensor_of[op.name] = tensor(add.name)     # the conv writes the add's tensor
            pop = _conv_op(op, mode, V, tensor(op.inputs[0]), tensor(out_name), tensors, shape[op.inputs[0]], notes)
            if add:
                pop.res, pop.relu = tensor(add.inputs[1]), add.relu
                pop.name = f"{op.name}+{add.name}"
                deferred[add.name] = pop
                prog.append(ProgOp(op.name, "none", out=pop.out))
            else:
                prog.append(pop)
        elif isinstance(op, AddOp) and op.name in deferred:
            prog.append(deferred.pop(op.name))
        elif isinstance(op, PoolOp):
            prog.append(ProgOp(op.name, "maxpool" if op.mode == "max" else "avgpool", ins=[tensor(op.inputs[0])],
                               out=tensor(op.name), kh=op.k, kw=op.k, stride=op.stride, pads=op.pads4,
                               count_pad=op.count_include_pad))
        elif isinstance(op, GlobalAvgPoolOp):
            prog.append(ProgOp(op.name, "gap", ins=[tensor(op.inputs[0])], out=tensor(op.name)))
        elif isinstance(op, AddOp):
            prog.append(ProgOp(op.name, "add", relu=op.relu, ins=[tensor(t) for t in op.inputs], out=tensor(op.name)))
        elif isinstance(op, LrnOp):
            prog.append(ProgOp(op.name, "lrn", ins=[tensor(op.inputs[0])], out=tensor(op.name),
                               lrn=(op.size, op.alpha, op.beta, op.bias)))
        elif isinstance(op, SoftmaxOp):
            src = op.inputs[0]
            if shape[src] != op.out_shape:        # softmax over a flattened tensor: keep the producer's shape
                shape[op.name] = shape[src]
            prog.append(ProgOp(op.name, "softmax", ins=[tensor(src)], out=tensor(op.name)))
        elif isinstance(op, ConcatOp):
            out = tensor(op.name)
            c0 = 0
            copies = 0
            for t, s in zip(op.inputs, op.in_shapes):
                if t not in alias:                # copy into the slice
                    r, off = root(op.name)
                    tensors.append(Tensor(f"{op.name}[{c0}:]", frame_of[r], off + c0, s[0], s[1], s[2]))
                    prog.append(ProgOp(f"{op.name}/copy{copies}", "copy", ins=[tensor(t)], out=len(tensors) - 1))
                    copies += 1
                c0 += s[0]
            if not copies:
                prog.append(ProgOp(op.name, "none", out=out))
    if deferred:                                   # pragma: no cover - every add follows its conv
        raise AssertionError(f"fused convolutions never emitted: {list(deferred)}")
    if shared is not None and len(shared) != len(prog):
        raise ValueError(f"shared: {len(shared)} flags for a program of {len(prog)} ops")
    for i, pop in enumerate(prog):
        if pop.kind not in ("none", "copy"):             # a fused conv+add stores what the add stores
            pop.rnd = half.get(tensors[pop.out].name, False)
        pop.work = _work(pop, tensors, V)
        pop.chunks = chunks(pop.work, threads) if shared is None or shared[i] else 1
    regs = vector_registers()
    for pop in prog:
        if pop.kind == "conv":
            _choose_block(pop, tensors, frames, V, regs)
    fuse_pools(prog, tensors, model.output)
    offset = 0
    for f in frames:
        f.offset = offset
        offset += _align(f.nbytes)
    return Plan(model.name, V, threads, frames, tensors, prog, tensor(model.output), model.input_shape, notes,
                half_frames)


def fuse_pools(prog: list[ProgOp], tensors: list[Tensor], output: str) -> None:
    """Fuse a max pooling into the convolution before it (issue 35) where that costs no convolution
    work: a k x k window at stride k without padding (VGG's 2 x 2 / 2), over a map whose rows and
    columns are whole windows, after a row-blocked convolution whose block width is whole windows,
    and whose output frame nothing else reads. The convolution's unit is then k output rows of one
    block, and it pools that block's windows while they are in L1: no separate pass over the map and
    no wait between the two. The values are the same bits (the max of the same numbers); the
    convolution's output is still written (the --dump check reads it). Overlapping windows (3 x 3 at
    stride 2) are not fused: neighbouring bands share a convolution row, which would be computed
    twice (docs/cappuccino.md)."""
    readers: dict[int, list[int]] = {}
    for i, op in enumerate(prog):
        for ti in op.ins + ([op.res] if op.res >= 0 else []):
            readers.setdefault(tensors[ti].buf, []).append(i)
    out_buf = next((t.buf for t in tensors if t.name == output), -1)
    for i, pool in enumerate(prog):
        if pool.kind != "maxpool" or not pool.ins:
            continue
        src = pool.ins[0]
        conv = next((j for j, op in enumerate(prog) if op.kind == "conv" and op.out == src), None)
        if conv is None:
            continue
        c, t, k = prog[conv], tensors[src], pool.kh
        shared_frame = sum(1 for x in tensors if x.buf == t.buf) > 1
        if (k >= 2 and pool.kw == k and pool.stride == k and not any(pool.pads) and not c.flat
                and c.rp % k == 0 and t.H % k == 0 and t.W % k == 0 and readers.get(t.buf) == [i]
                and t.buf != out_buf and not shared_frame and c.pool < 0):
            c.pool, pool.fused = i, True


def chunks(work: int, threads: int) -> int:
    """How many pieces the workers share an op with `work` multiply-adds in."""
    return 1 if threads <= 1 else max(1, min(CHUNKS_PER_WORKER * threads, work // CHUNK_WORK))


def _work(op: ProgOp, tensors: list[Tensor], V: int) -> int:
    """Multiply-adds of a convolution; elements read for the other kinds (LRN: times its window)."""
    if op.kind == "none":
        return 0
    out = tensors[op.out]
    n_out = out.C * out.H * out.W
    if op.kind == "conv":
        cin = tensors[op.ins[0]].C
        return n_out * op.kh * op.kw * (op.gin * V if op.gin else cin)     # grouped: its group's maps
    if op.kind == "dw":
        return n_out * op.kh * op.kw
    if op.kind in ("maxpool", "avgpool"):
        return n_out * op.kh * op.kw
    if op.kind == "lrn":
        return n_out * max(1, op.lrn[0])
    return sum(tensors[i].C * tensors[i].H * tensors[i].W for i in op.ins)


# ------------------------------------------------------------------ register blocking of convolutions
# The micro-kernel's step (synth_kernels.c, conv_block): rq*rp fused multiply-adds, rq weight loads and
# rp broadcast loads. It runs at the FMA units' rate while the block has at least FMA_CHAINS
# independent accumulators (the FMA latency times the FMAs issued per cycle: 4 x 2 on recent x86)
# and loads stay under LOADS_PER_CYCLE per FMA; the accumulators, the rq weights and a broadcast
# must fit the vector registers or the compiler spills them to memory.
FMA_CHAINS = 8
LOADS_PER_CYCLE = 2
EPILOGUE = 6                # cycles per output vector after the sum: bias, residual, ReLU, address, store
BLOCK_SETUP = 40            # cycles per block: its position, pointers, loop set-up
MAX_RQ, MAX_RP = 8, 28
INT8_QUANT_CYCLES = 6.0     # int8: quantising one pixel's V input maps (multiply, min, convert, max, pack, store)


@functools.lru_cache(maxsize=1)
def vector_registers() -> int:
    """Vector registers the compiler may use here (programs are built with -march=native): 32 with
    AVX-512 or on AArch64, else 16."""
    if platform.machine().lower() in ("aarch64", "arm64"):
        return 32
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return 16
    return 32 if " avx512f" in info else 16


@functools.lru_cache(maxsize=1)
def l2_bytes() -> int | None:
    """The per-core L2 cache (Linux sysfs: the level-2 data or unified cache of cpu0); None unknown."""
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip().upper()
        except OSError:
            continue
        if level == "2" and kind in ("Data", "Unified") and size[:-1].isdigit():
            return int(size[:-1]) * {"K": 1 << 10, "M": 1 << 20}.get(size[-1], 1)
    return None


def conv_blocking(n_stacks: int, width: int, rows: int, gout: int, regs: int, steps: int = 1 << 20,
                  pixel_step: float = 0.0, group_bytes: int = 0, cache: int | None = None) -> tuple[int, int]:
    """(rq, rp), the accumulator block with the fewest estimated cycles over the op:
    blocks (a block past the end of a row or of the stacks overlaps its neighbour, so a block
    that does not divide the map costs work) x (`steps` k-steps x cycles per step + the epilogue + set-up),
    where `steps` is the input maps x kernel taps each output sums. A grouped conv's block stays in
    its group (rq divides the group's output stacks). `pixel_step`: extra cycles per pixel and step
    (the int8 kernel quantises each pixel's inputs once per step, shared by the rq output stacks).
    Cache tiling: a worker runs a stack group's blocks one after another (conv_block numbers them
    group first), so the group's weights (`group_bytes` per output stack x rq) are reused from its
    L2 cache when they fit; where a group has more than one block, rq is kept to groups that fit
    `cache` bytes (the L2, l2_bytes; rq = 1 always allowed). A group of one block (an fc layer) reads
    its weights once whatever rq is, so there rq only feeds the FMA units."""
    best: tuple[tuple[float, int, int], int, int] | None = None
    reused = width * rows > 1
    for rq in range(1, min(n_stacks, MAX_RQ) + 1):
        if gout and gout % rq:
            continue
        if rq > 1 and reused and cache is not None and rq * group_bytes > cache:
            break
        for rp in range(1, min(width, MAX_RP) + 1):
            if rq * rp + rq + 2 > regs:
                break
            blocks = -(-n_stacks // rq) * -(-width // rp) * rows
            cost = blocks * (steps * (max(rq * rp, FMA_CHAINS, (rq + rp) / LOADS_PER_CYCLE) + pixel_step * rp)
                             + EPILOGUE * rq * rp + BLOCK_SETUP)
            key = (cost, -rq * rp, -rq)
            if best is None or key < best[0]:
                best = (key, rq, rp)
    assert best is not None          # rq = rp = 1 always fits
    return best[1], best[2]


def _choose_block(op: ProgOp, tensors: list[Tensor], frames: list[Frame], V: int, regs: int) -> None:
    tin, tout = tensors[op.ins[0]], tensors[op.out]
    fin = frames[tin.buf]
    op.xh = fin.half
    op.narrow = fin.lanes < V
    op.flat = op.kh == op.kw == 1 and op.stride == 1 and op.pads == (0, 0, 0, 0) and fin.halo == 0
    width, rows = (tout.H * tout.W, 1) if op.flat else (tout.W, tout.H)
    steps = (op.gin * V if op.gin else tensors[op.ins[0]].C) * op.kh * op.kw
    if op.mode == INT8:
        if op.xh or op.narrow:
            raise InputError(f"{op.name}: int8 mode needs a float32 input frame of {V} lanes", "modes")
        steps = -(-steps // 4)             # one vpdpbusd sums 4 input maps
    pixel_step = INT8_QUANT_CYCLES / 4 if op.mode == INT8 else 0.0      # per 4-map step: a quarter
    weight_size = 1 if op.mode == INT8 else 2 if op.mode == IMPRECISE else 4
    group_bytes = V * (op.gin * V if op.gin else tin.C) * op.kh * op.kw * weight_size    # one output stack's
    op.rq, op.rp = conv_blocking(layout.stacks(tout.C, V), width, rows, op.gout, regs, steps, pixel_step,
                                 group_bytes, l2_bytes())
    op.ps = fin.lanes * (1 if op.flat else op.stride)


def conv_kernel_name(op: ProgOp) -> str:
    if op.mode == INT8:
        return f"ck_8_{op.rq}x{op.rp}_{op.ps}"
    return f"ck_{op.mode[0]}{'h' if op.xh else 'f'}_{op.rq}x{op.rp}_{op.ps}{'n' if op.narrow else ''}"


def conv_kernel_source(op: ProgOp) -> str:
    """The C of the micro-kernel for op's mode, input storage, block and pixel stride: rq x rp
    accumulators as named variables (never an array the compiler might keep in memory), each step
    fully written out; the sum order of every output is input stack, kernel row, kernel column,
    input map (precise mode's fixed order)."""
    if op.mode == INT8:
        return int8_kernel_source(op)
    rq, rp = op.rq, op.rp
    mode = {PRECISE: "PRECISE", RELAXED: "RELAXED", IMPRECISE: "IMPRECISE"}[op.mode]
    fast = int(op.mode != PRECISE)
    xt = "h16" if op.xh else "float"
    wt = "h16" if op.mode == IMPRECISE else "float"
    ldw = "ldh" if op.mode == IMPRECISE else "ldf"
    a = [[f"a{q}_{p}" for p in range(rp)] for q in range(rq)]
    name = conv_kernel_name(op)
    step = "const vf " + ", ".join(f"w{q} = {ldw}(w + {q} * wss + k * V)" for q in range(rq)) + "; "
    for p in range(rp):
        x = f"h2f(x[{p * op.ps} + k])" if op.xh else f"x[{p * op.ps} + k]"
        step += "{ const vf x_ = bcast(" + x + "); " + " ".join(
            f"{a[q][p]} = mla({a[q][p]}, x_, w{q}, {fast});" for q in range(rq)) + " } "
    outs = " ".join(f"conv_out(op, so + {q}, rr[{p}], cc[{p}], {a[q][p]}, {mode});"
                    for q in range(rq) for p in range(rp))
    zero = ", ".join(f"{v} = (vf){{0}}" for row in a for v in row)
    return "\n".join([
        f"/* {rq} output stacks x {rp} pixels, {op.mode}, {'binary16' if op.xh else 'float32'} input, "
        f"pixel stride {op.ps} */",
        f"#define STEP_{name} {step}",
        f"static __attribute__((noinline)) void {name}(const op_t *op, long u0, long u1) {{",
        "  CONV_GEOMETRY;",
        f"  const {xt} *XB = ({xt} *)(ARENA + bi->off); const {wt} *WB = (const {wt} *)WSEC[op - OPS];",
        "  for (long u = u0; u < u1; ++u) {",
        f"    int so, rr[{rp}], cc[{rp}];",
        f"    const {xt} *X = XB + conv_block(op, u, {rq}, {rp}, &so, rr, cc); const {wt} *W = WB + (size_t)so * wss;",
        f"    vf {zero};",
        "    for (int s = 0; s < Si; ++s) {",
        "      const int kn = s == Si - 1 && !op->gin ? op->klast : V;",
        "      for (int i = 0; i < KH; ++i)",
        "        for (int j = 0; j < KW; ++j) {",
        f"          const {xt} *x = X + s * xss + i * xrs + (size_t)j * L;",
        f"          const {wt} *w = W + ((size_t)(s * KH + i) * KW + j) * V * V;",
        *([] if op.narrow else [      # a narrow frame's pixels hold fewer than V maps: never a whole stack
            "          if (kn == V) {",
            "#pragma GCC unroll 16",
            f"            for (int k = 0; k < V; ++k) {{ STEP_{name} }}",
            "          } else"]),
        f"          for (int k = 0; k < kn; ++k) {{ STEP_{name} }}",
        "        }",
        "    }",
        f"    {outs}",
        "  }",
        "}",
    ])


def int8_kernel_source(op: ProgOp) -> str:
    """The int8 micro-kernel (issue 35): rq x rp s32 accumulators; each step quantises the rp pixels'
    V input maps to u8 (quant_u8) and for every group of 4 input maps adds u8 x s8 products with one
    vpdpbusd per accumulator (embedded broadcast of the pixel's 4 bytes). The sums are exact, so the
    order does not matter. Without AVX-512 VNNI (or V != 16) the kernel is the plain C conv_i8_plain."""
    rq, rp = op.rq, op.rp
    a = [[f"a{q}_{p}" for p in range(rp)] for q in range(rq)]
    name = conv_kernel_name(op)
    step = ["{ " + " ".join(f"uint32_t x{p}[4]; _mm_storeu_si128((__m128i *)x{p}, quant_u8(x + {p * op.ps}, inv));"
                            for p in range(rp))]
    for g in range(4):
        step.append("{ const __m512i " + ", ".join(f"w{q} = _mm512_loadu_si512(w + {q} * wss + {g * 64})"
                                                   for q in range(rq)) + "; ")
        for p in range(rp):
            step.append(f"{{ const __m512i b_ = _mm512_set1_epi32((int)x{p}[{g}]); " + " ".join(
                f"{a[q][p]} = _mm512_dpbusd_epi32({a[q][p]}, b_, w{q});" for q in range(rq)) + " }")
        step.append("}")
    step.append("}")
    outs = " ".join(f"conv_out_i8(op, so + {q}, rr[{p}], cc[{p}], (vi){a[q][p]});" for q in range(rq) for p in range(rp))
    zero = ", ".join(f"{v} = _mm512_setzero_si512()" for row in a for v in row)
    return "\n".join([
        f"/* int8: {rq} output stacks x {rp} pixels, pixel stride {op.ps} */",
        "#if INT8_VNNI",
        f"static __attribute__((noinline)) void {name}(const op_t *op, long u0, long u1) {{",
        "  CONV_GEOMETRY;",
        "  const float *XB = (const float *)(ARENA + bi->off); const int8_t *WB = (const int8_t *)WSEC[op - OPS];",
        "  const __m512 inv = _mm512_set1_ps(int8_inv(op));",
        "  for (long u = u0; u < u1; ++u) {",
        f"    int so, rr[{rp}], cc[{rp}];",
        f"    const float *X = XB + conv_block(op, u, {rq}, {rp}, &so, rr, cc); const int8_t *W = WB + (size_t)so * wss;",
        f"    __m512i {zero};",
        "    for (int s = 0; s < Si; ++s)",
        "      for (int i = 0; i < KH; ++i)",
        "        for (int j = 0; j < KW; ++j) {",
        "          const float *x = X + s * xss + i * xrs + (size_t)j * L;",
        "          const int8_t *w = W + ((size_t)(s * KH + i) * KW + j) * V * V;",
        "          " + " ".join(step),
        "        }",
        f"    {outs}",
        "  }",
        "}",
        "#else",
        f"static void {name}(const op_t *op, long u0, long u1) {{ conv_i8_plain(op, u0, u1); }}",
        "#endif",
    ])


def conv_kernels_text(p: Plan) -> str:
    """The generated micro-kernels the plan's convolutions use, and CONV_FN: each op's."""
    convs = [op for op in p.ops if op.kind == "conv"]
    kernels = {conv_kernel_name(op): op for op in convs}
    fn = ", ".join(conv_kernel_name(op) if op.kind == "conv" else "0" for op in p.ops)
    return "\n".join([*(conv_kernel_source(op) for op in kernels.values()),
                      f"static void (*const CONV_FN[N_OPS])(const op_t *, long, long) = {{{fn}}};"])


def _conv_op(op: ConvOp, mode: str, V: int, tin: int, tout: int, tensors: list[Tensor],
             in_shape: tuple[int, int, int], notes: list[str]) -> ProgOp:
    """A convolution / fully connected layer with its reordered weight section."""
    if mode == INT8:
        return _conv_op_int8(op, V, tin, tout, in_shape)
    w = mode_weights(op.weight, mode)
    bias = layout.pad_maps(mode_weights(op.bias, mode).astype(np.float32), V)
    c_in = in_shape[0]
    t, left, b, r = op.pads4
    pop = ProgOp(op.name, "conv", mode=mode, relu=op.relu, ins=[tin], out=tout, stride=op.stride, pads=(t, left, b, r))
    if op.fc:
        w = w.reshape((w.shape[0],) + tuple(in_shape))          # an fc reads its producer's (C, H, W) frame
        pop.pads, pop.stride = (0, 0, 0, 0), 1
    if op.depthwise:
        pop.kind = "dw"
        wmm = layout.weights_depthwise_map_major(w, V)
    elif op.groups > 1 and layout.group_aligned(op, V):
        g = op.groups
        grouped = layout.weights_grouped_map_major(w, g, V)      # (G, So/G, Si/G, KH, KW, Vout, Vin)
        wmm = grouped.reshape((-1,) + grouped.shape[2:]).swapaxes(4, 5)
        pop.gin, pop.gout = c_in // g // V, op.weight.shape[0] // g // V
    else:
        if op.groups > 1:
            notes.append(f"{op.name}: groups of {c_in // op.groups} maps do not start on {V}-map stacks; "
                         "computed as the block-diagonal dense convolution")
            w = layout.expand_groups(w, op.groups)
        wmm = layout.weights_map_major(w, V).swapaxes(4, 5)     # (S_out, S_in, KH, KW, V_in, V_out)
        pop.klast = c_in - (layout.stacks(c_in, V) - 1) * V
    pop.kh, pop.kw = int(w.shape[2]), int(w.shape[3])
    wmm = np.ascontiguousarray(wmm)
    data = wmm.astype(np.float16).tobytes() if mode == IMPRECISE else wmm.astype(np.float32).tobytes()
    pop.bias_offset = _align(len(data))
    pop.weights = data + bytes(pop.bias_offset - len(data)) + bias.tobytes()
    return pop


def _conv_op_int8(op: ConvOp, V: int, tin: int, tout: int, in_shape: tuple[int, int, int]) -> ProgOp:
    """A dense convolution / fc in int8 mode. Section: s8 weights (S_out, S_in, KH, KW, V_in/4, V_out, 4):
    each 64-byte row holds, for one group of 4 input maps, 4 bytes per output map (vpdpbusd's operand);
    then the float32 bias (S_out*V), the float32 multipliers in_scale*w_scale (S_out*V) and the
    float32 inverse input scale (numerics.conv2d_int8_nchw is the reference)."""
    t, left, b, r = op.pads4
    pop = ProgOp(op.name, "conv", mode=INT8, relu=op.relu, ins=[tin], out=tout, stride=op.stride, pads=(t, left, b, r))
    wq, ws = int8_weights(op.weight)
    w = wq.astype(np.float32)
    if op.fc:
        w = w.reshape((w.shape[0],) + tuple(in_shape))
        pop.pads, pop.stride = (0, 0, 0, 0), 1
    wmm = layout.weights_map_major(w, V)                      # (S_out, S_in, KH, KW, V_out, V_in)
    so, si, kh, kw = wmm.shape[:4]
    w8 = wmm.reshape(so, si, kh, kw, V, V // 4, 4).transpose(0, 1, 2, 3, 5, 4, 6)
    c_in = in_shape[0]
    pop.klast = c_in - (layout.stacks(c_in, V) - 1) * V
    pop.kh, pop.kw = int(w.shape[2]), int(w.shape[3])
    data = np.ascontiguousarray(w8).astype(np.int8).tobytes()
    bias = layout.pad_maps(np.asarray(op.bias, np.float32), V)
    mult = layout.pad_maps(int8_multipliers(op.int8_scale, ws), V)
    pop.bias_offset = _align(len(data))
    pop.weights = (data + bytes(pop.bias_offset - len(data)) + bias.tobytes() + mult.tobytes()
                   + np.array([int8_inverse(op.int8_scale)], np.float32).tobytes())
    return pop


# ------------------------------------------------------------------ C source
def _c_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _op_line(op: ProgOp) -> str:
    ins = (op.ins + [0] * 8)[:8]
    size, alpha, beta, kbias = op.lrn
    t, left, b, r = op.pads
    return ("  {" + f"{_c_str(op.name)}, K_{op.kind.upper()}, {ALL_MODES.index(op.mode)}, {int(op.relu)}, "
            f"{{{', '.join(map(str, ins))}}}, {len(op.ins)}, {op.out}, {op.res}, {op.kh}, {op.kw}, {op.stride}, "
            f"{t}, {left}, {b}, {r}, {op.gin}, {op.gout}, {op.klast}, {int(op.count_pad)}, "
            f"{size}, {float(alpha)!r}f, {float(beta)!r}f, {float(kbias)!r}f, {op.chunks}, {int(op.rnd)}, "
            f"{op.rq}, {op.rp}, {int(op.flat)}, {op.pool}, {int(op.fused)}" + "},")


def table_text(p: Plan) -> str:
    """The model-specific part of the C source (also what the weight file's fingerprint covers)."""
    lines = [f"static const buffer_t BUFS[{len(p.frames)}] = {{"]
    lines += [f"  {{{f.offset}, {f.S}, {f.H + 2 * f.halo}, {f.W + 2 * f.halo}, {f.halo}, {int(f.half)}, {f.lanes}}},"
              for f in p.frames]
    lines.append("};")
    lines.append(f"static const tensor_t TENS[{len(p.tensors)}] = {{")
    lines += [f"  {{{t.buf}, {t.c0}, {t.C}, {t.H}, {t.W}}},   /* {t.name} */" for t in p.tensors]
    lines.append("};")
    lines.append("static const op_t OPS[N_OPS] = {")
    lines += [_op_line(op) for op in p.ops]
    lines.append("};")
    lines.append("static const uint64_t SEC_BYTES[N_OPS] = {" + ", ".join(f"{len(op.weights)}u" for op in p.ops) + "};")
    lines.append("static const size_t BIAS_OFF[N_OPS] = {" + ", ".join(str(op.bias_offset) for op in p.ops) + "};")
    lines.append("static const char *KIND_NAMES[] = {" + ", ".join(_c_str(k) for k in KINDS) + "};")
    return "\n".join(lines)


def synthesise(model: CnnModel, modes: dict[str, str], V: int, threads: int, precise_fma: bool = True,
               half_frames: bool = False, shared: Sequence[bool] | None = None) -> Program:
    """The C source and weight file of the program for one mode assignment (precise_fma: see
    synth_kernels.c, mla; half_frames and shared: see plan)."""
    p = plan(model, modes, V, threads, half_frames, shared)
    tables = table_text(p)
    fp = weights_file.fingerprint(f"V={V}\n{tables}")
    c, h, w = p.input_shape
    out = p.tensors[p.out_tensor]
    mode_list = ", ".join(f"{op.name}={op.mode}" for op in p.ops if op.kind in ("conv", "dw"))
    head = [f"/* Cappuccino-synthesised inference program for {model.name}: {len(model.ops)} ops, "
            f"V={V}, {threads} OLP worker threads.",
            f"   modes: {mode_list[:400]}{' ...' if len(mode_list) > 400 else ''}",
            "   build: gcc -O3 -march=native -std=gnu11 -fopenmp -ffp-contract=off prog.c -o prog -lm",
            "   run:   ./prog weights.bin images.f32 COUNT MIN_SECONDS [THREADS] [--profile] [--dump FILE] [--alone I,J] */",
            f"#define V {V}",
            "#define NBD 8",
            f"#define PRECISE_FMA {int(precise_fma)}",
            f"#define HALF_FRAMES {int(half_frames)}",
            *(f"#define K_{k.upper()} {i}" for i, k in enumerate(KINDS)),
            f"#define N_OPS {len(p.ops)}",
            f"#define N_TENS {len(p.tensors)}",
            f"#define THREADS {threads}",
            f"#define IMG {c * h * w}",
            f"#define NOUT {out.C * out.H * out.W}",
            f"#define PACK_CHUNKS {chunks(c * h * w, threads)}",
            f"#define ANY_SHARED {int(any(op.chunks > 1 for op in p.ops))}   /* else one worker does everything */",
            f"#define OUT_TENSOR {p.out_tensor}",
            f"#define ARENA_BYTES ((size_t){max(p.arena_bytes, ALIGN)}u)",
            f"#define WF_MAGIC {_c_str(weights_file.MAGIC[:-1].decode())}",
            f"#define WF_VERSION {weights_file.FORMAT_VERSION}",
            f"#define WF_FINGERPRINT {fp}ull",
            *_variant_defines(p)]
    library = KERNELS.read_text()
    before, after = library.split("/*@TABLES@*/")
    middle, after = after.split("/*@CONV_KERNELS@*/")
    source = "\n".join(head) + "\n" + before + tables + "\n" + middle + conv_kernels_text(p) + "\n" + after
    wf = weights_file.WeightFile(V, fp, [op.weights for op in p.ops])
    return Program(source, weights_file.encode(wf), p)


def _variant_defines(p: Plan) -> list[str]:
    """USE_* flags: the (mode x input storage) variants the model uses; the depthwise ones decide what is
    compiled (the convolutions' micro-kernels are generated per use, conv_kernels_text)."""
    used = set()
    for op in p.ops:
        if op.kind == "conv" and op.mode != INT8:
            half_in = p.frames[p.tensors[op.ins[0]].buf].half
            used.add(f"USE_{op.mode[0].upper()}_{'H' if half_in else 'F'}")
        elif op.kind == "dw":
            used.add(f"USE_DW_{op.mode[0].upper()}")
    names = [f"USE_{m}_{x}" for m in "PRI" for x in "FH"] + [f"USE_DW_{m}" for m in "PRI"]
    return [f"#define {n} {int(n in used)}" for n in names]


def read_dump(path: Path, p: Plan) -> dict[str, np.ndarray]:
    """The tensors a program wrote with --dump (last image, NCHW float32), by tensor name."""
    data = np.fromfile(path, np.float32)
    out, k = {}, 0
    for t in p.tensors:
        n = t.C * t.H * t.W
        out[t.name] = data[k:k + n].reshape(t.C, t.H, t.W)
        k += n
    if k != data.size:
        raise ValueError(f"{path}: {data.size} values, the plan's tensors hold {k}")
    return out
