"""The packed kernel's issue-31 paths on odd shapes, all compiled into one shared library per module:
N over the row pitch of a padded map (dropped columns), the last panel moved back to end at N,
panels packed run by run (rows of a narrow map), a strided input split once into its stride phases,
output stored run by run, M split
across threads, channels that are no multiple of the register block or the vector width."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest

from core.merit import codegen_c as CG
from core.merit.codegen_run import TOLERANCE, compile_c, find_compiler, max_rel_error
from core.merit.evaluate import evaluate
from core.merit_transform import workloads as W

pytestmark = pytest.mark.slow          # compiles C

needs_cc = pytest.mark.skipif(find_compiler() is None, reason="no C compiler (gcc, cc, clang) here")

CASES = {
    "pitch_7x7": W.conv(13, 7, 7, 20, 3, pad=1, name="pitch_7x7"),               # 9-float pitch, 61 columns
    "pitch_short": W.conv(5, 5, 6, 24, 3, pad=1, name="pitch_short"),            # N < NR until the pitch
    "one_by_one_7x7": W.conv(17, 7, 7, 40, 1, name="one_by_one_7x7"),             # last panel moved back
    "one_by_one_s2": W.conv(9, 13, 13, 16, 1, stride=2, name="one_by_one_s2"),   # rows of step 2
    "three_s2": W.conv(6, 11, 11, 12, 3, stride=2, pad=1, name="three_s2"),
    "seven_s2": W.conv(3, 20, 20, 8, 7, stride=2, pad=3, name="seven_s2"),       # the first layer's shape
    "residual_6x6": W.conv(10, 6, 6, 14, 3, pad=1, strategy="residual", name="residual_6x6"),
    "narrow_4x5": W.conv(7, 4, 5, 9, 1, name="narrow_4x5"),                       # N = 20 < NR
    "gemm_odd": W.gemm(37, 45, 29, name="gemm_odd"),
    "many_channels_7x7": W.conv(40, 7, 7, 70, 3, pad=1, name="many_channels_7x7"),  # N = 49 < M = 70
    "odd_s2_groups": W.conv(8, 9, 12, 10, 3, stride=2, groups=2, name="odd_s2_groups"),  # phases of 5 and 4
    "split_overread": W.conv(6, 30, 30, 12, 3, stride=2, pad=1, name="split_overread"),   # 16-wide phases
}


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Any:
    if find_compiler() is None:
        pytest.skip("no C compiler")
    mp = pytest.MonkeyPatch()
    mp.setattr(CG, "PARALLEL_MIN_WORK", 1)          # threads and the M split at these small sizes
    try:
        kernels = [CG.packed_kernel(t, f"k_{name}") for name, t in CASES.items()]
    finally:
        mp.undo()
    assert all(k is not None for k in kernels)
    src = "\n".join(["#include <math.h>", "#include <omp.h>", "#include <stdio.h>", "#include <stdlib.h>",
                     CG.PACKED_PRELUDE] + [k[0].text for k in kernels if k is not None])
    work = tmp_path_factory.mktemp("packed")
    b = compile_c(src, work, "libpacked.so", CG.FLAGS + ["-shared", "-fPIC"])
    assert b.ok, b.message
    so = ctypes.CDLL(str(work / "libpacked.so"))
    ctypes.CDLL("libgomp.so.1").omp_set_num_threads(2)
    return so, {name: k[0].text for name, k in zip(CASES, kernels) if k is not None}


def _run(so: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    t = CASES[name]
    rng = np.random.default_rng(3)
    data = {op.name: rng.standard_normal(op.shape) for op in t.operands}
    ins = CG.padded_inputs(t, data)
    out = np.full(t.p_count, np.nan, dtype=np.float32)
    fn = getattr(so, f"k_{name}")
    fn.restype = None
    fn(*[a.ctypes.data_as(ctypes.c_void_p) for a in ins], out.ctypes.data_as(ctypes.c_void_p))
    ref = evaluate(t, {k: np.asarray(v, dtype=np.float32).astype(np.float64) for k, v in data.items()})
    return out, np.asarray(ref, dtype=np.float64).reshape(-1)


@needs_cc
@pytest.mark.parametrize("name", list(CASES))
def test_packed_kernel_on_odd_shapes_matches_numpy(lib, name):
    so, _ = lib
    out, ref = _run(so, name)
    assert np.isfinite(out).all(), "an output was never written"
    assert max_rel_error(out, ref) < TOLERANCE


@needs_cc
def test_the_paths_are_the_ones_meant(lib):
    _, text = lib
    # a padded narrow map runs N over the row pitch (9 floats for 7 outputs); an unpadded one does not
    assert "N over the row pitch" in text["pitch_7x7"] and "% 9L >= 7L" in text["pitch_7x7"]
    assert "N over the row pitch" not in text["one_by_one_7x7"]
    # stride 2: the input split once into its phases, then a stride-1 read (over the split row's pitch
    # where padded: 13 padded columns make 7 a phase for 6 outputs)
    for name in ("one_by_one_s2", "three_s2", "seven_s2"):
        assert "stride phases (sy, sx) = (2, 2)" in text[name]
    assert "% 7L >= 6L" in text["three_s2"] and "N over the row pitch" not in text["one_by_one_s2"]
    assert "stride phases" not in text["pitch_7x7"]
    # N is the output's unit-stride side (the map), even where the channels outnumber its outputs
    v = CG.gemm_view(CASES["many_channels_7x7"])
    assert v is not None and v.N == ["y", "x"] and v.M == ["oc"] and v.pitch == ("x", 9, 7)
    g = CG.gemm_view(CASES["gemm_odd"])
    assert g is not None and g.N == ["n"]
    assert "collapse(3)" in text["pitch_7x7"]                                # M split across threads


def test_narrow_output_side_falls_back_to_the_larger_side():
    # 3 outputs a row is less than a vector: the channels (64) become N
    v = CG.gemm_view(W.conv(8, 3, 3, 64, 1))
    assert v is not None and v.N == ["oc"]
