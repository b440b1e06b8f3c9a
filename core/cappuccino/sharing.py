"""Which ops the worker threads share, chosen from measured per-op time (issue 35, bullet 1).

The paper allocates threads by a rule (OLP everywhere); the program's first rule, `CHUNK_WORK`,
shares every op with enough multiply-adds. Whether sharing pays depends on the CPU: claiming
chunks, waiting at the op's end and moving the producer's output between cores' caches cost
about the same on every op, so a small op (a pooling, a 1x1 squeeze on a 13x13 map) can run
faster on one worker while the other idles for a few microseconds.

`measure` profiles the compiled program as the rule built it and with every op on worker 0 (the
program's run-time flag `--splits`: one process times both splits in alternating rounds, so
nothing is built and the weight file is read once), and moves
to one worker exactly the ops that the rule shares and that ran faster alone in every run than
shared in any (so noise between runs moves nothing). The whole program with that split is then
timed against the rule's, alternating, and the split is kept only if its median
is lower: per-op times are taken in a context (which core holds the producer's output) that the new
split changes, so only the whole program decides. A kept split is written into the program's op
table (synth_program.plan's `shared`), so the emitted C runs it without flags.

The decision (`decide`) and the keep-or-drop rule (`keep`) are pure functions, tested with
made-up times; the timing is the caller's `run` (a real program, or a fake in tests).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Generator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from core.cappuccino import synth, synth_program

RULE, MEASURED = "rule", "measured"


@dataclass
class OpSharing:
    name: str
    kind: str
    rule_chunks: int                # pieces under the CHUNK_WORK rule (1: the rule runs it alone)
    shared_us: float                # median wall µs per image in the rule's program
    alone_us: float                 # median wall µs per image on worker 0 alone
    shared: bool                    # the measured choice

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class SharingChoice:
    threads: int
    ops: list[OpSharing]
    rule_us: float                  # whole program, median µs per image
    measured_us: float | None       # None: the measured choice equals the rule's, nothing more to time
    kept: str                       # RULE | MEASURED

    @property
    def shared(self) -> list[bool] | None:
        """The flags for synth_program.plan (None: the rule)."""
        return [o.shared for o in self.ops] if self.kept == MEASURED else None

    def changed(self) -> list[str]:
        """The ops whose allocation differs from the rule's, in words."""
        return [f"{o.name} ({o.kind}) {'shared' if o.shared else 'on one worker'}"
                for o in self.ops if o.shared != (o.rule_chunks > 1)]

    def summary(self) -> str:
        if self.measured_us is None:
            return (f"thread split measured on {self.threads} workers: the rule's split was fastest per op "
                    f"({self.rule_us:.1f} µs per image)")
        verdict = "kept" if self.kept == MEASURED else "dropped (the rule's whole program was faster)"
        return (f"thread split measured on {self.threads} workers: {len(self.changed())} ops moved "
                f"({', '.join(self.changed()[:4])}{' …' if len(self.changed()) > 4 else ''}); "
                f"{self.rule_us:.1f} → {self.measured_us:.1f} µs per image, {verdict}")

    def to_json(self) -> dict:
        d = asdict(self)
        d["ops"] = [o.to_json() for o in self.ops]
        return d


def decide(rule_chunks: Sequence[int], shared_us: Sequence[Sequence[float]],
           alone_us: Sequence[Sequence[float]]) -> list[bool]:
    """Per op, its runs' times shared and alone: an op the rule splits moves to one worker only when
    every alone run beat every shared run (ranges apart), so a difference within the noise of the
    runs never moves it."""
    return [c > 1 and not max(a) < min(s) for c, s, a in zip(rule_chunks, shared_us, alone_us, strict=True)]


def keep(rule_runs: Sequence[float], measured_runs: Sequence[float]) -> str:
    """MEASURED only when its median whole-program time is strictly lower than the rule's."""
    return MEASURED if statistics.median(measured_runs) < statistics.median(rule_runs) else RULE


# run(splits, rounds) -> per split, one (µs per image for the whole pass, per-op µs in plan order)
# per round: the program timed with each split (the op indices worker 0 runs alone), alternating
Runner = Callable[[list[tuple[int, ...]], int], list[list[tuple[float, list[float]]]]]


def measure(names: Sequence[str], kinds: Sequence[str], rule_chunks: Sequence[int], run: Runner, rounds: int = 3,
            threads: int = 2) -> SharingChoice:
    """Profile the program as built (the rule) and with every shared op alone, `rounds` alternating
    runs each; then, if the per-op choice differs from the rule, time the program with that split
    against the rule's whole program, alternating."""
    return finish(measure_steps(names, kinds, rule_chunks, run, rounds, threads))


def finish(steps: Generator[str, None, SharingChoice]) -> SharingChoice:
    """The choice of `measure_steps`, its steps passed over."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def measure_steps(names: Sequence[str], kinds: Sequence[str], rule_chunks: Sequence[int], run: Runner,
                  rounds: int = 3, threads: int = 2) -> Generator[str, None, SharingChoice]:
    """`measure`, saying before its second comparison (the measured split against the rule) that it
    makes one: the caller's progress then knows the step's work (core.cappuccino.progress)."""
    n = len(names)
    everything = tuple(i for i in range(n) if rule_chunks[i] > 1)
    as_built, alone = _checked(run([(), everything], rounds), n, rounds)
    samples = {RULE: [[ops[i] for _, ops in as_built] for i in range(n)],
               "alone": [[ops[i] for _, ops in alone] for i in range(n)]}
    med = {k: [statistics.median(x) for x in v] for k, v in samples.items()}
    flags = decide(rule_chunks, samples[RULE], samples["alone"])
    ops = [OpSharing(names[i], kinds[i], rule_chunks[i], med[RULE][i], med["alone"][i], flags[i]) for i in range(n)]
    if flags == [c > 1 for c in rule_chunks]:
        return SharingChoice(threads, ops, statistics.median(t for t, _ in as_built), None, RULE)
    moved = tuple(i for i in range(n) if rule_chunks[i] > 1 and not flags[i])
    yield "timing the measured split against the rule's"
    rule_runs, moved_runs = _checked(run([(), moved], rounds), n, rounds)
    rule_t, moved_t = [t for t, _ in rule_runs], [t for t, _ in moved_runs]
    return SharingChoice(threads, ops, statistics.median(rule_t), statistics.median(moved_t), keep(rule_t, moved_t))


def _checked(runs: list[list[tuple[float, list[float]]]], n: int,
             rounds: int) -> tuple[list[tuple[float, list[float]]], ...]:
    if len(runs) != 2 or any(len(r) != rounds or any(len(ops) != n for _, ops in r) for r in runs):
        raise RuntimeError(f"the program did not print {rounds} rounds of {n} op times for each split")
    return runs[0], runs[1]


def split_outputs(out: str) -> dict[tuple[int, int], list[float]]:
    """The first image's output after each split and round of a --splits run (`sout S R values`),
    computed from a cleared arena: the same bits as the program's own output, or an op was skipped."""
    return {(int(p[1]), int(p[2])): [float(v) for v in p[3:]]
            for p in (line.split() for line in out.splitlines()) if p[:1] == ["sout"]}


def parse_splits(out: str, splits: int, rounds: int) -> list[list[tuple[float, list[float]]]]:
    """The `split S round R passes N seconds T` and `sop S I µs` lines of a --splits run, per split and
    round: (µs per pass, per-op µs); the caller divides by the images."""
    whole: dict[tuple[int, int], float] = {}
    ops: dict[int, dict[int, list[float]]] = {}
    current: dict[int, int] = {}
    for line in out.splitlines():
        parts = line.split()
        if parts[:1] == ["split"] and len(parts) == 8:
            sp, r = int(parts[1]), int(parts[3])
            whole[sp, r] = 1e6 * float(parts[7]) / int(parts[5])
            current[sp] = r
            ops.setdefault(sp, {})[r] = []
        elif parts[:1] == ["sop"] and len(parts) == 4:
            sp = int(parts[1])
            ops[sp][current[sp]].append(float(parts[3]))
    return [[(whole[sp, r], ops[sp][r]) for r in range(rounds) if (sp, r) in whole] for sp in range(splits)]


def measure_program(p: synth_program.Plan, exe: Path, weights: Path, images: Path, count: int, min_seconds: float,
                    check: Callable[[], None], rounds: int = 3) -> SharingChoice:
    return finish(measure_program_steps(p, exe, weights, images, count, min_seconds, check, rounds))


def measure_program_steps(p: synth_program.Plan, exe: Path, weights: Path, images: Path, count: int,
                          min_seconds: float, check: Callable[[], None],
                          rounds: int = 3) -> Generator[str, None, SharingChoice]:
    """`measure` on the compiled program `exe` of plan `p` (its weight file `weights`), each timed
    stretch computing the `count` images of `images` for at least `min_seconds`; one process per
    comparison (`--splits`), so the weight file is read once for all its rounds."""
    def run(splits: list[tuple[int, ...]], rounds_: int) -> list[list[tuple[float, list[float]]]]:
        arg = "/".join(",".join(map(str, sp)) or "-" for sp in splits)
        out = synth.run_checked([str(exe), str(weights), str(images), str(count), str(min_seconds), str(p.threads),
                                 "--splits", arg, "--rounds", str(rounds_)], check, f"timing {exe.name}")
        return [[(t / count, list(ops)) for t, ops in per] for per in parse_splits(out, len(splits), rounds_)]

    return (yield from measure_steps([o.name for o in p.ops], [o.kind for o in p.ops], [o.chunks for o in p.ops], run,
                                     rounds, p.threads))
