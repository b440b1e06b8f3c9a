"""The bar above each engine tab: exactly what the tab will run, and which run it shows.

It lists the library items of the kinds the engine reads (core.project.Project.fitting), writes the
user's pick to the project (undoable), and says in words when the current pick cannot run, with
one-click buttons for the items that fit (or to add one when the library has none).
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.engine import EngineSpec
from core.project import KIND_TITLES, LIBRARIES, Project, ProjectEvent, Run, starter_targets, starter_workloads

MAX_FIX_BUTTONS = 3
BANNER_STYLE = "background: #fff4e5; border: 1px solid #f0b429; padding: 4px;"


class ChoiceBar(QWidget):
    def __init__(self, project: Project, spec: EngineSpec, on_show_run: Callable[[str], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project, self.spec, self._on_show_run = project, spec, on_show_run
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.combos: dict[str, QComboBox] = {}
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
        project.changed.connect(self._project_changed)
        self.refresh()

    # ------------------------------------------------------------ model -> widgets
    def _project_changed(self, ev: ProjectEvent) -> None:
        if ev.kind in ("library", "reset") or (ev.kind == "choice" and ev.engine == self.spec.name) \
                or (ev.kind in ("run", "shown") and ev.engine == self.spec.name):
            self.refresh()

    def refresh(self) -> None:
        name = self.spec.name
        for lib, combo in self.combos.items():
            chosen = self.project.chosen(name, lib)
            items = self.project.fitting(name, lib)
            if chosen is not None and chosen not in items:
                items = [chosen] + items          # shown (and flagged) although it does not fit
            combo.blockSignals(True)
            combo.clear()
            for e in items:
                combo.addItem(f"{e.name}  ({KIND_TITLES[lib].get(e.kind, e.kind)})", e.id)
            if chosen is None:
                combo.insertItem(0, "(none chosen)", None)
                combo.setCurrentIndex(0)
            else:
                combo.setCurrentIndex(combo.findData(chosen.id))
            combo.blockSignals(False)
        self._refresh_runs()
        self._refresh_banner()

    def _refresh_runs(self) -> None:
        runs = self.project.runs_of(self.spec.name)
        self.runs_combo.blockSignals(True)
        self.runs_combo.clear()
        if not runs:
            self.runs_combo.addItem("no run yet", None)
        elif self.shown_run is None:
            self.runs_combo.addItem(f"none shown ({len(runs)} run(s): pick one)", None)
        for r in reversed(runs):
            self.runs_combo.addItem(run_title(r), r.id)
        i = self.runs_combo.findData(self.shown_run)
        self.runs_combo.setCurrentIndex(max(0, i))
        self.runs_combo.blockSignals(False)

    def _refresh_banner(self) -> None:
        problems = [(lib, why) for lib in LIBRARIES if (why := self.project.problem(self.spec.name, lib))]
        for b in self.fix_buttons:
            b.deleteLater()
        self.fix_buttons = []
        if not problems:
            self.banner.hide()
            return
        self.banner_text.setText("<b>Cannot run:</b> " + "; ".join(why for _, why in problems))
        for lib, _ in problems:
            fitting = self.project.fitting(self.spec.name, lib)
            chosen = self.project.chosen(self.spec.name, lib)
            for e in [e for e in fitting if chosen is None or e.id != chosen.id][:MAX_FIX_BUTTONS]:
                self._fix_button(f"Use {e.name}", lambda _c=False, lib=lib, i=e.id: self.project.choose(
                    self.spec.name, lib, i))
            if not fitting:
                kinds = self.spec.workload_kinds if lib == "workloads" else self.spec.target_kinds
                starters = starter_workloads() if lib == "workloads" else starter_targets()
                found = next(((n, v) for n, v in starters if v.kind in kinds), None)
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


def run_title(r: Run) -> str:
    head = next(iter(r.headline.items()), None)
    metric = f", {head[0]} {head[1]:g}" if head and isinstance(head[1], (int, float)) and not isinstance(
        head[1], bool) else ""
    partial = " (partial)" if r.is_partial else ""
    wl = (r.workload or {}).get("name", "")
    return f"{r.id} · {r.status}{partial}{metric} · {wl}"
