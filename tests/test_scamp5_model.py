"""The SCAMP-5 macro model: instruction table, parser and exact interpreter."""

from fractions import Fraction

import numpy as np
import pytest
from scipy.ndimage import correlate

from core.errors import InputError
from core.scamp5.interp import ExecutionError, SymKernel, run_exact, run_symbolic, shift_array
from core.scamp5.isa import INSTRUCTION_SETS, OPS, OP_TABLE
from core.scamp5.program import Instr, format_program, parse_program

# Cain's Table 2 program for AnalogNet2 (input A; outputs A, B, C), verbatim with its line numbers.
CAIN_TABLE2 = """1diva(A,D,E); 2div(D,E,C,A); 3movx(E,D,west); 4movx(C,E,north); 5neg(F,E);
6subx(B,F,east,A); 7addx(E,E,D,south); 8add2x(D,F,D,north,north); 9sub2x(F,D,south,south,C);
10add2x(D,C,D,east,south); 11add(E,E,D); 12movx(D,A,north); 13add2x(A,C,A,east,east);
14movx(C,B,east); 15add(D,F,D); 16add2x(F,F,E,east,south); 17movx(E,B,south);
18addx(A,B,A,south); 19addx(A,B,A,west); 20add2x(B,F,B,north,west); 21add(C,D,C,E);"""
AN2_TOOL = [[[0, 0, 0], [-3, 1, 0], [-3, 0, 2]], [[-4, -1, 1], [-1, 2, 0], [1, 1, 0]],
            [[-1, 2, 0], [-1, 1, -3], [0, -3, 0]]]


def test_table_matches_the_instruction_document():
    assert OP_TABLE["res/1"].bus_steps == 2 and OP_TABLE["res/2"].bus_steps == 3
    assert all(OP_TABLE[k].bus_steps == 5 for k in ("div/3", "div/4", "diva/3"))
    assert OP_TABLE["sub/3"].distinct == ((0, 2),)
    assert OP_TABLE["add/4"].distinct == ((1, 2), (1, 3), (2, 3))
    assert "divq/2" not in INSTRUCTION_SETS["all"].ops and len(INSTRUCTION_SETS["all"].ops) == len(OPS) - 1
    basic = INSTRUCTION_SETS["basic"].ops
    assert not basic & {"mov2x/4", "add/4", "addx/4", "add2x/5", "subx/4", "sub2x/5"}


def test_paper_table2_program_computes_analognet2_symbolically():
    prog = parse_program(CAIN_TABLE2)
    assert len(prog) == 21
    final = run_symbolic(prog)[-1]
    for reg, kernel in zip("ABC", AN2_TOOL):
        assert final[reg] == SymKernel.from_matrix(kernel, Fraction(1, 4))


def test_exact_run_matches_scipy_correlation_in_the_interior():
    prog = parse_program(CAIN_TABLE2)
    img = np.random.default_rng(1).integers(-255, 256, (20, 24))
    out = run_exact(prog, img)
    for reg, kernel in zip("ABC", AN2_TOOL):
        ref = correlate(img.astype(np.int64), np.array(kernel, dtype=np.int64), mode="constant", cval=0)
        got = out.value(reg) * 4
        assert np.all(got[4:-4, 4:-4] == ref[4:-4, 4:-4])
        assert np.array_equal(out.as_float(reg)[4:-4, 4:-4] * 4, ref[4:-4, 4:-4])


def test_shift_direction_and_zero_edges():
    a = np.arange(9).reshape(3, 3)
    north = shift_array(a, 0, 1)          # y(p) = x(p + north): the row above
    assert north.tolist() == [[0, 0, 0], [0, 1, 2], [3, 4, 5]]
    east = shift_array(a, 1, 0)
    assert east.tolist() == [[1, 2, 0], [4, 5, 0], [7, 8, 0]]
    assert not shift_array(a, 5, 0).any()
    prog = parse_program("movx(B, A, east)\nmovx(B, B, west)")
    out = run_exact(prog, a).value("B")
    assert [[int(v) for v in r] for r in out] == [[0, 1, 2], [0, 4, 5], [0, 7, 8]]


def test_halving_is_exact_and_fractional_inputs_work():
    prog = parse_program("div(B, C, D, A); diva(B, C, D); divq(C, B)")
    out = run_exact(prog, np.array([[1, 3], [5, 7]]))
    assert out.value("C")[0, 1] == Fraction(3, 8)
    out_f = run_exact(prog, np.array([[0.5, 3], [5, 7]]))
    assert out_f.value("C")[0, 0] == Fraction(1, 16)


def test_scaled_equals_compares_exactly():
    img = np.random.default_rng(2).integers(0, 256, (5, 5))
    out = run_exact(parse_program("mov(B, A); add(C, A, B); div(D, E, F, C)"), img)
    assert out.scaled_equals("D", img, 1)
    assert not out.scaled_equals("D", img + np.eye(5, dtype=int), 1)
    assert out.scaled_equals("C", 4 * img, 2)


def test_scratch_registers_become_undefined():
    with pytest.raises(ExecutionError, match="step 2"):
        run_exact(parse_program("div(B, C, D, A); add(E, B, C)"), np.ones((3, 3), dtype=int))
    with pytest.raises(ExecutionError, match="reads register B"):
        run_symbolic(parse_program("mov(C, B)"))


def test_parser_syntax_and_round_trip():
    text = "add(A, B, C); // sum\n  # comment only\n3 movx(b,a,NORTH);mov(C,A,south)"
    prog = parse_program(text)
    assert prog == [Instr("add", ("A", "B", "C")), Instr("movx", ("B", "A", "north")),
                    Instr("movx", ("C", "A", "south"))]
    assert parse_program(format_program(prog)) == prog
    assert parse_program("add(Q, R, A)", registers=18)[0].args == ("Q", "R", "A")


@pytest.mark.parametrize("text,message", [
    ("add(A,B,C)\nfoo(A)", "line 2.*unknown instruction 'foo'"),
    ("add(A,B)", "line 1.*add takes 3 or 4 operands, got 2"),
    ("add(A,B,B)", "operands 2 and 3 must be different"),
    ("sub(A,B,A)", "operands 1 and 3 must be different"),
    ("neg(A,A)", "different registers"),
    ("div(A,B,A)", "different registers"),
    ("movx(A,B,up)", "must be a direction"),
    ("mov2x(A,B,north,west)", "clockwise"),
    ("mov(G,A)", "must be a register"),
    ("\n\nadd A B C", "line 3.*expected a macro call"),
    ("add(A,,B)", "empty operand"),
])
def test_parser_errors_name_the_line(text, message):
    with pytest.raises(InputError, match=message):
        parse_program(text)


def test_mov2x_rule_accepts_same_and_clockwise():
    parse_program("mov2x(A,B,north,north); mov2x(A,B,north,east); mov2x(A,B,west,north)")
