"""Program files (core.scamp5.program_file): one writer and one reader for the header every tool uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import InputError
from core.simulate import sources
from core.scamp5.isa import register_names
from core.scamp5.program import parse_program
from core.scamp5.program_file import ProgramHeader, read_header, read_program, write_program

REPO = Path(__file__).resolve().parents[1]
REGS = register_names(6)
PROGRAM = parse_program("movx(B, A, east)\nadd(C, A, B)\nneg(D, C)\n", REGS)


def test_write_then_read_round_trips_a_multi_kernel_program() -> None:
    header = ProgramHeader(input_registers=["A"], output_registers=["C", "D"], kernel_names=["my kernel", "neg"],
                           comments=["two kernels", "found by hand"])
    text = write_program(PROGRAM, header)
    program, back = read_program(text, REGS)
    assert program == PROGRAM and back == header
    res = sources.from_text(text, REGS, "pasted")           # the simulator's reader agrees
    assert res.program == PROGRAM and res.input_register == "A" and res.output_registers == ["C", "D"]


def test_the_published_program_files_read_with_their_registers() -> None:
    text = (REPO / "assets/programs/analognet2_cain_table2.txt").read_text()
    program, header = read_program(text, REGS)
    assert len(program) == 21 and header.input_registers == ["A"] and header.output_registers == ["A", "B", "C"]
    assert header.comments[0].startswith("AnalogNet2")


def test_the_old_cain_export_header_is_read() -> None:
    """The Cain panel used to write `# outputs: SOBEL_X=C, ...`, which the simulator refused."""
    old = "# input: A\n# outputs: sobel_x=C, sobel_y=D\nmovx(B, A, east)\nadd(C, A, B)\nneg(D, C)\n"
    h = read_header(old)
    assert h.output_registers == ["C", "D"] and h.kernel_names == ["sobel_x", "sobel_y"]
    assert sources.from_text(old, REGS, "old export").output_registers == ["C", "D"]


@pytest.mark.parametrize("text, where, message", [
    ("# outputs: C Q\nneg(C, A)\n", "output registers", "'Q' is not one of"),
    ("# input: Z\nneg(C, A)\n", "input register", "'Z' is not one of"),
    ("# outputs: C\n# kernels: a, b\nneg(C, A)\n", "kernels", "2 kernel names but 1 output"),
    ("neg(C, A)\nfrob(A)\n", "f.txt:line 2", "unknown instruction"),
])
def test_bad_headers_and_lines_say_where(text: str, where: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        read_program(text, REGS, "f.txt")
    assert message in err.value.message and where in err.value.where


def test_strings_and_numbered_lines_are_written_as_macros() -> None:
    text = write_program(["movx(B, A, east);", "add(C, A, B)"], ProgramHeader(output_registers=["C"]))
    assert text == "# outputs: C\nmovx(B, A, east);\nadd(C, A, B);\n"
