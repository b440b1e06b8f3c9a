"""One cost record for a workload on a target (issue 50): per layer and in total, the MACs, the time,
the off-chip bytes and the energy, each marked measured (run here) or modelled, and beside each its
limit on that target, the least any schedule could reach there:

* off-chip bytes >= the off-chip lower bound (the bound engine's proven one, in bytes);
* time >= max(MACs / peak MAC rate, off-chip lower bound / bandwidth);
* energy >= the off-chip lower bound's DRAM energy + the MACs' energy (where the target has an
  energy model; otherwise energy and its limit are None).

A layer the target cannot run at all (SCAMP-5 beyond its first layer) carries a `reason` in words
and no figures; the totals are then those of the layers that run. A target with no off-chip path
(bandwidth 0: SCAMP-5 senses its input and keeps its results in the array) needs an off-chip lower
bound of 0.

The record verifies itself (`problems`, `check`): every figure at or above its limit, every limit the
one its target's ceilings give, and the totals the sums of the (applicable) layers. `from_json` reads a record
back and checks it, so a hand-edited or corrupt record is refused naming the figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from core.errors import InputError
from core.results import optional_key, read_value, to_plain

How = Literal["measured", "modelled", "mixed"]        # "mixed": a total of measured and modelled layers
REL_TOL = 1e-9                                       # figures and limits are sums of floats


@dataclass(kw_only=True)
class Figure:
    """One cost and its limit on the target."""

    value: float | None           # None: the target has no model of it
    limit: float | None           # None: no limit is known (never when value is known and limited)
    how: How

    @property
    def of_limit(self) -> float | None:
        """value / limit: 1.0 at the limit; None without both or with a zero limit."""
        if self.value is None or not self.limit:
            return None
        return self.value / self.limit


@dataclass(kw_only=True)
class Ceilings:
    """What a target's limits are made of."""

    peak_macs_per_s: float
    bandwidth_bytes_per_s: float          # 0: no off-chip path (then every off-chip lower bound is 0)
    mac_j: float | None = None            # one MAC's energy; None: no energy model
    dram_j_per_byte: float | None = None  # the least energy of one off-chip byte (read or written)

    @property
    def has_energy(self) -> bool:
        return self.mac_j is not None and self.dram_j_per_byte is not None

    def time_limit(self, macs: float, offchip_lower_bytes: float) -> float:
        stream = offchip_lower_bytes / self.bandwidth_bytes_per_s if offchip_lower_bytes else 0.0
        return max(macs / self.peak_macs_per_s, stream)

    def energy_limit(self, macs: float, offchip_lower_bytes: float) -> float | None:
        if self.mac_j is None or self.dram_j_per_byte is None:
            return None
        return offchip_lower_bytes * self.dram_j_per_byte + macs * self.mac_j


@dataclass(kw_only=True)
class LayerCost:
    name: str
    macs: int
    time_s: Figure
    offchip_bytes: Figure         # its limit is the off-chip lower bound in bytes
    energy_j: Figure
    # why the target cannot run this layer, in words (then every figure is None and the totals leave
    # the layer out); absent for a layer it runs
    reason: str | None = optional_key()


def not_applicable(name: str, macs: int, reason: str) -> LayerCost:
    """A layer the target cannot run, and why."""
    def none() -> Figure:
        return Figure(value=None, limit=None, how="modelled")
    return LayerCost(name=name, macs=macs, time_s=none(), offchip_bytes=none(), energy_j=none(), reason=reason)


def layer_cost(name: str, macs: int, ceilings: Ceilings, offchip_lower_bytes: float, *, time_s: float,
               offchip_bytes: float, energy_j: float | None, how: How = "modelled",
               time_how: How | None = None) -> LayerCost:
    """A layer's costs with their limits on the target (`time_how`: where the time alone is measured)."""
    if energy_j is not None and not ceilings.has_energy:
        raise ValueError("an energy without an energy model to limit it")
    return LayerCost(
        name=name, macs=macs,
        time_s=Figure(value=time_s, limit=ceilings.time_limit(macs, offchip_lower_bytes), how=time_how or how),
        offchip_bytes=Figure(value=offchip_bytes, limit=offchip_lower_bytes, how=how),
        energy_j=Figure(value=energy_j, limit=ceilings.energy_limit(macs, offchip_lower_bytes), how=how))


def _sum(xs: list[float | None]) -> float | None:
    return None if any(x is None for x in xs) else math.fsum(x for x in xs if x is not None)


def _how(hows: list[How]) -> How:
    return hows[0] if hows and all(h == hows[0] for h in hows) else "mixed"


def _total_figure(figs: list[Figure]) -> Figure:
    if not figs:                  # no layer runs on the target: no total
        return Figure(value=None, limit=None, how="modelled")
    return Figure(value=_sum([f.value for f in figs]), limit=_sum([f.limit for f in figs]),
                  how=_how([f.how for f in figs]))


FIGURES = ("time_s", "offchip_bytes", "energy_j")


@dataclass(kw_only=True)
class CostRecord:
    """A workload's costs on one target, layer by layer, with the totals."""

    target: str                   # the target in words ("dataflow accelerator, 16x16 PEs at 200 MHz, ...")
    ceilings: Ceilings
    layers: list[LayerCost]
    total: LayerCost

    @staticmethod
    def of(target: str, ceilings: Ceilings, layers: list[LayerCost]) -> "CostRecord":
        """The record of these layers, with their totals (sums of the layers)."""
        runs = [l for l in layers if l.reason is None]
        def total_of(key: str) -> Figure:
            return _total_figure([getattr(l, key) for l in runs])
        total = LayerCost(name="total", macs=sum(l.macs for l in runs), time_s=total_of("time_s"),
                          offchip_bytes=total_of("offchip_bytes"), energy_j=total_of("energy_j"))
        return CostRecord(target=target, ceilings=ceilings, layers=list(layers), total=total)

    def problems(self) -> list[tuple[str, str]]:
        """(field path, what is wrong) for every figure below its limit, limit not the one the ceilings
        give, or total not the sum of its layers; [] for a sound record."""
        out: list[tuple[str, str]] = []
        c = self.ceilings
        if not (c.peak_macs_per_s > 0 and c.bandwidth_bytes_per_s >= 0):
            out.append(("ceilings", "the peak MAC rate must be positive and the bandwidth not negative"))
            return out
        for i, l in enumerate(self.layers):
            where = f"layers[{i}]"
            if l.reason is not None:
                if any(getattr(l, k).value is not None or getattr(l, k).limit is not None for k in FIGURES):
                    out.append((where, "a layer the target cannot run has no figures"))
                continue
            lower = l.offchip_bytes.limit
            if lower is not None and lower > 0 and not c.bandwidth_bytes_per_s:
                out.append((f"{where}.offchip_bytes.limit", "off-chip traffic on a target without an off-chip path"))
                continue
            if lower is None:
                out.append((f"{where}.offchip_bytes.limit", "no off-chip lower bound"))
                continue
            expect = {"time_s": c.time_limit(l.macs, lower), "offchip_bytes": lower,
                      "energy_j": c.energy_limit(l.macs, lower)}
            for key in FIGURES:
                f: Figure = getattr(l, key)
                if not _same(f.limit, expect[key]):
                    out.append((f"{where}.{key}.limit", f"{f.limit} is not the target's limit {expect[key]}"))
                if key == "energy_j" and (f.value is None) != (f.limit is None):
                    out.append((f"{where}.{key}", "an energy needs the target's energy model, and the model one"))
                if f.value is not None and f.limit is not None and f.value < f.limit * (1 - REL_TOL):
                    out.append((f"{where}.{key}.value", f"{f.value:.6g} is below its limit {f.limit:.6g}"))
        t = self.total
        runs = [l for l in self.layers if l.reason is None]
        if t.macs != sum(l.macs for l in runs):
            out.append(("total.macs", "not the sum of the layers' MACs"))
        for key in FIGURES:
            want = _total_figure([getattr(l, key) for l in runs])
            got: Figure = getattr(t, key)
            if not (_same(got.value, want.value) and _same(got.limit, want.limit) and got.how == want.how):
                out.append((f"total.{key}", "not the sum of the layers'"))
        return out

    def check(self, path: str = "cost") -> "CostRecord":
        """Raise InputError naming the first unsound figure; the record itself when sound."""
        found = self.problems()
        if found:
            where, what = found[0]
            raise InputError(what, f"{path}.{where}")
        return self

    def to_json(self) -> dict[str, Any]:
        plain: dict[str, Any] = to_plain(self)
        return plain

    @staticmethod
    def from_json(d: Any, path: str = "cost") -> "CostRecord":
        record: CostRecord = read_value(CostRecord, d, path)
        return record.check(path)


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-300)
