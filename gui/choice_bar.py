"""The bar above each engine tab: exactly what the tab will run, and which run it shows.

It lists the library items of the kinds the engine reads (core.project.Project.fitting), writes the
user's pick to the project (undoable), and says in words when the current pick cannot run, with
one-click buttons for the items that fit (or to add one when the library has none).
"""

from __future__ import annotations

import html
from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.engine import EngineSpec
from core.project import KIND_TITLES, LIBRARIES, Project, Run, starter_targets, starter_workloads
from core.project_events import EngineEvent
from gui.follow import follow

MAX_FIX_BUTTONS = 3
BANNER_STYLE = "background: #fff4e5; border: 1px solid #f0b429; padding: 4px;"
FAILED_STYLE = "background: #fdecea; border: 1px solid #d62728; padding: 4px;"
CANCELLED_STYLE = "background: #eef2f7; border: 1px solid #8a9bb0; padding: 4px;"


class ChoiceBar(QWidget):
    def __init__(self, project: Project, spec: EngineSpec, on_show_run: Callable[[str], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project, self.spec, self._on_show_run = project, spec, on_show_run
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.combos: dict[str, QComboBox] = {}
        self._listed: dict[int, list[tuple[str, str | None, str | None]]] = {}    # id(combo) -> its rows
        for lib, label in (("workloads", "Workload"), ("targets", "Target")):
            kinds = spec.workload_kinds if lib == "workloads" else spec.target_kinds
            row.addWidget(QLabel(f"<b>{label}:</b>"))
            if not kinds:
                note = QLabel("none (this engine's settings describe it)" if lib == "targets" else "none")
                note.setObjectName(f"no-{lib}")
                row.addWidget(note)
                continue
            combo = QComboBox()
            combo.setObjectName(f"choice-{lib}")
            combo.setMinimumContentsLength(14)
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setToolTip(f"The {label.lower()} this tab runs: library items of kind "
                             + " or ".join(KIND_TITLES[lib][k] for k in kinds))
            combo.activated.connect(lambda _i, lib=lib: self._picked(lib))
            self.combos[lib] = combo
            row.addWidget(combo, 1)
        row.addSpacing(16)
        row.addWidget(QLabel("<b>Showing:</b>"))
        self.runs_combo = QComboBox()
        self.runs_combo.setObjectName("shown-run")
        self.runs_combo.setMinimumContentsLength(16)
        self.runs_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.runs_combo.setToolTip("Which of this engine's runs the views below show (every run is kept)")
        self.runs_combo.activated.connect(self._run_picked)
        row.addWidget(self.runs_combo, 1)
        outer.addLayout(row)

        self.banner = QWidget()
        self.banner.setObjectName("choice-banner")
        self.banner.setStyleSheet(BANNER_STYLE)
        brow = QHBoxLayout(self.banner)
        brow.setContentsMargins(4, 2, 4, 2)
        self.banner_text = QLabel()
        self.banner_text.setWordWrap(True)
        brow.addWidget(self.banner_text, 1)
        self.fix_buttons: list[QPushButton] = []
        self._fix_row = brow
        outer.addWidget(self.banner)
        self.banner.hide()
        self.field_errors: list[str] = []       # settings fields whose text was not taken (the window's words)
        # How the run on show ended, when not finished: a failed run's error in the window's words,
        # a cancelled one marked as partial (issue 30: not only in a tooltip of the Runs view).
        self.run_state = QLabel()
        self.run_state.setObjectName("shown-run-state")
        self.run_state.setWordWrap(True)
        self.run_state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        outer.addWidget(self.run_state)
        self.run_state.hide()
        ev = project.events
        follow(self, ev.workloads, lambda _ev: self.refresh())
        follow(self, ev.targets, lambda _ev: self.refresh())
        follow(self, ev.reset, lambda _ev: self.refresh())
        follow(self, ev.choice, self._engine_changed)
        follow(self, ev.run, self._runs_changed)
        follow(self, ev.shown, self._runs_changed)
        self.refresh()

    # ------------------------------------------------------------ model -> widgets
    def _engine_changed(self, ev: EngineEvent) -> None:
        if ev.engine == self.spec.name:        # its choice
            self.refresh()

    def _runs_changed(self, ev: EngineEvent) -> None:
        if ev.engine == self.spec.name:        # one of its runs, or the run it shows: the picks and the
            self._refresh_runs()               # banner (choice and library) stay as they are
            self._refresh_run_state()

    def refresh(self) -> None:
        name = self.spec.name
        for lib, combo in self.combos.items():
            chosen = self.project.chosen(name, lib)
            items = self.project.fitting(name, lib)
            if chosen is not None and chosen not in items:
                items = [chosen] + items          # shown (and flagged) although it does not fit
            rows: list[tuple[str, str | None, str | None]] = [
                (f"{e.name}  ({KIND_TITLES[lib].get(e.kind, e.kind)})", e.id, None) for e in items]
            if chosen is None:
                rows.insert(0, ("(none chosen)", None, None))
            self._fill(combo, rows, None if chosen is None else chosen.id)
        self._refresh_runs()
        self._refresh_banner()
        self._refresh_run_state()

    def set_field_errors(self, texts: list[str]) -> None:
        """The settings fields whose text was not taken ('Tile: cannot read ...'): Run waits for them."""
        if texts != self.field_errors:
            self.field_errors = list(texts)
            self._refresh_banner()

    def _refresh_run_state(self) -> None:
        run = self.project.shown(self.spec.name)
        if run is None or run.status in ("finished", "running"):
            self.run_state.hide()
            self.run_state.setText("")
            return
        if run.status == "failed":
            self.run_state.setStyleSheet(FAILED_STYLE)
            text = f"<b>{run.id} failed:</b> {html.escape(run.error or 'no reason given')}"
            if run.is_partial:
                text += "<br>Below: what it made before it stopped (partial)."
        else:
            self.run_state.setStyleSheet(CANCELLED_STYLE)
            text = (f"<b>{run.id} was cancelled:</b> " + ("below is its partial result, what it had found when it "
                                                          "stopped." if run.is_partial else "it stopped before any "
                                                          "result."))
        self.run_state.setText(text)
        self.run_state.show()

    def run_state_text(self) -> str:
        """What the line about the run on show says (empty when it finished or runs)."""
        return self.run_state.text() if not self.run_state.isHidden() else ""

    def _refresh_runs(self) -> None:
        runs = self.project.runs_of(self.spec.name)
        rows: list[tuple[str, str | None, str | None]] = []
        if not runs:
            rows.append(("no run yet", None, None))
        elif self.shown_run is None:
            rows.append((f"none shown ({len(runs)} run(s): pick one)", None, None))
        rows += [(run_title(r), r.id, run_title(r, named=True)) for r in reversed(runs)]
        self._fill(self.runs_combo, rows, self.shown_run)

    def _fill(self, combo: QComboBox, rows: list[tuple[str, str | None, str | None]], current: str | None) -> None:
        """Fill a combo with (text, id, tooltip) rows, the one of id `current` (else the first) picked;
        not cleared and filled again when it lists these rows already (the bars refresh on every
        library and run event)."""
        combo.blockSignals(True)
        if self._listed.get(id(combo)) != rows or combo.count() != len(rows):
            self._listed[id(combo)] = rows
            combo.clear()
            for text, data, tip in rows:
                combo.addItem(text, data)
                if tip is not None:
                    combo.setItemData(combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        combo.setCurrentIndex(max(0, combo.findData(current)))
        combo.blockSignals(False)

    def _refresh_banner(self) -> None:
        problems = [(lib, why) for lib in LIBRARIES if (why := self.project.problem(self.spec.name, lib))]
        for b in self.fix_buttons:
            b.deleteLater()
        self.fix_buttons = []
        if not problems and not self.field_errors:
            self.banner.hide()
            return
        self.banner_text.setText("<b>Cannot run:</b> " + "; ".join(
            html.escape(why) for why in [*self.field_errors, *(why for _, why in problems)]))
        for lib, _ in problems:
            # only items the engine can run: a zoo network too big for Cappuccino is no fix
            fitting = [e for e in self.project.fitting(self.spec.name, lib) if self.project.fits(self.spec.name, lib, e)]
            chosen = self.project.chosen(self.spec.name, lib)
            for e in [e for e in fitting if chosen is None or e.id != chosen.id][:MAX_FIX_BUTTONS]:
                self._fix_button(f"Use {e.name}", lambda _c=False, lib=lib, i=e.id: self.project.choose(
                    self.spec.name, lib, i))
            if not fitting:
                kinds = self.spec.workload_kinds if lib == "workloads" else self.spec.target_kinds
                starters = starter_workloads() if lib == "workloads" else starter_targets()
                found = next(((n, v) for n, v in starters if v.kind in kinds
                              and self.project.fits_value(self.spec.name, lib, v)), None)
                if found is not None:
                    self._fix_button(f"Add {found[0]}", lambda _c=False, lib=lib, f=found: self._add_and_use(lib, *f))
        self.banner.show()

    def _fix_button(self, text: str, slot: Callable[..., None]) -> None:
        b = QPushButton(text)
        b.clicked.connect(slot)
        self._fix_row.addWidget(b, 0, Qt.AlignmentFlag.AlignRight)
        self.fix_buttons.append(b)

    # ------------------------------------------------------------ widgets -> model
    def _picked(self, lib: str) -> None:
        entry_id = self.combos[lib].currentData()
        if entry_id is not None:
            self.project.choose(self.spec.name, lib, entry_id)

    def _add_and_use(self, lib: str, name: str, value: object) -> None:
        with self.project.macro(f"Add {name}"):
            entry_id = self.project.add(lib, name, value)
            self.project.choose(self.spec.name, lib, entry_id)

    def _run_picked(self, _index: int) -> None:
        run_id = self.runs_combo.currentData()
        if run_id is not None:
            self._on_show_run(run_id)

    @property
    def shown_run(self) -> str | None:
        """The id of the run the tab shows (project view state)."""
        run = self.project.shown(self.spec.name)
        return run.id if run else None

    def problem_text(self) -> str:
        """What the banner says (empty when the tab can run)."""
        return self.banner_text.text() if not self.banner.isHidden() else ""


def run_title(r: Run, named: bool = False) -> str:
    """A run in one line for the "Showing" box: its id, how it ended, its headline metric and its
    workload. A per-item metric (f-CNNx's frames per second per CNN) names its items only when
    `named` (the item's tooltip): the names make the line wider than any popup."""
    from core.compare import item_text
    from core.display import lead

    head = lead(r.engine, r.headline)
    metric = ""
    if head is not None and head[1] is not None:
        metric = f", {head[0].title} {head[0].text(head[1], r.result if named else None)}"
    partial = " (partial)" if r.is_partial else ""
    wl = item_text("workloads", r.workload)         # as the Runs table names it
    return f"{r.id} · {r.status}{partial}{metric} · {wl}"
