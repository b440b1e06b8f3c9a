"""The MCNN-HS configuration as the hardware holds it (section III-D): the whole cycle of the chosen
schedule, per engine, per repetition, per subgraph (start, slots, rounds, the bursts it moves), over
a real off-chip memory map; exported as JSON (what `sims.fcnnx_des.replay_table` replays) and as a C
header a hardware designer includes.

Why per repetition: the cycle holds rep(i) inferences of CNN i and each run of a subgraph has its own
slow-down, so the same subgraph may need 7 slots in one repetition and 8 in the next; one slot count
per subgraph (hwsched.configuration_table) cannot hold that.

Time base: the control unit counts beats of the memory port (a slot is BURST_LENGTH beats). Start
times are in beats rather than whole slots because a slot (8 KiB, 16 us at 0.5 GB/s) is too coarse
for small CNNs whose cycle lasts about a millisecond; the period is the schedule's, rounded up to a
whole beat.

Memory map: per CNN, one input buffer per repetition of the cycle, the weights of every subgraph,
one buffer per feature map between subgraphs (shared by the repetitions: an engine runs its
inferences one after another), one partial-sum buffer per input tile of a folded convolution, and
one output buffer per repetition. Every region starts on a burst boundary (burst bytes), so the
256-beat AXI4 transactions a 1024-beat slot is issued as never cross a 4 KiB boundary. Addresses
are byte offsets from the map's base (MCNN_HS_MEM_BASE in the header). A subgraph's transfers read
its input maps (a channel slice of the feature map for an input tile), the partial sums of the
previous tile, its weights when they are streamed, and write its output; together they are exactly
the traffic the schedule planned with (checked when the table is built).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

from core.fcnnx.hwsched import BURST_LENGTH, PORT_BITS, SLOT_RESOLUTION, WORD_BITS, rounds_needed, slots_for
from core.fcnnx.model import STREAMED, WORD_BYTES, EngineDesign, SubgraphLoad
from core.fcnnx.schedule import CAPACITY, Problem, Schedule

TABLE_FORMAT = "mcnn-hs-table"
TABLE_VERSION = 1


@dataclass(frozen=True)
class Region:
    """A buffer of the off-chip memory map."""

    name: str
    kind: str                 # input | weights | fmap | psum | output
    cnn: int
    address: int
    bytes: int
    streamed: bool = True     # weights: re-read by every run of the subgraph (False: loaded once at start)


@dataclass(frozen=True)
class Transfer:
    """One contiguous transfer of a subgraph run: bursts of `burst_bytes` from `address` on."""

    region: int
    address: int
    bytes: int
    bursts: int
    write: bool


@dataclass(frozen=True)
class Entry:
    """One run of a subgraph in the cycle: what the control unit needs, plus the engine's full-speed
    time (`latency_s`, read only by the replay)."""

    subgraph: int
    name: str
    start_beat: int
    end_beat: int             # the schedule's end of this run
    slots: int                # consecutive slots per round-robin turn (eq. 7)
    slowdown: float
    bytes: int
    rounds: int
    latency_s: float
    transfers: list[Transfer] = field(default_factory=list)


@dataclass
class _Layout:
    """Regions allocated one after another, each on a burst boundary."""

    align: int
    regions: list[Region] = field(default_factory=list)
    cursor: int = 0

    def add(self, name: str, kind: str, cnn: int, nbytes: int, streamed: bool = True) -> int:
        address = -(-self.cursor // self.align) * self.align
        self.regions.append(Region(name, kind, cnn, address, nbytes, streamed))
        self.cursor = address + nbytes
        return len(self.regions) - 1


def _cnn_layout(layout: _Layout, cnn: int, name: str, design: EngineDesign,
                reps: int, batch: int) -> list[list[list[tuple[int, int, int, bool]]]]:
    """Allocates one CNN's regions; returns, per repetition and subgraph, its transfers as
    (region, offset in the region, bytes, write)."""
    subs = design.subgraphs
    w = WORD_BYTES * batch                    # bytes per word of a feature map (all frames of a batch)
    inputs = [layout.add(f"{name}.input[{r}]", "input", cnn, w * subs[0].in_words) for r in range(reps)]
    # weights of every layer (input tile) a subgraph runs; a stage's are streamed for every run or on
    # chip (loaded once when the design is configured), as the design places them
    weights = [[layout.add(f"{name}.{conv.name}.weights", "weights", cnn, WORD_BYTES * conv.weights,
                           design.stages[2 * k].weights == STREAMED)
                for k, (conv, _) in enumerate(s.blocks) if conv.weights]
               for s in subs]
    # Intermediate buffers and which slice of which buffer each subgraph reads (the same for every
    # repetition, except the first input and the last output).
    # (source region, None: the repetition's input; first word read of each frame; psum region; output region)
    plan: list[tuple[int | None, int, int | None, int | None]] = []
    def reads(j: int) -> int:
        """Words of one input feature map read by subgraph j and the input tiles that follow it
        (subgraphs that read partial sums): the whole map a folded convolution reads."""
        k = j + 1
        while k < len(subs) and subs[k].psum_words:
            k += 1
        return sum(x.in_words for x in subs[j:k])

    src: int | None = None
    src_words, consumed = reads(0), 0
    prev_out: int | None = None
    for j, s in enumerate(subs):
        if consumed + s.in_words > src_words or (consumed == 0 and reads(j) != src_words):
            # the chain's shape changes between blocks (layers outside the engine, e.g. a shortcut add):
            # this subgraph's input is a buffer of its own
            src_words, consumed = reads(j), 0
            src = layout.add(f"{name}.{s.name}.in", "fmap", cnn, w * src_words)
        first_word = consumed
        psum = None
        if s.psum_words:
            if prev_out is None or layout.regions[prev_out].kind != "psum" or \
                    layout.regions[prev_out].bytes != w * s.psum_words:
                raise ValueError(f"{name} {s.name}: reads {s.psum_words} partial sums no earlier tile wrote")
            psum = prev_out
        consumed += s.in_words
        last = j == len(subs) - 1
        out = None
        if not last:
            kind = "fmap" if consumed == src_words else "psum"
            out = layout.add(f"{name}.{s.name}.{'out' if kind == 'fmap' else 'psum'}", kind, cnn, w * s.out_words)
        plan.append((src, first_word, psum, out))
        prev_out = out
        if consumed == src_words and out is not None:
            src, src_words, consumed = out, s.out_words, 0
    outputs = [layout.add(f"{name}.output[{r}]", "output", cnn, w * subs[-1].out_words) for r in range(reps)]

    per_rep = []
    for r in range(reps):
        runs = []
        for j, (s, (srcj, start_word, psum, out)) in enumerate(zip(subs, plan)):
            region = inputs[r] if srcj is None else srcj
            tr: list[tuple[int, int, int, bool]] = []
            full = layout.regions[region].bytes // w          # words per frame
            if batch == 1 or s.in_words == full:
                tr.append((region, WORD_BYTES * start_word, w * s.in_words, False))
            else:                              # a channel slice of every frame of the batch (frame-major buffers)
                for f in range(batch):
                    tr.append((region, WORD_BYTES * (f * full + start_word), WORD_BYTES * s.in_words, False))
            if psum is not None:
                tr.append((psum, 0, w * s.psum_words, False))
            tr += [(g, 0, layout.regions[g].bytes, False) for g in weights[j] if layout.regions[g].streamed]
            tr.append((outputs[r] if out is None else out, 0, w * s.out_words, True))
            runs.append(tr)
        per_rep.append(runs)
    return per_rep


@dataclass
class HardwareTable:
    """The whole MCNN-HS configuration of one schedule cycle."""

    cnns: list[str]
    bandwidth_bps: float                       # raw port bandwidth (the beat clock)
    period_beats: int
    makespan_beats: int
    frames_per_cycle: list[int]
    subgraphs_per_inference: list[int]
    regions: list[Region]
    runs: list[list[list[Entry]]]              # [engine][repetition][subgraph]
    port_bytes: int = PORT_BITS // 8
    burst_beats: int = BURST_LENGTH
    slot_resolution: int = SLOT_RESOLUTION

    @property
    def burst_bytes(self) -> int:
        return self.burst_beats * self.port_bytes

    @property
    def beat_s(self) -> float:
        return self.port_bytes / self.bandwidth_bps

    def to_json(self) -> dict[str, Any]:
        """The exported table (mcnn_hs_table.json)."""
        return {
            "format": TABLE_FORMAT, "version": TABLE_VERSION,
            "bandwidth_bps": self.bandwidth_bps, "port_bytes": self.port_bytes, "word_bytes": WORD_BYTES,
            "burst_beats": self.burst_beats, "burst_bytes": self.burst_bytes, "slot_resolution": self.slot_resolution,
            "beat_s": self.beat_s, "period_beats": self.period_beats, "makespan_beats": self.makespan_beats,
            "memory": {"base": 0, "alignment": self.burst_bytes,
                       "bytes": max((g.address + g.bytes for g in self.regions), default=0),
                       "regions": [asdict(g) for g in self.regions]},
            "engines": [{"engine": i, "cnn": name, "frames_per_cycle": self.frames_per_cycle[i],
                         "subgraphs_per_inference": self.subgraphs_per_inference[i],
                         "repetitions": [{"repetition": r, "subgraphs": [asdict(e) for e in rep]}
                                         for r, rep in enumerate(self.runs[i])]}
                        for i, name in enumerate(self.cnns)],
        }


def build_table(problem: Problem, schedule: Schedule, period_s: float, designs: Sequence[EngineDesign],
                loads: Sequence[Sequence[SubgraphLoad]], names: Sequence[str], bandwidth_bps: float,
                batch: int = 1) -> HardwareTable:
    """The table of one scheduled cycle. `bandwidth_bps` is the raw port bandwidth (the schedule
    planned with the effective one, `problem.bandwidth_bps`); `designs`/`loads` per CNN are the
    engine designs and the loads the schedule was built from. ValueError when the memory map would
    move other bytes than the schedule planned."""
    port_bytes = PORT_BITS // 8
    beat_s = port_bytes / bandwidth_bps
    layout = _Layout(BURST_LENGTH * port_bytes)
    transfers = [_cnn_layout(layout, i, names[i], designs[i], problem.reps[i], batch) for i in range(len(names))]
    subgraphs = [d.subgraphs for d in designs]
    runs: list[list[list[Entry]]] = [[[] for _ in range(r)] for r in problem.reps]
    for chain in problem.chains:
        for i in chain:
            t = problem.tasks[i]
            lv = schedule.level[i]
            start = schedule.start[i] * problem.tick_s
            end = start + problem.duration(i, lv) * problem.tick_s
            slots = slots_for(problem.demand(i, lv) / CAPACITY)
            trs = [Transfer(reg, layout.regions[reg].address + off, n, -(-n // layout.align), wr)
                   for reg, off, n, wr in transfers[t.cnn][t.rep][t.sub]]
            nbytes = sum(x.bytes for x in trs)
            load = loads[t.cnn][t.sub]
            if nbytes != load.traffic_bytes:
                raise ValueError(f"{names[t.cnn]} {load.name}: the memory map moves {nbytes} B, the schedule "
                                 f"planned {load.traffic_bytes} B")
            runs[t.cnn][t.rep].append(Entry(
                t.sub, load.name, math.floor(start / beat_s + 1e-9), math.ceil(end / beat_s - 1e-9), slots,
                lv / problem.levels, nbytes, rounds_needed(nbytes // WORD_BYTES, slots, BURST_LENGTH, PORT_BITS,
                                                           WORD_BITS),
                load.latency_s, trs))
    return HardwareTable(list(names), bandwidth_bps, math.ceil(period_s / beat_s - 1e-9),
                         math.ceil(schedule.makespan * problem.tick_s / beat_s - 1e-9), problem.frames,
                         [len(s) for s in subgraphs], layout.regions, runs)


# ---------------------------------------------------------------- C header
def _c_string(text: str) -> str:
    """A C string literal of any name (ONNX layer names may hold quotes, backslashes, newlines)."""
    out = []
    for ch in text:
        if ch in '"\\?':                     # '?' too: no trigraphs under -std=c99
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append("".join(f"\\{b:03o}" for b in ch.encode()))
    return '"' + "".join(out) + '"'


def _c_comment(text: str) -> str:
    """Text safe inside /* ... */ on one line."""
    return re.sub(r"[^ -~]", "_", text).replace("*/", "* /").replace("??", "?_")


def c_header(doc: dict[str, Any], guard: str = "MCNN_HS_TABLE_H") -> str:
    """The exported table as a C header (mcnn_hs_table.h): constants, struct typedefs and static
    const arrays, entries in engine / repetition / subgraph order with index ranges per engine."""
    regions = doc["memory"]["regions"]
    entries: list[tuple[int, int, dict[str, Any]]] = []
    for e in doc["engines"]:
        for rep in e["repetitions"]:
            for sg in rep["subgraphs"]:
                entries.append((e["engine"], rep["repetition"], sg))
    first_entry, n_entries = [], []
    for e in doc["engines"]:
        first_entry.append(next((k for k, (eng, _, _) in enumerate(entries) if eng == e["engine"]), len(entries)))
        n_entries.append(sum(1 for eng, _, _ in entries if eng == e["engine"]))
    transfers: list[dict[str, Any]] = []
    entry_rows = []
    for eng, rep, sg in entries:
        entry_rows.append(f"    {{{eng}u, {rep}u, {sg['subgraph']}u, {sg['slots']}u, {sg['start_beat']}ull, "
                          f"{sg['end_beat']}ull, {sg['bytes']}ull, {sg['rounds']}u, {len(transfers)}u, "
                          f"{len(sg['transfers'])}u}},  /* {_c_comment(sg['name'])} */")
        transfers.extend(sg["transfers"])
    n_eng = len(doc["engines"])
    lines = [
        "/* MCNN-HS configuration table (f-CNNx, section III-D), generated by Dataflow Explorer. */",
        f"/* CNNs: {_c_comment(', '.join(e['cnn'] for e in doc['engines']))}. Times in beats of the {doc['port_bytes']}-byte "
        f"memory port at {doc['bandwidth_bps'] / 1e9:g} GB/s; one slot = MCNN_HS_BURST_BEATS beats. */",
        "/* Addresses are byte offsets from MCNN_HS_MEM_BASE; every region starts on a burst boundary. */",
        f"#ifndef {guard}", f"#define {guard}", "", "#include <stdint.h>", "",
        "#ifndef MCNN_HS_MEM_BASE", "#define MCNN_HS_MEM_BASE 0x00000000ull", "#endif",
        f"#define MCNN_HS_TABLE_VERSION {doc['version']}u",
        f"#define MCNN_HS_PORT_BYTES {doc['port_bytes']}u",
        f"#define MCNN_HS_WORD_BYTES {doc['word_bytes']}u",
        f"#define MCNN_HS_BURST_BEATS {doc['burst_beats']}u",
        f"#define MCNN_HS_BURST_BYTES {doc['burst_bytes']}u",
        f"#define MCNN_HS_SLOT_RESOLUTION {doc['slot_resolution']}u",
        f"#define MCNN_HS_PERIOD_BEATS {doc['period_beats']}ull",
        f"#define MCNN_HS_MAKESPAN_BEATS {doc['makespan_beats']}ull",
        f"#define MCNN_HS_MEMORY_BYTES {doc['memory']['bytes']}ull",
        f"#define MCNN_HS_N_ENGINES {n_eng}u",
        f"#define MCNN_HS_N_ENTRIES {len(entries)}u",
        f"#define MCNN_HS_N_TRANSFERS {len(transfers)}u",
        f"#define MCNN_HS_N_REGIONS {len(regions)}u",
        "",
        "typedef enum { MCNN_HS_INPUT = 0, MCNN_HS_WEIGHTS = 1, MCNN_HS_FMAP = 2, MCNN_HS_PSUM = 3, "
        "MCNN_HS_OUTPUT = 4 } mcnn_hs_region_kind_t;",
        "",
        "typedef struct {\n    uint64_t address;       /* byte offset from MCNN_HS_MEM_BASE */\n"
        "    uint64_t bytes;\n    uint8_t kind;            /* mcnn_hs_region_kind_t */\n"
        "    uint8_t engine;\n    uint8_t streamed;        /* weights re-read by every run (0: loaded once) */\n"
        "} mcnn_hs_region_t;",
        "",
        "typedef struct {\n    uint64_t address;       /* first burst; burst k at address + k * MCNN_HS_BURST_BYTES */\n"
        "    uint32_t bytes;\n    uint32_t bursts;\n    uint16_t region;\n    uint8_t write;\n"
        "} mcnn_hs_transfer_t;",
        "",
        "typedef struct {\n    uint8_t engine;\n    uint16_t repetition;     /* inference of the engine in the cycle */\n"
        "    uint16_t subgraph;\n    uint16_t slots;          /* consecutive slots per round-robin turn (eq. 7) */\n"
        "    uint64_t start_beat;     /* release within the cycle */\n    uint64_t end_beat;       /* scheduled end */\n"
        "    uint64_t bytes;\n    uint32_t rounds;\n    uint32_t first_transfer;\n    uint16_t n_transfers;\n"
        "} mcnn_hs_entry_t;",
        "",
        "static const mcnn_hs_region_t mcnn_hs_regions[MCNN_HS_N_REGIONS] = {",
    ]
    kinds = {"input": "MCNN_HS_INPUT", "weights": "MCNN_HS_WEIGHTS", "fmap": "MCNN_HS_FMAP", "psum": "MCNN_HS_PSUM",
             "output": "MCNN_HS_OUTPUT"}
    for g in regions:
        lines.append(f"    {{0x{g['address']:x}ull, {g['bytes']}ull, {kinds[g['kind']]}, {g['cnn']}u, "
                     f"{int(g['streamed'])}u}},  /* {_c_comment(g['name'])} */")
    lines += ["};", "", "static const char *const mcnn_hs_region_names[MCNN_HS_N_REGIONS] = {"]
    lines += [f"    {_c_string(g['name'])}," for g in regions]
    lines += ["};", "", "static const mcnn_hs_transfer_t mcnn_hs_transfers[MCNN_HS_N_TRANSFERS] = {"]
    lines += [f"    {{0x{t['address']:x}ull, {t['bytes']}u, {t['bursts']}u, {t['region']}u, {int(t['write'])}u}},"
              for t in transfers]
    lines += ["};", "", "static const mcnn_hs_entry_t mcnn_hs_entries[MCNN_HS_N_ENTRIES] = {"] + entry_rows
    lines += ["};", "",
              "/* per engine: its entries are mcnn_hs_entries[first .. first + count), in cycle order */",
              "static const uint32_t mcnn_hs_engine_first_entry[MCNN_HS_N_ENGINES] = {"
              + ", ".join(f"{k}u" for k in first_entry) + "};",
              "static const uint32_t mcnn_hs_engine_entries[MCNN_HS_N_ENGINES] = {"
              + ", ".join(f"{k}u" for k in n_entries) + "};",
              "static const uint32_t mcnn_hs_engine_frames_per_cycle[MCNN_HS_N_ENGINES] = {"
              + ", ".join(f"{e['frames_per_cycle']}u" for e in doc["engines"]) + "};",
              "static const char *const mcnn_hs_engine_names[MCNN_HS_N_ENGINES] = {"
              + ", ".join(_c_string(e["cnn"]) for e in doc["engines"]) + "};",
              "", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


def table_summary(doc: dict[str, Any]) -> dict[str, int]:
    """Counts of the exported table (for the result and the text output)."""
    entries = [sg for e in doc["engines"] for rep in e["repetitions"] for sg in rep["subgraphs"]]
    return {"entries": len(entries), "transfers": sum(len(sg["transfers"]) for sg in entries),
            "regions": len(doc["memory"]["regions"]), "memory_bytes": doc["memory"]["bytes"],
            "period_beats": doc["period_beats"]}


TABLE_FILES = ("mcnn_hs_table.json", "mcnn_hs_table.h")


def write_table(doc: dict[str, Any], folder: Path) -> list[Path]:
    """Writes the table as JSON and as the C header into `folder` (made if missing); OSError when
    it cannot."""
    folder.mkdir(parents=True, exist_ok=True)
    js, h = (folder / name for name in TABLE_FILES)
    js.write_text(json.dumps(doc, indent=1) + "\n")
    h.write_text(c_header(doc))
    return [js, h]
