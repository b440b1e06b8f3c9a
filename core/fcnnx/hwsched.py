"""The multi-CNN hardware scheduler (MCNN-HS, section III-D): slots per subgraph from eq. (7) and
the configuration table the control unit reads at run time.

Time is cut into slots of one burst each; during a slot a single engine owns the memory port and
engines are served round-robin, each for its subgraph's number of consecutive slots. With
`slots(s)` slots out of a period of `sum(slots)` the engine receives slots(s)/#slotsTotal of the
bandwidth (eq. 7); a subgraph needs ceil(elements / (slots * burst * elements_per_beat)) rounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

BURST_LENGTH = 1024        # beats per burst (the paper's choice, > 90% measured efficiency on ZC706)
PORT_BITS = 64
WORD_BITS = 16
SLOT_RESOLUTION = 16       # slots that stand for the whole bandwidth when solving eq. 7


@dataclass(frozen=True)
class TableEntry:
    """One row of the configuration table."""

    engine: int
    subgraph: str
    elements: int             # words to read
    slots: int                # consecutive slots per round
    address: int              # off-chip byte address of the subgraph's data
    rounds: int               # round-robin periods needed to deliver all elements
    fraction: float           # share of the bandwidth while all listed subgraphs are active

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


def elements_per_beat(port_bits: int = PORT_BITS, word_bits: int = WORD_BITS) -> int:
    """Words packed into one beat of the memory port (4 Q8.8 words on a 64-bit port)."""
    return max(1, port_bits // word_bits)


def supplied_fractions(slots: Sequence[int]) -> list[float]:
    """Eq. (7) divided by B_mem: slots(s) / #slotsTotal."""
    total = sum(slots)
    return [s / total for s in slots]


def rounds_needed(elements: int, slots: int, burst: int = BURST_LENGTH, port_bits: int = PORT_BITS,
                  word_bits: int = WORD_BITS) -> int:
    per_round = slots * burst * elements_per_beat(port_bits, word_bits)
    return math.ceil(elements / per_round)


def slots_for(required_fraction: float, resolution: int = SLOT_RESOLUTION) -> int:
    """Eq. (7) solved for slots(s) with B(s) = b'(s): the bandwidth fraction in units of 1/resolution."""
    return max(1, round(required_fraction * resolution))


def configuration_table(engines: Sequence[int], names: Sequence[str], elements: Sequence[int], slots: Sequence[int],
                        burst: int = BURST_LENGTH, port_bits: int = PORT_BITS, word_bits: int = WORD_BITS,
                        word_bytes: int = 2, total_slots: int | None = None) -> list[TableEntry]:
    """The table (addresses laid out one after another). `fraction` is slots / #slotsTotal, with
    #slotsTotal the sum of the listed slots (subgraphs that run together) unless given."""
    fr = supplied_fractions(slots) if total_slots is None else [s / total_slots for s in slots]
    out, addr = [], 0
    for e, n, el, sl, f in zip(engines, names, elements, slots, fr):
        out.append(TableEntry(e, n, el, sl, addr, rounds_needed(el, sl, burst, port_bits, word_bits), f))
        addr += el * word_bytes
    return out
