"""A vectorised model of the SCAMP-5 pixel array at the level of analogue bus operations.

Every register is a whole (rows x cols) numpy plane, so one bus step is a handful of array
operations for all 65,536 PEs at once (SIMD, as on the chip).

Edge behaviour: the array is surrounded by virtual PEs whose registers all hold 0 and whose own
writes are lost. A neighbour read (XN/XE/XS/XW) past the edge therefore reads 0 and a neighbour
write past the edge is lost; a NEWS register whose writer would lie outside the array is written
with 0. Each single shift is thus a zero-padded shift, which is also the rule of the exact
reference interpreter (core.scamp5.interp.run_exact).

Besides the values, each register plane carries
- `sigma`: the accumulated analogue noise magnitude (see sims.scamp5.noise), and
- `valid`: whether the value equals what an unbounded array would hold. Values that travelled
  past the edge and back are lost on a finite array, so near the edges the result of a program
  can differ from the zero-padded convolution; `valid` marks the PEs where it cannot.

Planes are never modified in place: a write replaces the plane object, so a snapshot is a cheap
shallow copy of the plane dictionaries (the GUI keeps one per instruction for stepping back).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from core.errors import InputError
from sims.scamp5.bus import NEWS, OFFSET, BusOp
from sims.scamp5.noise import NoiseModel, gaussian_fields


def shift(plane: np.ndarray, dr: int, dc: int, fill: float | bool = 0) -> np.ndarray:
    """out[r, c] = plane[r + dr, c + dc], `fill` where that lies outside the array."""
    rows, cols = plane.shape
    out = np.full_like(plane, fill)
    if abs(dr) >= rows or abs(dc) >= cols:
        return out
    src_r = slice(max(dr, 0), rows + min(dr, 0))
    dst_r = slice(max(-dr, 0), rows + min(-dr, 0))
    src_c = slice(max(dc, 0), cols + min(dc, 0))
    dst_c = slice(max(-dc, 0), cols + min(-dc, 0))
    out[dst_r, dst_c] = plane[src_r, src_c]
    return out


@dataclass
class Snapshot:
    """The array's registers at one moment (planes shared with the array, never mutated)."""

    values: dict[str, np.ndarray]
    sigma: dict[str, np.ndarray] | None
    valid: dict[str, np.ndarray]


class PixelArray:
    """Analogue registers (plus NEWS) of every PE, with the bus operations acting on them."""

    def __init__(self, shape: tuple[int, int], registers: Sequence[str], noise: NoiseModel | None = None,
                 mask: np.ndarray | None = None) -> None:
        if len(set(registers)) != len(registers) or NEWS in registers:
            raise InputError(f"register names must be distinct and not NEWS: {list(registers)}")
        self.shape = shape
        self.registers = tuple(registers)
        self.noise = noise or NoiseModel()
        self.physical = self.registers + (NEWS,)
        zero = np.zeros(shape)
        self.values: dict[str, np.ndarray] = {r: zero for r in self.physical}
        self.valid: dict[str, np.ndarray] = {r: np.ones(shape, bool) for r in self.physical}
        self.track_sigma = self.noise.accumulate
        # Per-op noise: one generator per array, so a run is reproducible from the seed.
        self.per_op_rng = (np.random.default_rng([self.noise.seed, 7919])
                           if self.noise.random and not self.noise.accumulate else None)
        self.sigma: dict[str, np.ndarray] = {r: zero for r in self.physical}
        # Fixed-pattern offsets: drawn once per chip seed, one plane per physical register.
        self.offsets: dict[str, np.ndarray] = {}
        if self.noise.fixed_pattern > 0:
            chip = np.random.default_rng(self.noise.chip_seed)
            self.offsets = {r: chip.normal(0.0, self.noise.fixed_pattern, shape) for r in self.physical}
        # PEs that execute bus steps (SCAMP-5's FLAG); None means all. Neither instruction set of the
        # code search uses masking, but the array model supports it.
        self.mask = mask
        self.bus_steps = 0

    # ------------------------------------------------------------------ state
    def load(self, register: str, image: np.ndarray) -> None:
        """Put the sensor image into a register (the program's input)."""
        if image.shape != self.shape:
            raise InputError(f"image is {image.shape}, array is {self.shape}")
        self.values[register] = np.asarray(image, float).copy()
        self.valid[register] = np.ones(self.shape, bool)
        if self.track_sigma:
            self.sigma[register] = self.noise.sensor_factor * np.abs(self.values[register])
        elif self.per_op_rng is not None and self.noise.sensor_factor > 0:
            v = self.values[register]
            self.values[register] = v + self.noise.sensor_factor * np.abs(v) * self.per_op_rng.standard_normal(self.shape)

    def snapshot(self) -> Snapshot:
        return Snapshot(dict(self.values), dict(self.sigma) if self.track_sigma else None, dict(self.valid))

    def restore(self, snap: Snapshot) -> None:
        self.values = dict(snap.values)
        self.valid = dict(snap.valid)
        if snap.sigma is not None:
            self.sigma = dict(snap.sigma)

    def read_out(self, register: str, rng: np.random.Generator | None) -> np.ndarray:
        """A register as read off the chip: its value plus the accumulated noise, drawn now."""
        value = self.values[register]
        if not self.track_sigma or rng is None:
            return value
        return value + self.sigma[register] * rng.standard_normal(self.shape)

    # ------------------------------------------------------------------ bus
    def _source(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if name in OFFSET:
            dr, dc = OFFSET[name]
            return (shift(self.values[NEWS], dr, dc), shift(self.sigma[NEWS], dr, dc),
                    shift(self.valid[NEWS], dr, dc, False))
        if name not in self.values:
            raise InputError(f"unknown register {name!r}; this array has {', '.join(self.physical)}")
        return self.values[name], self.sigma[name], self.valid[name]

    def execute(self, op: BusOp) -> None:
        """One bus step on every (unmasked) PE at once."""
        names = op.writes + op.reads
        if len(set(names)) != len(names):
            raise InputError(f"{op}: a register may appear only once in a bus operation")
        n = len(op.writes)
        per_op = self.per_op_rng is not None
        need_mag = self.track_sigma or per_op
        total = None
        magnitude = None
        sigma = np.zeros(self.shape) if self.track_sigma else None
        valid = None
        for name in op.reads:
            v, s, ok = self._source(name)
            total = v.copy() if total is None else total + v
            valid = ok if valid is None else valid & ok
            if need_mag:
                magnitude = np.abs(v) if magnitude is None else magnitude + np.abs(v)
            if self.track_sigma:
                sigma = sigma + s
        if total is None:
            total = np.zeros(self.shape)
            valid = np.ones(self.shape, bool)
            magnitude = np.zeros(self.shape) if need_mag else None
        assert valid is not None
        value = -total / n if n > 1 else -total
        if self.track_sigma:
            assert sigma is not None and magnitude is not None       # both kept when tracking sigma
            sigma = sigma + self.noise.write_factor * magnitude / n + self.noise.write_constant
        per_op_std = None
        draws = None
        if self.per_op_rng is not None:                                # == per_op
            assert magnitude is not None
            per_op_std = self.noise.write_factor * magnitude / n + self.noise.write_constant
            draws = gaussian_fields(self.per_op_rng, n, self.shape)
        for i, name in enumerate(op.writes):
            v = value if draws is None else value + per_op_std * draws[i]
            self._write(name, v, sigma, valid)
        self.bus_steps += 1

    def _write(self, name: str, value: np.ndarray, sigma: np.ndarray | None, valid: np.ndarray) -> None:
        dest = name
        if name in OFFSET:
            # Writing into the neighbour's NEWS: NEWS(p + e) := value(p); the writer of an edge PE's
            # NEWS may be a virtual PE outside, which drives 0.
            dr, dc = OFFSET[name]
            dest = NEWS
            value = shift(value, -dr, -dc)
            valid = shift(valid, -dr, -dc, False)
            if sigma is not None:
                sigma = shift(sigma, -dr, -dc)
        elif name not in self.values:
            raise InputError(f"unknown register {name!r}; this array has {', '.join(self.physical)}")
        if dest in self.offsets:
            value = value + self.offsets[dest]
        if self.noise.saturation > 0:
            value = np.clip(value, -self.noise.saturation, self.noise.saturation)
        if self.mask is not None:
            value = np.where(self.mask, value, self.values[dest])
            valid = np.where(self.mask, valid, self.valid[dest])
            if sigma is not None:
                sigma = np.where(self.mask, sigma, self.sigma[dest])
        self.values[dest] = value
        self.valid[dest] = valid
        if sigma is not None:
            self.sigma[dest] = sigma
