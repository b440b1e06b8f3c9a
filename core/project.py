"""The project: the explorer's one state, without Qt.

A project holds a library of named workloads and named targets, each engine's choice of workload,
target and settings, and every run ever made (its setup, status, live series and result). Widgets
read it and change it only through the methods below; each change is announced on the signal of its
kind, `project.events.<kind>`, with a typed payload (core.project_events: one signal per kind, as
napari's layers have one per attribute, so a widget hears only what it shows) and, when a user made
it, recorded on the undo stack. Runs finishing are not undoable, deleting one is.
"""

from __future__ import annotations

import copy
import datetime as _dt
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

from core.checks import check_name
from core.comparison_record import forget_run
from core.comparison_record import restore as restore_records
from core.engine import EngineSpec, JobRequest, engines
from core.errors import InputError
from core.jobs import Event, MetricPoint, PartialData, PartialResult, add_metric_point
from core.lifecycle import MAX_SERIES_POINTS, RunOutcome
from core.project_events import (ChoiceChanged, LibraryChanged, ModifiedChanged, ProjectEvents, Reset, RunChanged,
                                 RunRecorded, SettingsChanged, ShownChanged)
from core.results import EngineResult
from core.run_words import error_words
from core.undo import Command, UndoStack
from core.kinds import LIBS, generated_name, kind_of, starters
from core.workload import TARGET_KINDS, WORKLOAD_KINDS, Target, Workload

LIBRARIES = ("workloads", "targets")
KIND_TITLES = {"workloads": WORKLOAD_KINDS, "targets": TARGET_KINDS}
RUN_STATUSES = ("running", "finished", "failed", "cancelled")


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass
class Entry:
    """A named workload or target in the library; `id` never changes, `name` is the user's."""

    id: str
    name: str
    value: Any              # Workload or Target
    # the name is the one its kind makes from its values (core.kinds ItemKind.auto_name), and
    # follows them when they change; a user's own name stays
    auto_name: bool = False

    @property
    def kind(self) -> str:
        return str(self.value.kind)

    def snapshot(self) -> "Snapshot":
        """The item as a run uses it: a frozen copy, so later edits leave the run's setup as it was."""
        return Snapshot(self.id, self.name, copy.deepcopy(self.value))

    def to_json(self) -> dict[str, Any]:
        """The item's session form (its value's JSON form; written only into session files)."""
        return {"id": self.id, "name": self.name, "value": self.value.to_json()}


@dataclass(frozen=True)
class Snapshot:
    """A library item as a run used it: its id and name then, and its own copy of the value (a
    Workload or Target object, never the library's, and never changed). A run keeps its setup typed;
    its JSON form is written only into session files (and read back from them or a study's records)."""

    id: str
    name: str
    value: Any              # Workload or Target

    @property
    def kind(self) -> str:
        return str(self.value.kind)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "value": self.value.to_json()}

    @classmethod
    def from_json(cls, lib: str, d: dict[str, Any], where: str = "") -> "Snapshot":
        """A snapshot's session form read back (`lib`: "workloads" or "targets"); InputError naming
        the field when its value does not read."""
        from core.workload import target_from_json, workload_from_json

        read = workload_from_json if lib == "workloads" else target_from_json
        value = read(d["value"], f"{where}.value") if where else read(d["value"])
        return cls(str(d.get("id", "")), str(d.get("name", "")), value)


@dataclass
class EngineChoice:
    """What an engine's tab will run: library ids of its workload and target, and its settings."""

    settings: dict[str, Any]
    workload: str | None = None
    target: str | None = None


@dataclass
class Run:
    """One run of an engine, kept whatever its end: its setup as it was, and what it produced."""

    id: str
    engine: str
    settings: dict[str, Any]
    workload: Snapshot | None                # the workload as it was when the run started
    target: Snapshot | None
    status: str = "running"
    started_at: str = field(default_factory=now_iso)
    finished_at: str | None = None
    duration_s: float | None = None
    result: EngineResult | None = None       # the final result, typed (JSON only in session files)
    partial: dict[str, PartialData] = field(default_factory=dict)    # last PartialResult per kind, typed
    series: dict[str, dict[str, list[list[float]]]] = field(default_factory=dict)   # plot -> series -> [x, y]
    error: str | None = None
    headline: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    parent: str | None = None                # the run of runs it is a part of (a comparison's id), if any

    @property
    def is_partial(self) -> bool:
        """A run that ended without its final result (failed or cancelled) but produced something."""
        return self.result is None and bool(self.partial or self.series)

    def workload_name(self, none: str = "no workload") -> str:
        """The name of the workload the run was set up with (its snapshot's), or `none`."""
        return self.workload.name if self.workload is not None else none

    def label(self) -> str:
        return f"{self.id} {self.engine} · {self.workload_name()}"


def _fresh_id(prefix: str, taken: Iterator[str]) -> str:
    used = set(taken)
    n = 1
    while f"{prefix}{n}" in used:
        n += 1
    return f"{prefix}{n}"


@dataclass(frozen=True)
class ComparedRuns:
    """The Compare tab as the session keeps it: the runs compared, and whether it was on show."""

    runs: list[str]
    on_show: bool = True


class Project:
    def __init__(self) -> None:
        self.workloads: list[Entry] = []
        self.targets: list[Entry] = []
        self.engines: dict[str, EngineChoice] = {}
        self.runs: list[Run] = []
        self.view: dict[str, Any] = {"current_engine": None}
        self.events = ProjectEvents()           # one signal per kind of change (core.project_events)
        self.undo_stack = UndoStack()
        self._runs_dirty = False
        self._was_modified = False              # what events.modified last said
        self.undo_stack.changed.connect(self._note_modified)
        self._macro: list[Command] | None = None
        self._run_clock: dict[str, float] = {}
        self._run_serial = 0        # run ids only grow: a deleted run's id is never given again

    # ================================================================ construction
    @classmethod
    def starter(cls) -> "Project":
        """A new project: a small library that lets every engine run before any edit."""
        p = cls()
        for name, value in starter_workloads():
            p.workloads.append(Entry(_fresh_id("w", (e.id for e in p.workloads)), name, value,
                                     is_generated_name("workloads", name, value)))
        for tname, target in starter_targets():
            p.targets.append(Entry(_fresh_id("t", (e.id for e in p.targets)), tname, target,
                                   is_generated_name("targets", tname, target)))
        for name in engines():
            p.choice(name)
        return p

    def replace_with(self, other: "Project") -> None:
        """Take over another project's whole state (a session just loaded); history starts anew."""
        self.workloads, self.targets = other.workloads, other.targets
        self.engines, self.runs, self.view = other.engines, other.runs, other.view
        self._runs_dirty = False
        self.undo_stack.clear()
        self.events.reset.emit(Reset())
        self._note_modified()

    # ================================================================ undo plumbing
    def _push(self, text: str, do: Any, undo: Any, merge_key: Any = None) -> None:
        cmd = Command(text, do, undo, merge_key)
        if self._macro is not None:
            cmd.do()
            self._macro.append(cmd)
        else:
            self.undo_stack.push(cmd)

    @contextmanager
    def macro(self, text: str) -> Iterator[None]:
        """Changes made inside form one undo step."""
        if self._macro is not None:         # nested: the outer macro collects
            yield
            return
        self._macro = []
        try:
            yield
        finally:
            cmds, self._macro = self._macro, None
        if cmds:
            def do() -> None:
                for c in cmds:
                    c.do()

            def undo() -> None:
                for c in reversed(cmds):
                    c.undo()
            self.undo_stack.push(Command(text, do, undo), done=True)

    def undo(self) -> bool:
        return self.undo_stack.undo()

    def redo(self) -> bool:
        return self.undo_stack.redo()

    @property
    def modified(self) -> bool:
        return self._runs_dirty or not self.undo_stack.is_clean()

    def mark_saved(self) -> None:
        self._runs_dirty = False
        self.undo_stack.set_clean()
        self._note_modified()

    def _note_modified(self) -> None:
        """Announce `modified` on events.modified when it flips (an edit, its undo, a run, a save)."""
        now = self.modified
        if now != self._was_modified:
            self._was_modified = now
            self.events.modified.emit(ModifiedChanged(now))

    # ================================================================ library
    def entries(self, lib: str) -> list[Entry]:
        if lib not in LIBRARIES:
            raise KeyError(f"no library {lib!r}; one of {', '.join(LIBRARIES)}")
        return self.workloads if lib == "workloads" else self.targets

    def entry(self, lib: str, entry_id: str | None) -> Entry | None:
        return next((e for e in self.entries(lib) if e.id == entry_id), None)

    def unique_name(self, lib: str, base: str, entry_id: str | None = None) -> str:
        names = {e.name for e in self.entries(lib) if e.id != entry_id}
        if base not in names:
            return base
        n = 2
        while f"{base} ({n})" in names:
            n += 1
        return f"{base} ({n})"

    def add(self, lib: str, name: str, value: Any, index: int | None = None) -> str:
        """Add a library item (its value already checked); returns its id."""
        entries = self.entries(lib)
        _check_kind(lib, value)
        check_name(name, f"{lib}.name")
        base = name.strip() or "untitled"
        entry = Entry(_fresh_id(lib[0], (e.id for e in entries)), self.unique_name(lib, base), value,
                      is_generated_name(lib, base, value))
        pos = len(entries) if index is None else index

        def do() -> None:
            entries.insert(pos, entry)
            self.events.library(lib).emit(LibraryChanged(lib, entry.id))

        def undo() -> None:
            entries.remove(entry)
            self.events.library(lib).emit(LibraryChanged(lib, entry.id))
        self._push(f"Add {entry.name}", do, undo)
        return entry.id

    def duplicate(self, lib: str, entry_id: str) -> str:
        e = self._entry(lib, entry_id)
        return self.add(lib, f"{e.name} copy", copy.deepcopy(e.value), self.entries(lib).index(e) + 1)

    def rename(self, lib: str, entry_id: str, name: str) -> None:
        e = self._entry(lib, entry_id)
        name = name.strip()
        if not name:
            raise InputError("a name cannot be empty", f"{lib}.{entry_id}.name")
        check_name(name, f"{lib}.{entry_id}.name")
        if name == e.name:
            return
        if any(o.name == name for o in self.entries(lib) if o is not e):
            raise InputError(f"another item is already named {name!r}", f"{lib}.{entry_id}.name")
        old, old_auto = e.name, e.auto_name

        def setter(v: str, auto: bool) -> Any:
            def f() -> None:
                e.name, e.auto_name = v, auto
                self.events.library(lib).emit(LibraryChanged(lib, e.id))
            return f
        self._push(f"Rename {old} to {name}", setter(name, is_generated_name(lib, name, e.value)),
                   setter(old, old_auto))

    def remove(self, lib: str, entry_id: str) -> None:
        """Remove an item; engines that had chosen it are left without one (undo restores both)."""
        entries = self.entries(lib)
        e = self._entry(lib, entry_id)
        pos = entries.index(e)
        attr = "workload" if lib == "workloads" else "target"
        users = [n for n, c in self.engines.items() if getattr(c, attr) == entry_id]

        def do() -> None:
            entries.remove(e)
            for n in users:
                setattr(self.engines[n], attr, None)
            self.events.library(lib).emit(LibraryChanged(lib, e.id))
            for n in users:
                self.events.choice.emit(ChoiceChanged(n))

        def undo() -> None:
            entries.insert(pos, e)
            for n in users:
                setattr(self.engines[n], attr, e.id)
            self.events.library(lib).emit(LibraryChanged(lib, e.id))
            for n in users:
                self.events.choice.emit(ChoiceChanged(n))
        self._push(f"Delete {e.name}", do, undo)

    def set_value(self, lib: str, entry_id: str, value: Any, text: str = "") -> None:
        """Replace an item's value (an edit in its editor); quick successive edits merge."""
        e = self._entry(lib, entry_id)
        _check_kind(lib, value)
        if value == e.value:
            return
        old, old_name = e.value, e.name
        generated = generated_name(lib, value) if e.auto_name else None        # type: ignore[arg-type]
        name = self.unique_name(lib, generated, e.id) if generated else e.name

        def setter(v: Any, n: str) -> Any:
            def f() -> None:
                e.value, e.name = v, n
                self.events.library(lib).emit(LibraryChanged(lib, e.id))
            return f
        self._push(text or f"Edit {e.name}", setter(copy.deepcopy(value), name), setter(old, old_name),
                   ("value", lib, entry_id))

    def _entry(self, lib: str, entry_id: str) -> Entry:
        e = self.entry(lib, entry_id)
        if e is None:
            raise KeyError(f"no {lib[:-1]} with id {entry_id!r}")
        return e

    # ================================================================ engines
    def choice(self, engine: str) -> EngineChoice:
        """The engine's choice; an engine new to this project starts on its defaults and the first
        fitting library items it can run (not an undoable change: nothing was chosen before)."""
        if engine not in self.engines:
            spec = engines().get(engine)
            settings = spec.default_settings() if spec else {}
            c = EngineChoice(settings)
            if spec is not None:
                # the engine's first-listed kind first (MERIT: a transform before a kernel set)
                first = spec.preferred_workload or (lambda _w: False)
                fits = sorted(self.fitting(engine, "workloads"),
                              key=lambda e: (spec.workload_kinds.index(e.kind), not first(e.value)))
                why = spec.workload_problem or (lambda _w: None)
                c.workload = next((e.id for e in fits if why(e.value) is None), fits[0].id if fits else None)
                c.target = next((e.id for e in self.fitting(engine, "targets")), None)
            self.engines[engine] = c
        return self.engines[engine]

    def settings(self, engine: str) -> dict[str, Any]:
        return copy.deepcopy(self.choice(engine).settings)

    def set_setting(self, engine: str, key: str, value: Any) -> None:
        c = self.choice(engine)
        missing = key not in c.settings
        old = c.settings.get(key)
        if not missing and old == value and type(old) is type(value):
            return
        value = copy.deepcopy(value)

        def do() -> None:
            c.settings[key] = value
            self.events.settings.emit(SettingsChanged(engine, key))

        def undo() -> None:
            if missing:
                c.settings.pop(key, None)
            else:
                c.settings[key] = old
            self.events.settings.emit(SettingsChanged(engine, key))
        from core.display import setting_label      # the widget's label, never the key (issue 30)

        self._push(f"Change {setting_label(engine, key)}", do, undo, ("setting", engine, key))

    def replace_settings(self, engine: str, settings: dict[str, Any], text: str = "Change settings") -> None:
        c = self.choice(engine)
        if settings == c.settings:
            return
        old, new = c.settings, copy.deepcopy(settings)

        def setter(v: dict[str, Any]) -> Any:
            def f() -> None:
                c.settings = v
                self.events.settings.emit(SettingsChanged(engine))
            return f
        self._push(text, setter(new), setter(old))

    def choose(self, engine: str, lib: str, entry_id: str | None) -> None:
        c = self.choice(engine)
        attr = "workload" if lib == "workloads" else "target"
        old = getattr(c, attr)
        if old == entry_id:
            return
        if entry_id is not None:
            self._entry(lib, entry_id)

        def setter(v: str | None) -> Any:
            def f() -> None:
                setattr(c, attr, v)
                self.events.choice.emit(ChoiceChanged(engine))
            return f
        name = self._entry(lib, entry_id).name if entry_id else "nothing"
        self._push(f"Use {name}", setter(entry_id), setter(old))

    def fitting(self, engine: str, lib: str) -> list[Entry]:
        """Library items of the kinds the engine reads (in library order)."""
        kinds = _kinds(engines()[engine], lib)
        return [e for e in self.entries(lib) if e.kind in kinds]

    def fits(self, engine: str, lib: str, entry: Entry) -> bool:
        """Whether the engine can run this library item (its kind, and the engine's own test)."""
        return entry.kind in _kinds(engines()[engine], lib) and self.fits_value(engine, lib, entry.value)

    def fits_value(self, engine: str, lib: str, value: Any) -> bool:
        spec = engines()[engine]
        if lib == "workloads" and spec.workload_problem is not None:
            return spec.workload_problem(value) is None
        return True

    def chosen(self, engine: str, lib: str) -> Entry | None:
        c = self.choice(engine)
        return self.entry(lib, c.workload if lib == "workloads" else c.target)

    def problem(self, engine: str, lib: str) -> str | None:
        """Why the engine cannot run on its current workload (or target); None when it can."""
        spec = engines()[engine]
        kinds = _kinds(spec, lib)
        if not kinds:
            return None
        what = "workload" if lib == "workloads" else "target"
        names = " or ".join(KIND_TITLES[lib][k] for k in kinds)
        e = self.chosen(engine, lib)
        if e is None:
            have = "pick one" if self.fitting(engine, lib) else "the library has none: add one"
            return f"{spec.title} needs a {what} of kind {names}; {have}"
        if e.kind not in kinds:
            return f"{e.name!r} is a {KIND_TITLES[lib].get(e.kind, e.kind)}; {spec.title} runs {names}"
        if lib == "workloads" and spec.workload_problem is not None:
            return spec.workload_problem(e.value)
        return None

    def check_runnable(self, engine: str) -> None:
        """InputError (naming the workload or target) when the engine cannot run on its choice."""
        for lib, where in (("workloads", "workload"), ("targets", "target")):
            why = self.problem(engine, lib)
            if why:
                raise InputError(why, where)

    def request(self, engine: str) -> JobRequest:
        """What a run of the engine gets; InputError (naming workload or target) when it cannot run."""
        self.check_runnable(engine)
        w, t = self.chosen(engine, "workloads"), self.chosen(engine, "targets")
        return JobRequest(copy.deepcopy(w.value) if w else None, copy.deepcopy(t.value) if t else None,
                          self.settings(engine))

    # ================================================================ runs
    def run(self, run_id: str) -> Run:
        for r in self.runs:
            if r.id == run_id:
                return r
        raise KeyError(f"no run {run_id!r}")

    def runs_of(self, engine: str) -> list[Run]:
        return [r for r in self.runs if r.engine == engine]

    def latest(self, engine: str, finished: bool = True) -> Run | None:
        for r in reversed(self.runs):
            if r.engine == engine and (not finished or r.status == "finished"):
                return r
        return None

    def start_run(self, engine: str) -> Run:
        """Record a run about to start, with a snapshot of its setup; InputError if it cannot run."""
        self.check_runnable(engine)
        w, t = self.chosen(engine, "workloads"), self.chosen(engine, "targets")
        return self.begin_run(engine, w.snapshot() if w else None, t.snapshot() if t else None,
                              self.settings(engine))

    def begin_run(self, engine: str, workload: Snapshot | None, target: Snapshot | None,
                  settings: dict[str, Any], note: str = "", clock: bool = True, announce: bool = True) -> Run:
        """Record a run about to start with a given setup (its workload's and target's snapshots, kept
        as they are, and settings): a study's point, a part of a comparison, a retry
        (core.run_controller). With
        `clock`, its duration is measured here; without, the outcome's (a point on a Dask worker).
        Without `announce` (the caller finishes it at once), finishing it is its one event."""
        numbers = [int(r.id[1:]) for r in self.runs if r.id[:1] == "r" and r.id[1:].isdigit()]
        self._run_serial = max([self._run_serial, *numbers]) + 1
        run = Run(id=f"r{self._run_serial}", engine=engine, settings=copy.deepcopy(settings),
                  workload=workload, target=target, note=note)
        self.runs.append(run)
        if clock:
            self._run_clock[run.id] = time.monotonic()
        self._runs_dirty = True
        self._note_modified()
        if announce:
            self.events.run.emit(RunChanged(engine, run.id))
        return run

    def add_finished_run(self, engine: str, workload: Snapshot | None, target: Snapshot | None,
                         settings: dict[str, Any], outcome: RunOutcome, note: str = "") -> Run:
        """Record a run that ran elsewhere: its setup snapshots and its
        outcome, with what it streamed, recorded as any run's."""
        run = self.begin_run(engine, workload, target, settings, note, clock=False, announce=False)
        run.partial.update(copy.deepcopy(outcome.partial))
        run.series.update(copy.deepcopy(outcome.series))
        return self.finish_run(run.id, outcome)

    def request_of(self, run: Run) -> JobRequest:
        """The request a run was started with: copies of its snapshots' values (no JSON: the request's
        one JSON form is made where it crosses to a worker process)."""
        return JobRequest(copy.deepcopy(run.workload.value) if run.workload else None,
                          copy.deepcopy(run.target.value) if run.target else None, copy.deepcopy(run.settings))

    def record(self, run_id: str, events: list[Event]) -> None:
        """Keep what a running job streams (the last partial result of each kind and the plotted
        series) and announce the batch, so that the views showing the run draw it."""
        run = self.run(run_id)
        for ev in events:
            if isinstance(ev, PartialResult):
                run.partial[ev.kind] = ev.data
            elif isinstance(ev, MetricPoint):
                add_metric_point(run.series, ev, MAX_SERIES_POINTS)
        if events:
            self.events.record.emit(RunRecorded(run.engine, run.id, list(events)))

    # ================================================================ view state
    # `view` is the JSON object a session keeps; the window reads it through these, typed.
    def current_engine(self) -> str | None:
        """The engine whose tab was current (when saved, or last shown)."""
        name = self.view.get("current_engine")
        return name if isinstance(name, str) else None

    def compared(self) -> ComparedRuns | None:
        """The Compare tab open with the session (None: closed)."""
        c = self.view.get("compare")
        return ComparedRuns(list(c.get("runs") or []), bool(c.get("on_show"))) if isinstance(c, dict) else None

    def set_compared(self, compared: ComparedRuns | None) -> None:
        """Open (or close, None) the Compare tab in the view state kept with the session."""
        if compared is None:
            self.view.pop("compare", None)
        else:
            self.view["compare"] = {"runs": list(compared.runs), "on_show": compared.on_show}

    def shown_id(self, engine: str) -> str | None:
        """The id of the run the engine's tab shows, even when that run was just deleted."""
        run_id = (self.view.get("shown") or {}).get(engine)
        return run_id if isinstance(run_id, str) else None

    def shown(self, engine: str) -> Run | None:
        """The run the engine's tab shows (None: none, or it was deleted)."""
        run_id = self.shown_id(engine)
        try:
            return self.run(run_id) if run_id else None
        except KeyError:
            return None

    def show(self, engine: str, run_id: str | None) -> None:
        """Show this run in the engine's tab: view state, saved with the session but not an edit
        (no undo step, the session is not marked modified)."""
        self.run(run_id) if run_id else None            # KeyError for a run that does not exist
        shown = self.view.setdefault("shown", {})
        if shown.get(engine) == run_id and run_id is not None:
            return
        shown[engine] = run_id
        self.events.shown.emit(ShownChanged(engine, run_id))

    def finish_run(self, run_id: str, outcome: RunOutcome) -> Run:
        """Close a run with its outcome (core.lifecycle decided its status and error text): finished
        with its typed result, or failed / cancelled keeping what it made."""
        run = self.run(run_id)
        started = self._run_clock.pop(run_id, None)
        run.finished_at = now_iso()
        run.duration_s = outcome.duration_s if started is None else round(time.monotonic() - started, 3)
        run.status = outcome.status
        # the error in the window's words: a bad input names its field's label, not its key or flag
        run.error = None if outcome.error is None else error_words(run.engine, outcome.error)
        if "result" in outcome.partial:            # a result that did not read back through its type
            run.partial["result"] = outcome.partial["result"]
        if outcome.status == "finished" and outcome.result is not None:
            run.result = outcome.result
            run.headline = outcome.headline()
            # what it streamed on its way is in its result (Cain's plans are its improvements): a
            # finished run's views read the result, so the partial results are neither kept nor saved
            run.partial.clear()
        self._runs_dirty = True
        self._note_modified()
        self.events.run.emit(RunChanged(run.engine, run.id))
        return run

    def delete_run(self, run_id: str) -> None:
        """Delete a run (one undo step): a comparison naming it as a part marks that part deleted
        (core.comparison_record), and undo brings the run and the comparison's record back."""
        run = self.run(run_id)
        pos = self.runs.index(run)
        records: dict[str, Any] = {}

        def do() -> None:
            self.runs.remove(run)
            records.clear()
            records.update(forget_run(self.view, run.id))
            self.events.run.emit(RunChanged(run.engine, run.id))

        def undo() -> None:
            self.runs.insert(pos, run)
            restore_records(self.view, records)
            self.events.run.emit(RunChanged(run.engine, run.id))
        self._push(f"Delete run {run.id}", do, undo)

    def set_note(self, run_id: str, note: str) -> None:
        run = self.run(run_id)
        old = run.note

        def setter(v: str) -> Any:
            def f() -> None:
                run.note = v
                self.events.run.emit(RunChanged(run.engine, run.id))
            return f
        self._push(f"Note on {run.id}", setter(note), setter(old), ("note", run_id))

    def restore_setup(self, run_id: str) -> None:
        """Put a run's settings, workload and target back into its engine's tab (one undo step). A
        workload or target that is gone from the library, or was edited since, comes back as an item."""
        run = self.run(run_id)
        with self.macro(f"Restore the setup of {run.id}"):
            for lib, snap in (("workloads", run.workload), ("targets", run.target)):
                if snap is not None:
                    self.choose(run.engine, lib, self.adopt(lib, snap, run.id))
            self.replace_settings(run.engine, run.settings)

    def adopt(self, lib: str, snap: Snapshot, origin: str) -> str:
        """The library id of an item holding a snapshot's value: its own item when unchanged, else an
        equal item, else a new item named "<name> (<origin>)" (undoable, inside the caller's macro)."""
        value = snap.value
        e = self.entry(lib, snap.id)
        if e is not None and e.value == value:
            return e.id
        same = next((o for o in self.entries(lib) if o.value == value), None)
        return same.id if same else self.add(lib, f"{snap.name} ({origin})", copy.deepcopy(value))

    def open_program(self, engine: str, settings: dict[str, Any], workload: Snapshot | None,
                     origin: str, text: str) -> None:
        """Hand a program over to another engine (Cain's "Open in stepper"): its settings, and the
        workload it was made for (a snapshot) as that engine's chosen library item, in one undo step,
        so that a run there is recorded under the workload it really computes (issue 30)."""
        with self.macro(text):
            if workload is not None and workload.kind in engines()[engine].workload_kinds:
                self.choose(engine, "workloads", self.adopt("workloads", workload, origin))
            self.replace_settings(engine, {**self.settings(engine), **settings}, text)


def _kinds(spec: EngineSpec, lib: str) -> tuple[str, ...]:
    return spec.workload_kinds if lib == "workloads" else spec.target_kinds


def _check_kind(lib: str, value: Any) -> None:
    kind = getattr(value, "kind", None)
    if kind not in KIND_TITLES[lib]:
        raise InputError(f"not a {lib[:-1]}: {type(value).__name__}", lib)


# ================================================================ the starter library
def is_generated_name(lib: str, name: str, value: Any) -> bool:
    """Whether `name` is the one the item's kind makes from its values (so it follows them); an older
    session's starter item, which stored no such mark, counts as so named when its name is that one."""
    return name == generated_name(lib, value)        # type: ignore[arg-type]


def starter_workloads() -> list[tuple[str, Workload]]:
    """The items each workload kind starts a fresh project with, so that every engine runs before any
    edit (core.kinds)."""
    return starters("workloads")


def starter_targets() -> list[tuple[str, Target]]:
    return starters("targets")


def summary(value: Any) -> str:
    """A one-line description of a workload or target for the library browser (its kind's summary)."""
    kind = getattr(value, "kind", None)
    for lib in LIBS:
        found = kind_of(lib, kind) if isinstance(kind, str) else None
        if found is not None and isinstance(value, found.cls):
            return found.summary(value)
    return str(kind if kind is not None else value)
