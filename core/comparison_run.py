"""A comparison as a run of runs (issue 51): one network on many targets, each target a part that is
a run of the project, submitted through the one run controller (core.run_controller).

    ComparisonRun(controller, source, targets, budgets)
        ─► one target_cost run per target (core.target_cost), parent = the comparison's id
           (modelled parts first, as many at once as `workers`; a measured part, one that times code
           on this machine, is `exclusive`: it starts once nothing else runs and nothing starts beside it)
        ─► the controller records each part as a run (running in the Runs table while it runs, kept
           with its cost record when it ends); `update()` turns each ended part into its row
        ─► `result()`: the Comparison, rows in the targets' order, the best marked

A part whose setup (engine, network, target values, the budgets its kind reads) equals a finished
run's is not run again: that run is the part (`reuse`, the controller's setup key), and the
comparison says how many were re-used. Cancel cancels every part (queued ones never start, running
ones are asked to stop and, in a worker process, ended). The comparison itself is recorded in the
project's view state (`project.view["comparisons"][id]`: network, budgets, each target's part run),
saved with the session; each part's run keeps its parent (Run.parent). `compare()` runs one to its
end on a controller of its own (the command line: worker processes; a script or test: threads).
The window's Targets tab drives one on the window's controller (gui.run_adapter), never a thread of
its own, and shows the last one recorded when a session opens (`last_recorded`, rebuilt from the
record and its parts' runs). A part run the user deletes is marked deleted in every record naming
it (core.comparison_record, from Project.delete_run, undone with it): its row reads "run deleted"
with no figure, and Compare costs it again.
"""

from __future__ import annotations

import copy
import os
import time
from dataclasses import dataclass
from typing import Callable

from core.comparison import (Budgets, Comparison, ComparisonRow, TargetItem, costings, default_targets, is_measured,
                             mark_best, network_macs, part_settings)
from core.comparison_record import BOOK, book_of, deleted_parts
from core.kinds import kind_of
from core.project import Project, Snapshot
from core.run_controller import Job, Launcher, RunController, Setup, thread_launcher
from core.target_cost.engine import NAME as PART_ENGINE

POLL_S = 0.02               # compare()'s wait between two polls of its controller
DELETED_REASON = "its part's run was deleted: press Compare to cost it again"


@dataclass
class Part:
    item: TargetItem
    job: Job | None                     # None: no engine costs the target's kind (the row says so)
    row: ComparisonRow | None = None    # once it ended (None: still on its way, or cancelled)
    ended: bool = False


def comparison_ids(project: Project) -> set[str]:
    """The comparisons recorded in the project, and the parents its runs name."""
    return set(book_of(project.view)) | {r.parent for r in project.runs if r.parent}


def _cnn_snapshot(source: str, title: str) -> Snapshot:
    """The parts' workload: the CNN, or the conv-layers workload of a layers source (its specs)."""
    from core.layer_source import is_layers_source, layer_specs
    from core.workload import CnnNetwork, ConvLayers

    if is_layers_source(source):
        return Snapshot("", title, ConvLayers(layer_specs(source)))
    net = CnnNetwork(onnx_path=source) if source.lower().endswith(".onnx") else CnnNetwork(source)
    return Snapshot("", title, net)


class ComparisonRun:
    """One comparison on its way through a run controller (see the module docstring). Not
    thread-safe: use it from the controller's thread; call `update()` after each poll."""

    def __init__(self, controller: RunController, source: str, targets: list[TargetItem] | None = None,
                 budgets: Budgets = Budgets(), *, workers: int | None = None, reuse: bool = True,
                 target_ids: list[str] | None = None) -> None:
        self.controller = controller
        self.project = controller.project
        self.source = source
        self.network, self.macs, self.layers = network_macs(source)    # InputError before anything starts
        self.budgets = budgets
        items = default_targets() if targets is None else list(targets)
        used = comparison_ids(self.project)
        n = 1
        while f"c{n}" in used:
            n += 1
        self.id = f"c{n}"
        self.cancelled = False
        controller.group_limits[self.id] = max(1, workers or os.cpu_count() or 1)
        workload = _cnn_snapshot(source, self.network)
        regs = costings()
        ids = target_ids or [""] * len(items)
        self.parts: list[Part] = []
        for item, tid in zip(items, ids):
            part = Part(item, None)
            self.parts.append(part)
            if regs.get(item.value.kind) is None:
                part.row, part.ended = _uncosted(item.name, item.value.kind), True
        # modelled parts first, then the measured ones: an exclusive job waiting holds back what follows it
        order = sorted((i for i, p in enumerate(self.parts) if not p.ended),
                       key=lambda i: is_measured(self.parts[i].item.value, budgets))
        for i in order:
            item = self.parts[i].item
            target = Snapshot(ids[i], item.name, copy.deepcopy(item.value))
            setup = Setup(PART_ENGINE, workload, target, part_settings(item.value, budgets))
            self.parts[i].job = controller.submit(
                setup, parent=self.id, exclusive=is_measured(item.value, budgets), reuse=reuse,
                note=f"comparison {self.id}: {self.network} on {item.name}")
        self._record()

    # ------------------------------------------------------------ its state
    @property
    def reused(self) -> int:
        return sum(1 for p in self.parts if p.job is not None and p.job.reused)

    @property
    def done(self) -> bool:
        return all(p.ended for p in self.parts)

    def run_ids(self) -> list[str | None]:
        """Each target's part run (None: none, cancelled before it started, or deleted since)."""
        return [None if i in self.deleted() else p.job.run_id if p.job is not None else None
                for i, p in enumerate(self.parts)]

    def deleted(self) -> set[int]:
        """The parts whose run the user deleted (a finished part, while others still ran)."""
        return {i for i, p in enumerate(self.parts)
                if p.job is not None and p.job.run_id is not None and not _exists(self.project, p.job.run_id)}

    def cancel(self) -> None:
        """Cancel every part of it still queued or running."""
        self.cancelled = True
        self.controller.cancel_group(self.id)

    def update(self) -> list[ComparisonRow]:
        """The rows of the parts that ended since the last call (after a poll of the controller)."""
        new: list[ComparisonRow] = []
        for p in self.parts:
            if p.ended or p.job is None or p.job.state != "done":
                continue
            p.ended = True
            p.row = self._row_of(p)
            if p.row is not None:
                new.append(p.row)
        if new or self.done:
            self._record()
        return new

    def result(self) -> Comparison:
        """The comparison as far as it went: its rows in the targets' order, the best marked."""
        gone = self.deleted()
        rows = [_deleted(p.row) if i in gone else p.row for i, p in enumerate(self.parts) if p.row is not None]
        for r in rows:
            r.best = []
        mark_best(rows)
        stopped = self.cancelled or len(rows) < len(self.parts)
        return Comparison(network=self.network, source=self.source, macs=self.macs, layers=self.layers,
                          budgets=self.budgets, rows=rows, cancelled=stopped, id=self.id, reused=self.reused)

    # ------------------------------------------------------------ internals
    def _row_of(self, p: Part) -> ComparisonRow | None:
        job = p.job
        assert job is not None
        if job.run_id is None:              # cancelled before it started
            return None
        row = row_of_run(self.project, job.run_id, p.item.name)
        if row is not None:
            row.reused = job.reused
        return row

    def _record(self) -> None:
        """The comparison as the project keeps it (view state, saved with the session)."""
        book = self.project.view.get(BOOK)
        if not isinstance(book, dict):
            book = self.project.view[BOOK] = {}
        runs = self.run_ids()
        if self.done and not any(isinstance(r, str) for r in runs) and self.deleted():
            book.pop(self.id, None)         # every part it ran deleted: the comparison goes too
            return
        book[self.id] = {"network": self.network, "source": self.source, "macs": self.macs, "layers": self.layers,
                         "budgets": {
            k: getattr(self.budgets, k) for k in ("measure", "scamp5_max_nodes", "scamp5_time_s", "fcnnx_max_joint")},
            "targets": [p.item.name for p in self.parts], "kinds": [p.item.value.kind for p in self.parts],
            "runs": runs, "deleted": sorted(self.deleted()), "reused": self.reused,
            "cancelled": self.cancelled, "done": self.done}


def row_of_run(project: Project, run_id: str, name: str) -> ComparisonRow | None:
    """The row of a part's run, named as the comparison names its target (None: the run was
    cancelled or deleted)."""
    from core.target_cost.result import TargetCostResult

    try:
        run = project.run(run_id)
    except KeyError:
        return None
    kind = run.target.kind if run.target is not None else ""
    if run.status == "finished" and isinstance(run.result, TargetCostResult):
        row: ComparisonRow = run.result.row()
        row.target = name
    elif run.status in ("failed",):         # a crash, a costing that failed its check: a row saying so
        row = ComparisonRow(target=name, kind=kind, engine=_engine_of(kind), failed=True,
                            reason=run.error or "the part ended without a result")
    else:                                   # cancelled, or still running
        return None
    row.run_id = run.id
    return row


def recorded(project: Project, cid: str) -> Comparison | None:
    """A comparison the project recorded, rebuilt from its record and its parts' runs (a session
    opened again): None when there is no such record or it is not one this version wrote."""
    book = project.view.get("comparisons")
    entry = book.get(cid) if isinstance(book, dict) else None
    try:
        assert isinstance(entry, dict)
        budgets = Budgets(**entry["budgets"])
        rows: list[ComparisonRow] = []
        gone = deleted_parts(entry)
        for i, (name, kind, rid) in enumerate(zip(entry["targets"], entry["kinds"], entry["runs"])):
            row: ComparisonRow | None
            if i in gone or (isinstance(rid, str) and not _exists(project, rid)):
                row = _deleted(ComparisonRow(target=str(name), kind=str(kind), engine=_engine_of(str(kind))))
            elif isinstance(rid, str):
                row = row_of_run(project, rid, str(name))
            else:                   # no engine costs its kind: no run, the row says so
                row = None if costings().get(str(kind)) is not None else _uncosted(str(name), str(kind))
            if row is not None:
                rows.append(row)
        mark_best(rows)
        return Comparison(network=str(entry["network"]), source=str(entry["source"]), macs=int(entry["macs"]),
                          layers=int(entry["layers"]), budgets=budgets, rows=rows, id=cid,
                          cancelled=bool(entry["cancelled"]), reused=int(entry["reused"]))
    except (AssertionError, KeyError, TypeError, ValueError):
        return None


def last_recorded(project: Project) -> Comparison | None:
    """The newest comparison the project recorded that ended (None: none)."""
    book = project.view.get("comparisons")
    if not isinstance(book, dict):
        return None
    done = [cid for cid, e in book.items() if isinstance(e, dict) and e.get("done")]
    for cid in sorted(done, key=lambda c: (len(c), c), reverse=True):
        c = recorded(project, cid)
        if c is not None:
            return c
    return None


def _exists(project: Project, run_id: str) -> bool:
    return any(r.id == run_id for r in project.runs)


def _engine_of(kind: str) -> str:
    costing = costings().get(kind)
    return costing.engine if costing is not None else ""


def _deleted(row: ComparisonRow) -> ComparisonRow:
    """A part whose run the user deleted: its target's row says so, with no figure and no run."""
    return ComparisonRow(target=row.target, kind=row.kind, engine=row.engine, reason=DELETED_REASON, deleted=True)


def _uncosted(name: str, kind: str) -> ComparisonRow:
    k = kind_of("targets", kind)
    title = k.title if k is not None else kind
    return ComparisonRow(target=name, kind=kind, engine="",
                         reason=f"not costed yet: no engine produces a cost record on a {title} yet")


def compare(source: str, targets: list[TargetItem] | None = None, budgets: Budgets = Budgets(), *,
            on_row: Callable[[ComparisonRow], None] | None = None, workers: int | None = None,
            cancelled: Callable[[], bool] | None = None, project: Project | None = None,
            launcher: Launcher = thread_launcher, reuse: bool = True) -> Comparison:
    """Run a comparison to its end on a run controller of its own (over `project`, a fresh one by
    default, which keeps every part's run). `on_row` sees each row as its part ends; `cancelled` is
    asked between polls: once True every part is cancelled and the rows that ended are returned,
    marked cancelled. Nothing is left running when it returns or raises."""
    name, macs, layers = network_macs(source)
    if cancelled is not None and cancelled():
        return Comparison(network=name, source=source, macs=macs, layers=layers, budgets=budgets, rows=[],
                          cancelled=True)
    controller = RunController(project if project is not None else Project(), launcher)
    try:
        run = ComparisonRun(controller, source, targets, budgets, workers=workers, reuse=reuse)
        while True:
            if cancelled is not None and not run.cancelled and cancelled():
                run.cancel()
            controller.poll()
            for row in run.update():
                if on_row is not None:
                    on_row(row)
            if run.done:
                return run.result()
            time.sleep(POLL_S)
    finally:
        controller.shutdown()
