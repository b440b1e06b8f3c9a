"""The int8 mode (issue 35, bullet 2): u8 activations x s8 weights summed exactly in s32 and a float32
epilogue. The numpy emulation (numerics.conv2d_int8_nchw, forward.py) and the C program (AVX-512
VNNI kernel, and the plain C fallback) must give the same bits on awkward shapes; the search chooses
the mode only within the accuracy budget and never when it is not asked for."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from core.cappuccino import engine as capp
from core.cappuccino import inexact, synth, synth_program
from core.cappuccino.forward import ActivationCache, forward_map_major, forward_reference
from core.cappuccino.inexact import ModeChoice, search_modes
from core.cappuccino.model import load_builtin
from core.cappuccino.numerics import INT8, PRECISE, int8_weights, quantise_u8
from core.errors import InputError
from tests.test_cappuccino_kernels import CC, needs_cc, odd_shapes_model

pytestmark = pytest.mark.slow          # compiles C


def test_quantisers_round_half_to_even_clamp_and_keep_the_weight_range():
    x = np.array([-3.0, -0.4, 0.5, 1.5, 2.5, 254.5, 255.4, 1e12, np.inf], np.float32)
    assert quantise_u8(x, np.float32(1)).tolist() == [0, 0, 0, 2, 2, 254, 255, 255, 255]
    w = np.array([[[[0.5]], [[-1.0]]], [[[0.0]], [[0.0]]]], np.float32)            # (2, 2, 1, 1)
    q, s = int8_weights(w)
    assert q.dtype == np.int8 and q[0].ravel().tolist() == [64, -127] and q[1].ravel().tolist() == [0, 0]
    assert s.tolist() == [np.float32(1.0) / np.float32(127), 1.0]


@pytest.fixture(scope="module")
def odd_int8(tmp_path_factory):
    """The odd-shapes network with every admissible layer in int8, its reference, and the program's
    --dump built three ways: VNNI (V=16, when the CPU has it), the plain C fallback at V=16
    (-DCAPP_NO_VNNI) and at V=8 (no VNNI kernel exists for 8 lanes)."""
    if CC is None:
        pytest.skip("no C compiler")
    m = odd_shapes_model()
    eligible = inexact.calibrate_int8(m, ActivationCache(m, m.x_val))
    modes = {n: INT8 for n in eligible}
    tmp = tmp_path_factory.mktemp("int8")
    synth.write_images(tmp / "x.f32", m.x_val)
    dumps = {}
    for key, V, extra in (("vnni", 16, []), ("plain16", 16, ["-DCAPP_NO_VNNI"]), ("plain8", 8, [])):
        prog = synth.synthesise_program(m, modes, V, 2)
        src, exe, w, dump = tmp / f"{key}.c", tmp / key, tmp / f"{key}.bin", tmp / f"{key}.dump"
        src.write_text(prog.source)
        w.write_bytes(prog.weights)
        subprocess.run([CC, *synth.CFLAGS, "-fopenmp", "-ffp-contract=off", *extra, str(src), "-o", str(exe), "-lm"],
                       check=True, capture_output=True)
        subprocess.run([str(exe), str(w), str(tmp / "x.f32"), str(len(m.x_val)), "0", "2", "--dump", str(dump)],
                       check=True, capture_output=True)
        dumps[key] = synth_program.read_dump(dump, prog.plan)
    return m, eligible, modes, dumps


def test_calibration_admits_dense_layers_after_a_relu_only(odd_int8):
    m, eligible, _, _ = odd_int8
    # the first layer reads the (signed) network input, dw2 / dw7 are depthwise: they stay float
    assert eligible == ["s2", "pw_row", "s3", "pw_flat", "asym", "pw_res", "s2b", "fc"]
    assert all(op.int8_scale > 0 for op in m.conv_ops if op.name in eligible)


@needs_cc
@pytest.mark.parametrize("build", ["vnni", "plain16", "plain8"])
def test_int8_layers_match_the_emulation_bit_for_bit(odd_int8, build):
    """Stride 2, padding (asymmetric, 5x3), 1x1 over row and flat blocks, maps not a multiple of 4 or
    16 (20, 33, 49 inputs), a fused residual and an fc: every int8 layer equals numpy exactly."""
    m, eligible, modes, dumps = odd_int8
    _, outs = forward_reference(m, m.x_val, modes, keep=True)
    ref = {op.name: o[-1] for op, o in zip(m.ops, outs)}
    dump = dumps[build]
    for name in eligible:
        key = "res" if name == "pw_res" else name            # the residual add is fused into pw_res
        want = ref[key].reshape(dump[key].shape)
        if key == "res":        # the residual dw2 is a float layer (numpy and C may differ in its last bit)
            np.testing.assert_allclose(dump[key], want, rtol=0, atol=1e-5)
        else:
            assert np.array_equal(dump[key], want), (build, name, float(np.abs(dump[key] - want).max()))
    logits = forward_reference(m, m.x_val, modes)[0]
    mm, _ = forward_map_major(m, m.x_val, 16, modes)
    assert np.array_equal(mm, logits)                       # the map-major emulation: the same bits


def test_int8_is_refused_where_it_cannot_run(odd_int8):
    m, _, _, _ = odd_int8
    for name, words in (("wide", "network input"), ("dw2", "depthwise")):
        with pytest.raises(InputError) as e:
            synth_program.plan(m, {name: INT8}, 16, 1)
        assert e.value.where == "modes" and words in e.value.message
    m2 = odd_shapes_model()                                  # not calibrated
    with pytest.raises(InputError, match="calibrated"):
        synth_program.plan(m2, {"s2": INT8}, 16, 1)


# ------------------------------------------------------------------ the search
@pytest.fixture(scope="module")
def digits():
    return load_builtin(120)


def test_search_chooses_int8_within_the_budget(digits):
    choice = list(search_modes(digits, 0.5, int8=True))[-1]
    assert isinstance(choice, ModeChoice)
    assert choice.modes["conv2"] == INT8 and choice.modes["fc"] == INT8 and choice.modes["conv1"] != INT8
    assert choice.precise_accuracy - choice.accuracy <= 0.5
    assert choice.per_layer["conv2"][INT8] >= choice.precise_accuracy - 0.5


def test_search_without_int8_is_the_three_mode_search(digits):
    with_int8 = [c for c in search_modes(digits, 0.5) if not isinstance(c, ModeChoice)]
    assert all(INT8 not in c.modes.values() for c in with_int8)
    assert len(with_int8) == 1 + 2 * 3 + 27 - 7                # all precise, 6 single layers, the rest of 3^3


def test_search_leaves_int8_out_when_it_breaks_the_budget():
    """One validation image 300 times brighter sets every activation scale: the other images'
    activations quantise to (nearly) zero, so int8 loses accuracy and the search must not take it."""
    m = load_builtin(120)
    m.x_val = m.x_val.copy()
    m.x_val[0] *= 300
    items = list(search_modes(m, 0.5, int8=True))
    choice = items[-1]
    assert isinstance(choice, ModeChoice)
    int8_single = [c for c in items[:-1] if not isinstance(c, ModeChoice) and c.stage == "single layer"
                   and INT8 in c.modes.values()]
    assert int8_single and all(not c.within_budget for c in int8_single)
    assert INT8 not in choice.modes.values() and choice.precise_accuracy - choice.accuracy <= 0.5
    assert all(c.within_budget == (c.drop <= 0.5 + 1e-9) for c in items[:-1] if not isinstance(c, ModeChoice))


def test_trained_mlp_keeps_its_accuracy_in_int8(tmp_path):
    """The breast-cancer MLP: its first layer reads standardised (signed) features and stays float;
    the two after the ReLUs may run in int8 within a 0.5 pp budget."""
    pytest.importorskip("sklearn")
    from core.cappuccino import train_mlp
    from core.cappuccino.model import load_onnx_model

    assert train_mlp.main(["--out", str(tmp_path / "m.onnx"), "--validation", str(tmp_path / "v.npz")]) == 0
    m = load_onnx_model(str(tmp_path / "m.onnx"), str(tmp_path / "v.npz"))
    choice = list(search_modes(m, 0.5, int8=True))[-1]
    assert isinstance(choice, ModeChoice)
    first = m.conv_ops[0].name
    assert choice.modes[first] != INT8 and choice.precise_accuracy - choice.accuracy <= 0.5
    assert choice.per_layer[first].keys() == {PRECISE, "relaxed", "imprecise"}
    assert all(INT8 in choice.per_layer[op.name] for op in m.conv_ops[1:])


def test_int8_setting_defaults_off_and_names_the_field():
    assert capp.default_settings()["int8"] is False
    with pytest.raises(InputError) as e:
        capp._settings({"int8": "yes"})
    assert e.value.where == "settings.int8"


def test_layout_check_holds_on_a_residual_network_in_int8(tmp_path, monkeypatch):
    """The chained passes may drift apart by quantisation steps (a float layer's last bits move an
    int8 input across a rounding boundary; here forced: every float convolution of the map-major
    pass is made 1e-5 larger); check_layouts then compares every op with the reference op applied to
    the map-major pass's own inputs, which int8 layers equal bit for bit (the chained comparison
    failed ResNet-18 at full size with differences of up to 3e-2)."""
    from core.cappuccino import forward, networks
    from core.cappuccino.forward import check_layouts

    float_conv = forward._conv_map_major
    monkeypatch.setattr(forward, "_conv_map_major",
                        lambda *a: (float_conv(*a) * np.float32(1 + 1e-5)).astype(np.float32))

    m = networks.load("resnet18", 3, resolution=32, divisor=16, folder=tmp_path)
    eligible = inexact.calibrate_int8(m, ActivationCache(m, m.x_val))
    assert len(eligible) == len(m.conv_ops) - 1                # all but the first (it reads the image)
    chk = check_layouts(m, m.x_val, 16, {n: INT8 for n in eligible})
    assert chk.ok, chk.max_abs_diff
    assert all(chk.max_abs_diff[n] == 0.0 for n in eligible)


def test_greedy_search_takes_int8_first_within_the_budget(tmp_path):
    """More than five layers: the greedy pass tries int8 first on every admitted layer."""
    from core.cappuccino import networks

    m = networks.load("resnet18", 3, resolution=32, divisor=16, folder=tmp_path)
    items = list(search_modes(m, 50.0, int8=True))
    choice = items[-1]
    assert isinstance(choice, ModeChoice) and not choice.all_precise_fallback
    greedy = [c for c in items[:-1] if not isinstance(c, ModeChoice) and c.stage == "greedy"]
    assert greedy and all(c.drop <= 50.0 for c in greedy if c.within_budget)
    assert sum(mode == INT8 for mode in choice.modes.values()) >= 1
    assert choice.modes[m.conv_ops[0].name] != INT8
