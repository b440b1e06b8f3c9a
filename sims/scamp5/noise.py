"""The analogue error model of the simulated pixel array.

Modelled on the published Cain emulator: every bus write adds noise proportional to the magnitude
of what it moves; a register carries the accumulated noise magnitude (a standard deviation that
adds up through the operations that build its value) and the noise is drawn, as seeded Gaussian
noise, when the register is read out. On top of that, a fixed-pattern offset (one value per PE and
register, drawn once per chip seed) is added at every write, and values saturate at a limit.
All defaults are documented in docs/simulate.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from core.errors import InputError

# Defaults of the analogue model when noise is switched on with only a sigma.
DEFAULT_SIGMA = 0.005          # Cain emulator's write-noise factor
DEFAULT_FIXED_PATTERN = 0.001  # std of the per-PE offset, in full-scale units
DEFAULT_SATURATION = 2.0       # |value| limit, in full-scale units (a pixel is in [0, 1))
MODES = ("emulator", "per-op")
# The physically meaningful mode is the default (issue 49): at write factor 0.01 the Scharr pair's
# RMS error is 0.022 per-op, and 28 in the emulator's linear sum, an upper bound that counts
# correlated noise which the arithmetic later cancels.
DEFAULT_MODE = "per-op"
UPPER_BOUND_MODE = "emulator"
MODE_LABELS = {"per-op": "per operation", "emulator": "emulator's upper bound"}


def mode_note(mode: str) -> str:
    """What a noise mode's figures mean, in one sentence for people."""
    if mode == UPPER_BOUND_MODE:
        return ("emulator's upper bound: as the published Cain emulator, each register's noise std is summed "
                "linearly over the operations that built it and drawn on read-out, so noise the arithmetic "
                "cancels is still counted; the errors are an upper bound, not an estimate (per-op is)")
    return "per operation: noise drawn at every bus write and carried through the arithmetic (the physical estimate)"


@dataclass(frozen=True)
class NoiseModel:
    """Magnitudes of the analogue errors; all zero means an exact simulation."""

    write_factor: float = 0.0       # noise std added per bus write, times sum |moved values| / writers
    write_constant: float = 0.0     # noise std added per bus write regardless of value
    sensor_factor: float = 0.0      # noise std of reading the sensor, times the pixel value
    fixed_pattern: float = 0.0      # std of the per-PE, per-register offset added at each write
    saturation: float = 0.0         # |value| limit (0 = none)
    seed: int = 1                   # seed of the random noise
    chip_seed: int = 5              # seed of the fixed pattern (the "chip")
    # "emulator": as the published Cain emulator, a register carries an accumulated noise std
    #   (the linear sum over the operations that built it) and Gaussian noise is drawn on read-out;
    # "per-op": noise is drawn at every bus write and carried in the value through later operations,
    #   so correlated noise cancels where the arithmetic cancels it (e.g. div's correction steps).
    mode: str = DEFAULT_MODE

    @property
    def enabled(self) -> bool:
        return any(v > 0 for v in (self.write_factor, self.write_constant, self.sensor_factor,
                                   self.fixed_pattern, self.saturation))

    @property
    def random(self) -> bool:
        """True when reads draw random noise (so results depend on the seed)."""
        return any(v > 0 for v in (self.write_factor, self.write_constant, self.sensor_factor))

    @property
    def accumulate(self) -> bool:
        """True when registers carry a noise std that is drawn on read-out (the emulator mode)."""
        return self.random and self.mode == "emulator"

    @staticmethod
    def analogue(sigma: float = DEFAULT_SIGMA, seed: int = 1, fixed_pattern: float | None = None,
                 saturation: float | None = None, sensor_factor: float | None = None,
                 mode: str = DEFAULT_MODE) -> "NoiseModel":
        """The documented default model scaled by `sigma` (0 gives the exact simulation)."""
        if sigma <= 0:
            return NoiseModel(seed=seed, mode=mode)
        return NoiseModel(mode=mode, write_factor=sigma,
                          sensor_factor=sigma if sensor_factor is None else sensor_factor,
                          fixed_pattern=DEFAULT_FIXED_PATTERN if fixed_pattern is None else fixed_pattern,
                          saturation=DEFAULT_SATURATION if saturation is None else saturation,
                          seed=seed)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(d: dict[str, Any], where: str = "settings.noise") -> "NoiseModel":
        out: dict[str, Any] = {}
        for key, default in asdict(NoiseModel()).items():
            value = d.get(key, default)
            if key == "mode":
                if value not in MODES:
                    raise InputError(f"must be one of {', '.join(MODES)}, got {value!r}", f"{where}.mode")
                out[key] = value
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f"expected a number, got {value!r}", f"{where}.{key}")
            if key in ("seed", "chip_seed"):
                out[key] = int(value)
            else:
                if value < 0 or value != value:
                    raise InputError(f"must be >= 0, got {value}", f"{where}.{key}")
                out[key] = float(value)
        return NoiseModel(**out)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InputError(f"noise mode must be one of {', '.join(MODES)}, got {self.mode!r}", "noise.mode")


def gaussian_fields(rng: np.random.Generator, count: int, shape: tuple[int, int]) -> np.ndarray:
    """`count` fields of independent standard normal float32 values, by the Box-Muller transform:
    about 1.6x faster than numpy's ziggurat for whole-array fields, which is what keeps a per-op
    noisy division macro (eight writes) under 5 ms at 256x256."""
    n = count * shape[0] * shape[1]
    half = (n + 1) // 2
    u1 = rng.random(half, dtype=np.float32)
    u2 = rng.random(half, dtype=np.float32)
    radius = np.sqrt(np.float32(-2.0) * np.log1p(-u1))      # 1 - u1 is in (0, 1]: no log(0)
    angle = np.float32(2.0 * np.pi) * u2
    out = np.empty(2 * half, dtype=np.float32)
    np.multiply(radius, np.cos(angle), out=out[:half])
    np.multiply(radius, np.sin(angle), out=out[half:])
    return out[:n].reshape((count,) + tuple(shape))
