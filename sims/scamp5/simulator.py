"""Run a SCAMP-5 macro program on the bus-level pixel array, keeping the state after every macro.

`simulate` (and its stepwise form `iter_simulate`) is what the engine, the GUI and the tests call: it loads the image into the input
register, expands each macro into its bus operations (sims.scamp5.bus), executes them on the
array (sims.scamp5.array) and records a `StepRecord` per macro. Records share unchanged planes,
so keeping all of them costs only the planes each macro writes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Sequence

import numpy as np

from core.errors import InputError
from core.scamp5.isa import register_names
from core.scamp5.program import Instr
from sims.scamp5.array import PixelArray, Snapshot
from sims.scamp5.bus import BusOp, expand
from sims.scamp5.noise import NoiseModel


@dataclass
class StepRecord:
    """The array after macro `index` (index 0: before the first macro, `instr` None)."""

    index: int
    instr: Instr | None
    bus_ops: list[BusOp]
    state: Snapshot
    seconds: float = 0.0


@dataclass
class SimRun:
    """A whole run: the records, the array it ran on, and timings."""

    program: list[Instr]
    registers: tuple[str, ...]
    input_register: str
    noise: NoiseModel
    records: list[StepRecord] = field(default_factory=list)
    array: PixelArray | None = None

    @property
    def final(self) -> Snapshot:
        return self.records[-1].state

    def read_out(self, register: str, step: int | None = None) -> np.ndarray:
        """What reading `register` off the chip after macro `step` (default: the last) gives.

        The random part is seeded by (seed, step), so any step reads the same every time."""
        step = len(self.records) - 1 if step is None else step
        snap = self.records[step].state
        value = snap.values[register]
        if snap.sigma is None:
            return value
        planes = list(self.registers) + ["NEWS"]
        rng = np.random.default_rng([self.noise.seed, step, planes.index(register)])
        return value + snap.sigma[register] * rng.standard_normal(value.shape)

    def bus_steps(self) -> int:
        return sum(len(r.bus_ops) for r in self.records)


def iter_simulate(program: Sequence[Instr], image: np.ndarray | Mapping[str, np.ndarray], registers: int | Sequence[str] = 6,
                  input_register: str = "A", noise: NoiseModel | None = None) -> Iterator[tuple[SimRun, StepRecord]]:
    """Run `program` with `image` in `input_register` (or a mapping register -> plane for several
    preloaded registers), yielding (run, record) after the load and after each macro, so a caller
    can report progress and check for cancellation between macros."""
    regs = register_names(registers if isinstance(registers, int) else tuple(registers))
    if input_register not in regs:
        raise InputError(f"input register {input_register!r} is not one of {', '.join(regs)}", "input_register")
    noise = noise or NoiseModel()
    planes = dict(image) if isinstance(image, Mapping) else {input_register: image}
    for reg in planes:
        if reg not in regs:
            raise InputError(f"register {reg!r} is not one of {', '.join(regs)}", "inputs")
    array = PixelArray(tuple(next(iter(planes.values())).shape), regs, noise)
    for reg, plane in planes.items():
        array.load(reg, plane)
    run = SimRun(list(program), regs, input_register, noise, array=array)
    first = StepRecord(0, None, [], array.snapshot())
    run.records.append(first)
    yield run, first
    for i, ins in enumerate(program, start=1):
        t0 = time.perf_counter()
        ops = expand(ins.op, ins.args)
        try:
            for op in ops:
                array.execute(op)
        except InputError as exc:
            raise InputError(exc.message, f"step {i} ({ins})") from None
        rec = StepRecord(i, ins, ops, array.snapshot(), time.perf_counter() - t0)
        run.records.append(rec)
        yield run, rec


def simulate(program: Sequence[Instr], image: np.ndarray | Mapping[str, np.ndarray], registers: int | Sequence[str] = 6,
             input_register: str = "A", noise: NoiseModel | None = None) -> SimRun:
    """Run the whole program; the run keeps a record per macro."""
    run = None
    for run, _rec in iter_simulate(program, image, registers, input_register, noise):
        pass
    assert run is not None
    return run
