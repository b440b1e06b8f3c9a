"""The bus-level SCAMP-5 array: every macro against the exact interpreter, edges, NEWS side effects,
the paper's Table 2 AnalogNet2 program, and the analogue error model."""

from __future__ import annotations

import zlib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy.ndimage import correlate

from core.errors import InputError
from core.filters import preset
from core.scamp5.interp import run_exact, run_symbolic
from core.scamp5.isa import OPS
from core.scamp5.program import parse_program
from sims.scamp5 import analysis
from sims.scamp5.array import PixelArray
from sims.scamp5.bus import BUS_STEPS, NEWS, BusOp, expand
from sims.scamp5.images import FULL_SCALE, load_input, to_values
from sims.scamp5.noise import NoiseModel
from sims.scamp5.simulator import simulate

REPO = Path(__file__).resolve().parents[1]
TABLE2_CAIN = REPO / "assets/programs/analognet2_cain_table2.txt"
TABLE2_AUKE = REPO / "assets/programs/analognet2_auke_table2.txt"
REGS = ("A", "B", "C", "D", "E", "F")


def _random_inputs(rng: np.random.Generator, n: int = 12) -> dict[str, np.ndarray]:
    return {r: rng.integers(-40, 200, (n, n)) for r in REGS}


def _example_args(spec) -> tuple[str, ...]:
    """Operands for one macro form: distinct registers, north/east directions."""
    regs = iter(["B", "C", "D", "E", "F", "A"])
    dirs = iter(["north", "east"])
    return tuple(next(dirs) if role == "dir" else next(regs) for role in spec.roles)


ALIASED = ["movx(A, A, east)", "add(A, A, B)", "add(B, A, B)", "addx(A, A, B, south)",
           "sub(A, A, B)", "subx(A, A, west, B)", "sub2x(A, A, south, west, B)", "mov2x(A, A, west, west)",
           "add2x(B, A, B, north, east)", "add(C, A, B, C)", "mov(A, A)"]


@pytest.mark.parametrize("text", [f"{s.name}({', '.join(_example_args(s))})" for s in OPS] + ALIASED)
def test_every_macro_equals_the_exact_interpreter(text: str) -> None:
    program = parse_program(text)
    rng = np.random.default_rng(zlib.crc32(text.encode()))
    inputs = _random_inputs(rng)
    run = simulate(program, {r: v.astype(float) for r, v in inputs.items()})
    exact = run_exact(program, inputs)
    defined = [r for r in REGS if exact.registers[r] is not None]
    assert defined, text
    for r in defined:
        assert np.array_equal(run.final.values[r], exact.as_float(r)), (text, r)


def test_bus_step_counts_follow_the_instruction_table() -> None:
    for spec in OPS:
        ops = expand(spec.name, _example_args(spec))
        assert len(ops) == spec.bus_steps == BUS_STEPS[(spec.name, spec.arity)], spec.key


def test_news_is_overwritten_with_inverted_values() -> None:
    rng = np.random.default_rng(1)
    b, c = rng.random((8, 8)), rng.random((8, 8))
    run = simulate(parse_program("add(A, B, C)"), {"B": b, "C": c})
    assert np.array_equal(run.final.values[NEWS], -(b + c))       # the paper's bus(NEWS, B, C)
    assert np.array_equal(run.final.values["A"], b + c)
    run = simulate(parse_program("sub(A, B, C)"), {"B": b, "C": c})
    assert np.array_equal(run.final.values[NEWS], -b)
    run = simulate(parse_program("divq(A, B)"), {"B": b})
    assert np.array_equal(run.final.values[NEWS], -b / 2)
    assert [str(op) for op in run.records[1].bus_ops] == ["bus2(A, NEWS, B)", "bus(A, NEWS)"]


def test_mov2x_uses_the_neighbour_registers_like_the_paper() -> None:
    # Paper, section 2: mov2x(A, B, north, east) is bus(XS, B); bus(A, XE).
    assert [str(op) for op in expand("mov2x", ("A", "B", "north", "east"))] == ["bus(XS, B)", "bus(A, XE)"]


def test_a_register_may_appear_once_per_bus_operation() -> None:
    arr = PixelArray((4, 4), REGS)
    with pytest.raises(InputError, match="only once"):
        arr.execute(BusOp(("NEWS",), ("A", "A")))


def test_edges_read_zero_and_lose_what_leaves_the_array() -> None:
    img = np.arange(1.0, 26.0).reshape(5, 5)
    run = simulate(parse_program("movx(B, A, east)\nmovx(C, B, west)\nmov2x(D, A, north, east)"), img)
    b = run.final.values["B"]
    assert np.array_equal(b[:, :4], img[:, 1:]) and np.all(b[:, 4] == 0)
    c = run.final.values["C"]
    assert np.array_equal(c[:, 1:], img[:, 1:]) and np.all(c[:, 0] == 0)   # column 0 went off the edge
    assert not run.final.valid["C"][:, 0].any() and run.final.valid["C"][:, 1:].all()
    d = run.final.values["D"]
    assert np.array_equal(d[1:, :4], img[:4, 1:]) and np.all(d[0, :] == 0) and np.all(d[:, 4] == 0)


def test_masked_pes_keep_their_registers() -> None:
    mask = np.zeros((4, 4), bool)
    mask[:, :2] = True
    arr = PixelArray((4, 4), REGS, mask=mask)
    arr.load("A", np.ones((4, 4)))
    for op in expand("neg", ("B", "A")):
        arr.execute(op)
    assert np.all(arr.values["B"][:, :2] == -1) and np.all(arr.values["B"][:, 2:] == 0)


# ------------------------------------------------------------------ the paper's Table 2 program
def _table2_run(levels: np.ndarray, noise: NoiseModel | None = None):
    program = parse_program(TABLE2_CAIN.read_text())
    return program, simulate(program, to_values(levels), noise=noise)


def test_table2_cain_program_is_21_instructions_and_computes_analognet2() -> None:
    levels, _ = load_input("pattern:noise", 48, seed=4)
    program, run = _table2_run(levels)
    assert len(program) == 21                                   # Cain's Table 1/2 figure
    values = to_values(levels)
    exact = run_exact(program, levels.astype(np.int64))
    an2 = preset("analognet2-tool")
    for reg, kernel in zip("ABC", an2.kernels):
        out = run.final.values[reg]
        assert np.array_equal(out * FULL_SCALE, exact.as_float(reg)), reg           # bus level == interpreter
        ref = correlate(values, np.array(kernel.values) / an2.denominator, mode="constant")
        inner = run.final.valid[reg]
        assert inner[6:-6, 6:-6].all()
        assert np.array_equal(out[inner], ref[inner]), reg                          # == numpy/scipy convolution
    # Equation 1's second kernel (-1 top right) differs from what the program computes.
    k2 = np.array(preset("analognet2").kernels[1].values) / 4
    ref2 = correlate(values, k2, mode="constant")
    assert np.abs(run.final.values["B"] - ref2)[run.final.valid["B"]].max() > 0.1


def test_table2_goals_from_an_impulse_match_the_kernels() -> None:
    """Independent of the interpreter: the array's impulse response is each output's kernel."""
    n, c = 15, 7
    img = np.zeros((n, n))
    img[c, c] = 1.0
    program = parse_program(TABLE2_CAIN.read_text())
    run = simulate(program, img)
    an2 = preset("analognet2-tool")
    for reg, kernel in zip("ABC", an2.kernels):
        response = run.final.values[reg][c - 1:c + 2, c - 1:c + 2][::-1, ::-1]   # value(p) = K[c - p]
        assert np.array_equal(response * 4, np.array(kernel.values)), reg
        goal = run_symbolic(program)[-1][reg]
        assert np.array_equal(analysis.kernel_matrix(goal, 1) * 4, np.array(kernel.values))


def test_table2_auke_program_is_rejected_with_its_line() -> None:
    with pytest.raises(InputError) as err:
        parse_program(TABLE2_AUKE.read_text())
    assert err.value.where == "line 6" and "divq" in err.value.message


def test_every_intermediate_register_matches_its_goal_when_exact() -> None:
    levels, _ = load_input("pattern:rings", 40)
    program, run = _table2_run(levels)
    steps = analysis.step_errors(run, to_values(levels), run_symbolic(program))
    assert len(steps) == 22 and all(v == 0.0 for row in steps for v in row.values())
    assert sum(len(row) for row in steps) > 60


# ------------------------------------------------------------------ analogue error model
@pytest.mark.parametrize("mode", ["emulator", "per-op"])
def test_noise_is_reproducible_from_its_seed(mode: str) -> None:
    levels, _ = load_input("sample", 32)
    a = _table2_run(levels, NoiseModel.analogue(0.005, seed=3, mode=mode))[1].read_out("B")
    b = _table2_run(levels, NoiseModel.analogue(0.005, seed=3, mode=mode))[1].read_out("B")
    c = _table2_run(levels, NoiseModel.analogue(0.005, seed=4, mode=mode))[1].read_out("B")
    exact = _table2_run(levels)[1].final.values["B"]
    assert np.array_equal(a, b) and not np.array_equal(a, c) and not np.array_equal(a, exact)
    run = _table2_run(levels, NoiseModel.analogue(0.005, seed=3, mode=mode))[1]
    assert run.read_out("NEWS", 5).shape == exact.shape


@pytest.mark.parametrize("mode", ["emulator", "per-op"])
def test_error_grows_with_program_length(mode: str) -> None:
    """The same result (A unchanged) computed with more macros carries more noise."""
    levels, _ = load_input("sample", 48)
    values = to_values(levels)
    noise = NoiseModel(write_factor=0.01, seed=2, mode=mode)
    rms = []
    for k in (1, 4, 16):
        program = parse_program("\n".join(["neg(B, A)", "neg(A, B)"] * k))
        run = simulate(program, values, noise=noise)
        err = run.read_out("A") - values
        rms.append(float(np.sqrt(np.mean(err ** 2))))
    assert rms[0] < rms[1] < rms[2]


def test_fixed_pattern_depends_on_the_chip_not_the_seed_and_saturation_clips() -> None:
    levels, _ = load_input("gradient", 16)
    a = _table2_run(levels, NoiseModel(fixed_pattern=0.01, seed=1))[1].final.values["C"]
    b = _table2_run(levels, NoiseModel(fixed_pattern=0.01, seed=9))[1].final.values["C"]
    c = _table2_run(levels, NoiseModel(fixed_pattern=0.01, chip_seed=6))[1].final.values["C"]
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    run = simulate(parse_program("add(B, A, A2)".replace("A2", "C")), {"A": np.full((4, 4), 0.75),
                                                                      "C": np.full((4, 4), 0.75)},
                   noise=NoiseModel(saturation=1.0))
    assert np.all(run.final.values["B"] == 1.0) and np.all(run.final.values[NEWS] == -1.0)


def test_exact_kernel_from_matrix_keeps_fractions() -> None:
    k = analysis.kernel_from_matrix([[1, 2, 1], [2, 4, 2], [1, 2, 1]], 16)
    assert dict(k.terms)[(0, 0, 0)] == Fraction(1, 4)
    assert analysis.kernel_matrix(k).sum() == 1.0
