"""MERIT at real layer sizes (issue 31): no toy caps, sampled verification, tiles fitted to the device.

The generated C and CUDA emulation are compiled once in this module (the engine run on a layer above
the full-evaluation size); everything else is generation and static checks of the generated source.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from core.errors import InputError
from core.merit import codegen_cuda as CU
from core.merit import device as D
from core.merit import sample as S
from core.merit.codegen_run import find_compiler
from core.merit.evaluate import evaluate, evaluate_rows
from core.merit_transform import fileformat as FF
from core.merit_transform import workloads as W
from core.merit_transform.fileformat import transform_from_json

pytestmark = pytest.mark.slow          # compiles C and runs real layer sizes


def _real_layers() -> list[tuple[str, object]]:
    from core.nets import zoo
    from sims import meritz as Z

    out = []
    for net in ("vgg16", "resnet50"):
        for name, t in Z.network_transforms(zoo.get(net), batch=1):
            if any(n == "oc" for n, _ in t.parallel):          # the convolutions (FC layers are GEMMs)
                out.append((f"{net}/{name}", t))
    out.append(("gemm4096", W.gemm(4096, 4096, 4096)))
    return out


REAL = _real_layers()


def test_every_vgg16_and_resnet50_conv_layer_and_a_4096_gemm_is_accepted():
    assert sum(n.startswith("vgg16/") for n, _ in REAL) == 13
    assert sum(n.startswith("resnet50/") for n, _ in REAL) >= 50
    for name, t in REAL:
        back = transform_from_json(json.loads(json.dumps(t.to_json())))
        assert back.p_count * back.a_count == t.p_count * t.a_count, name
    # the old cap was 2^28 multiply-adds: VGG-16's conv1_2 alone has 1.85 G
    assert max(t.p_count * t.a_count for _, t in REAL) == 2 ** 36                # the GEMM
    assert max(t.p_count * t.a_count for n, t in REAL if n.startswith("vgg16/")) > 1.8e9


def test_the_real_limits_name_their_field(monkeypatch):
    g = W.gemm(4, 5, 6).to_json()
    big = json.loads(json.dumps(g))
    big["parallel"] = [["m", 2 ** 31 - 1], ["n", 2 ** 31 - 1]]
    big["accumulate"] = [["k", 2 ** 31 - 1]]
    big["operands"][0]["shape"] = [4, 6]
    with pytest.raises(InputError) as e:
        transform_from_json(big)
    assert e.value.where == "transform.accumulate" and "64-bit" in e.value.message
    monkeypatch.setattr(FF, "machine_memory_bytes", lambda: 1024 ** 3)     # a 1 GiB machine
    with pytest.raises(InputError) as e:
        transform_from_json(W.gemm(8192, 16, 8192).to_json())
    assert e.value.where == "transform.operands[0].shape" and "this machine's 1 GiB" in e.value.message
    with pytest.raises(InputError) as e:
        transform_from_json(W.gemm(2 ** 14, 2 ** 14, 1).to_json())
    assert e.value.where == "transform.parallel"
    transform_from_json(W.gemm(1024, 1024, 1024).to_json())                 # 20 MB: fine


@pytest.mark.parametrize("name", ["conv3x3", "strided", "correlation", "motion", "bilateral", "pixel-shuffle",
                                  "residual", "alexnet-conv1"])
def test_outputs_at_chosen_rows_are_the_full_evaluation(name):
    wl = W.WORKLOADS[name]
    t = wl.stages[-1]
    data = wl.make_data(np.random.default_rng(3))
    full = np.asarray(evaluate(t, data)).reshape(-1)
    rows = np.unique(np.random.default_rng(4).integers(0, t.p_count, 50))
    got = evaluate_rows(t, data, rows, block_elems=1 << 12)                # several blocks
    assert np.allclose(got, full[rows], rtol=1e-12, atol=1e-12)


def test_the_sample_is_seeded_random_outputs_and_whole_border_tiles():
    t = W.conv(8, 30, 30, 12, 3, pad=1)                                     # 12 x 30 x 30 outputs
    ext = {"oc": 8, "y": 8, "x": 16}
    s1, s2 = S.choose_sample(t, ext, 7), S.choose_sample(t, ext, 7)
    assert np.array_equal(s1.rows, s2.rows) and not np.array_equal(s1.rows, S.choose_sample(t, ext, 8).rows)
    assert s1.random == 256 and len(s1.tiles) == 5                          # first, last, last along oc, y, x
    assert {0, t.p_count - 1} <= set(s1.rows.tolist())
    # the last tile is the remainder tile, whole: oc 8..11, y 24..29, x 16..29
    last = S.tile_rows(t, s1.tiles[1], ext)
    assert len(last) == 4 * 6 * 14 and set(last.tolist()) <= set(s1.rows.tolist())
    assert "drawn at random (seed 7)" in s1.describe() and "whole 8x8x16 tiles" in s1.describe()
    assert S.full_sample(t).describe() == f"all {t.p_count} outputs"


def _smem_from_source(src: str) -> tuple[int, int | None, int]:
    """(static shared bytes, dynamic bytes or None, launch bounds) read from a .cu file's text."""
    static = 4 * sum(int(w) for w in re.findall(r"__shared__ float s\d+\[(\d+)\]", src))
    dyn = re.search(r"cudaFuncAttributeMaxDynamicSharedMemorySize, (\d+)\)", src)
    bounds = re.search(r"__launch_bounds__\((\d+)\)", src)
    assert bounds is not None
    return static, int(dyn.group(1)) if dyn else None, int(bounds.group(1))


def test_every_real_layer_gets_a_cuda_tile_that_fits_the_device():
    dev = D.cuda_device("hopper")
    for name, t in REAL:
        prog = CU.cuda_program(t, {}, device=dev)                          # no tile given: chosen
        static, dyn, bounds = _smem_from_source(prog.source)
        assert dyn is None and 0 < static <= dev.static_smem_bytes, name
        assert bounds == prog.threads <= dev.max_threads, name
        assert prog.regs_estimate * prog.threads <= dev.regs_per_block, name
        assert prog.blocks * prog.threads * prog.outputs_per_thread >= t.p_count, name
    g = CU.cuda_program(W.gemm(4096, 4096, 4096), {}, device=dev)
    assert g.ext["k"] < 4096 and "accumulation tiled along k" in g.tile_note         # k-tiling
    vgg = next(t for n, t in REAL if n.startswith("vgg16/") and dict(t.accumulate)["ic"] == 512)
    v = CU.cuda_program(vgg, {}, device=dev)
    assert v.ext["ic"] < 512 and "accumulation tiled along ic" in v.tile_note        # channel tiling


def test_a_given_tile_over_the_limit_is_served_dynamically_or_adjusted_and_says_why():
    t = W.conv(64, 56, 56, 64, 3, stride=2, pad=1)                          # the 3x3 stride-2 case
    tile = {"oc": 64, "y": 8, "x": 28, "ic": 8}                             # 49 440 B: just over 48 KB
    fit = D.fit_cuda_tile(t, tile, D.cuda_device("hopper"))
    assert fit.ext == {"oc": 64, "y": 8, "x": 28, "ic": 8, "ky": 3, "kx": 3} and not fit.adjusted
    assert fit.dynamic and fit.smem_bytes > 48 * 1024 and "dynamic shared memory" in fit.note
    prog = CU.cuda_program(t, tile, device=D.cuda_device("hopper"))
    static, dyn, _ = _smem_from_source(prog.source)
    assert static == 0 and dyn == prog.smem_bytes and f", {prog.smem_bytes}>>>" in prog.source
    generic = D.fit_cuda_tile(t, tile, D.cuda_device("generic"))           # no opt-in: shrunk
    assert generic.adjusted and generic.smem_bytes <= 48 * 1024 and not generic.dynamic
    assert "49152 B a block may have" in generic.note and "tile adjusted" in generic.note
    huge = D.fit_cuda_tile(t, {**tile, "ic": 64, "y": 28}, D.cuda_device("hopper"))
    assert huge.adjusted and huge.smem_bytes <= 227 * 1024 and "232448 B" in huge.note
    # a tile that fits is kept as given (the built-ins' tiles, Fig. 6)
    conv = W.WORKLOADS["conv3x3"]
    assert D.fit_cuda_tile(conv.stages[0], conv.tile).ext == {"oc": 1, "y": 4, "x": 4, "ic": 1, "ky": 3, "kx": 3}


def test_the_c_tile_follows_the_cpu_caches():
    cpu = D.CpuDevice("test", l1d_bytes=32 * 1024, l2_bytes=256 * 1024, vector_bytes=32)
    ext, note = D.fit_c_tile(W.gemm(4096, 4096, 4096), {}, cpu)
    assert ext["m"] * ext["n"] <= 8192 and ext["k"] < 4096 and "half of L2" in note
    assert 4 * (ext["m"] + ext["n"]) * ext["k"] <= 128 * 1024
    ext2, _ = D.fit_c_tile(W.gemm(64, 64, 64), {"m": 16}, cpu)
    assert ext2 == {"m": 16, "n": 64, "k": 64}                              # a given tile that fits: kept


@pytest.mark.skipif(find_compiler() is None or find_compiler(("g++", "clang++")) is None,
                    reason="needs a C and a C++ compiler")
def test_a_layer_above_the_full_evaluation_size_runs_in_the_engine_on_a_sample(tmp_path):
    """64->64 channels, 64x64, 3x3: 151 M steps, over FULL_MAX_WORK and EMULATION_MAX_WORK; no tile."""
    from core.engine import JobRequest, get_engine
    from core.jobs import CancelToken, run_foreground
    from core.workload import MeritTransformWorkload

    t = W.conv(64, 64, 64, 64, 3, pad=1, name="layer").to_json()
    t["reference"] = {"kind": "conv2d", "pad": 1}
    assert S.needs_sampling(transform_from_json(t))
    spec = get_engine("merit")
    settings = {**spec.default_settings(), "curve_alus": [128], "codegen": True}
    req = JobRequest(workload=MeritTransformWorkload(transform=t), target=None, settings=settings)
    out = run_foreground(spec.run(req, CancelToken()), quiet=True)
    assert out.error is None, out.error
    r = out.result
    v = r.verification
    assert v.ok and v.max_abs_diff is not None and "drawn at random" in v.sample and v.outputs_checked < 64 * 64 * 64
    assert "tile chosen for" in r.tiling.tile_note
    c = r.codegen.c
    assert c.verified, c.message
    assert "drawn at random" in c.sample and set(c.timings_s) >= {"naive", "tiled", "packed"}
    cu = r.codegen.cuda
    em = cu.emulated_check
    assert em is not None and em.ran and em.ok, em and em.message
    k = cu.kernels[0]
    assert k.smem_bytes <= 48 * 1024 and k.launch_bounds == k.threads and "tile chosen for" in k.tile_note
    assert f"__launch_bounds__({k.threads})" in next(iter(cu.sources.values()))
