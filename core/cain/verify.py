"""Verification of every plan before it is reported.

The generated macro program is run by the exact reference interpreter (core.scamp5.interp):
symbolically (each output register must hold exactly the approximated kernel) and on random
integer images (each output must equal the direct correlation with the approximated kernel,
away from the border the zero-edge rule affects).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from core.cain import goals as gl
from core.cain.goals import Goal
from core.scamp5.interp import SymKernel, run_exact, run_symbolic, shift_array
from core.scamp5.program import Instr


def goal_kernel(g: Goal, d: int) -> SymKernel:
    return SymKernel.from_dict({(x, y, z): Fraction(c, 2 ** d) for x, y, z, c in gl.atoms(g)})


def _margin(program: list[Instr]) -> int:
    """How far values can have travelled: one pixel per direction operand."""
    return sum(1 for ins in program for a in ins.args if a in ("north", "east", "south", "west"))


def verify(program: list[Instr], targets: list[Goal], d: int, inputs: dict[int, str], outputs: list[str],
           registers: tuple[str, ...], images: int = 2, seed: int = 0) -> tuple[bool, str]:
    """True when the program reproduces every approximated kernel exactly."""
    want = [goal_kernel(g, d) for g in targets]
    try:
        final = run_symbolic(program, {r: c for c, r in inputs.items()}, registers)[-1]
    except Exception as exc:  # an unrunnable program is a failed verification
        return False, f"symbolic run failed: {exc}"
    for k, (w, r) in enumerate(zip(want, outputs)):
        if final.get(r) != w:
            return False, f"kernel {k}: register {r} holds {final.get(r)}, expected {w}"
    m = _margin(program) + max(w.radius() for w in want)
    size = 2 * m + 12
    inner = (slice(m, size - m), slice(m, size - m))
    rng = np.random.default_rng(seed)
    for _ in range(images):
        imgs = {r: rng.integers(-255, 256, (size, size)) for c, r in inputs.items()}
        try:
            res = run_exact(program, imgs, registers)
        except Exception as exc:
            return False, f"image run failed: {exc}"
        for k, (w, r) in enumerate(zip(want, outputs)):
            got = res.registers.get(r)
            if got is None:
                return False, f"kernel {k}: register {r} holds no value at the end of the program"
            # got / res.scale must equal the direct correlation, i.e. got * 2**d == (the correlation
            # with the integer numerators of the kernel) * res.scale, compared as exact integers
            # (Python ints: 30-100x faster than the Fractions this was checked with, which made
            # verifying one program take 1-2 s, past the end of a search's budget)
            ref = np.zeros((size, size), dtype=object)
            for ch, reg in inputs.items():
                img = imgs[reg].astype(object)
                for (x, y, z), coef in w.terms:
                    if z == ch:
                        num = coef * 2 ** d
                        assert num.denominator == 1, "goal kernels are integers over 2**d"
                        ref = ref + shift_array(img, x, y) * int(num)
            if not np.all(got[inner].astype(object) * 2 ** d == ref[inner] * res.scale):
                return False, f"kernel {k}: image result differs from the direct correlation"
    return True, "symbolic and random-image checks passed"
