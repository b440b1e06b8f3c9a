"""The Runs view: every run the project keeps, in one sortable, filterable table.

The rows are core.compare.run_row, so the table, its CSV export and the comparison read the same
facts. The view follows the project's run events row by row, which keeps the selection while runs
start, finish or get deleted; what it does with a run (open, re-run, compare) the window decides.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any, Callable, Protocol

from PySide6.QtCore import QAbstractTableModel, QItemSelectionModel, QModelIndex, QPersistentModelIndex, \
    QSortFilterProxyModel, Qt
from PySide6.QtGui import QAction, QColor, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QFileDialog, QHBoxLayout, QHeaderView, QLineEdit,
                               QTableView, QToolBar, QVBoxLayout, QWidget)

from core.atomic import atomic_write_text
from core.compare import NOT_APPLICABLE, RUN_COLUMNS, format_value, run_row
from core.engine import engines
from core.metrics import DURATION
from core.project import RUN_STATUSES, Project
from core.project_events import Reset, RunChanged
from gui.follow import follow

SORT_ROLE = Qt.ItemDataRole.UserRole + 1      # the raw value: numbers sort as numbers
ID_ROLE = Qt.ItemDataRole.UserRole + 2        # the run's id, whatever the column
KEYS = [key for key, _ in RUN_COLUMNS]
NOTE_COLUMN = KEYS.index("note")
STATUS_COLUMN = KEYS.index("status")
STATUS_COLOURS = {"running": "#1f77b4", "finished": "#2ca02c", "failed": "#d62728", "cancelled": "#b36b00"}
NOT_APPLICABLE_COLOUR = "#888888"   # a finished run's metric its target cannot give: greyed, the reason in the tooltip

_Index = QModelIndex | QPersistentModelIndex


class RunsContext(Protocol):
    """What the Runs view asks of the window."""

    def open_run(self, run_id: str, **focus: Any) -> None: ...
    def rerun(self, run_id: str) -> None: ...
    def restore_setup(self, run_id: str) -> None:
        """Put the run's setup into its engine's tab to edit it and run again."""
        ...
    def compare(self, run_ids: list[str]) -> None: ...
    def log(self, message: str, level: str = "info") -> None: ...
    def status(self, message: str) -> None: ...


def cell_text(row: dict[str, Any], key: str) -> str:
    value = row[key]
    if key == "value" and row.get("value_text"):        # "not applicable" where a finished run has none
        return str(row["value_text"])
    if value is None:
        return ""
    if key == "duration_s" and isinstance(value, (int, float)):
        return DURATION.text(value)
    if key == "metric":                     # the headline's name and value as people read them
        return str(row.get("metric_label") or value)
    return format_value(value)


def not_applicable(row: dict[str, Any]) -> bool:
    """A finished run whose headline metric its result cannot give (a target that runs none of the
    network): its Value reads "not applicable", where a run with no such metric reads nothing."""
    return row["value"] is None and row.get("value_text") == NOT_APPLICABLE


class RunsModel(QAbstractTableModel):
    """project.runs as table rows (cached run_row dicts), kept in step with the project's events."""

    def __init__(self, project: Project, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.rows: list[dict[str, Any]] = [run_row(r) for r in project.runs]

    # ------------------------------------------------------------ the model interface
    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(RUN_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return RUN_COLUMNS[section][1]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole \
                and KEYS[section] in ("metric", "value"):
            return ("the first metric the run's engine declares, what its runs are compared by; "
                    "hover a cell for all of its metrics with their units")
        return None

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, key = self.rows[index.row()], KEYS[index.column()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return row[key] if role == Qt.ItemDataRole.EditRole and key == "note" else cell_text(row, key)
        if role == SORT_ROLE:
            return row[key]
        if role == ID_ROLE:
            return row["id"]
        if role == Qt.ItemDataRole.ForegroundRole and key == "status":
            return QColor(STATUS_COLOURS.get(row["state"], "#000000"))
        if role == Qt.ItemDataRole.ForegroundRole and key == "value" and not_applicable(row):
            return QColor(NOT_APPLICABLE_COLOUR)
        if role == Qt.ItemDataRole.ToolTipRole:
            if key == "status":
                return row["error"] or row["status"]
            if key == "settings":
                return row["settings_full"] or "the engine's defaults"
            if key in ("workload", "target") and row[f"{key}_tip"]:
                return row[f"{key}_tip"]            # its kind and what it holds ("CNN: LeNet-5")
            if key in ("metric", "value") and row.get("headline_text"):
                return row["headline_text"]             # every headline metric, with its unit
            return cell_text(row, key) or None
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        flags = super().flags(index)
        return flags | Qt.ItemFlag.ItemIsEditable if index.column() == NOTE_COLUMN else flags

    def setData(self, index: _Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or index.column() != NOTE_COLUMN:
            return False
        self.project.set_note(self.rows[index.row()]["id"], str(value))     # the run event redraws the row
        return True

    # ------------------------------------------------------------ following the project
    def row_of(self, run_id: str) -> int:
        return next((i for i, r in enumerate(self.rows) if r["id"] == run_id), -1)

    def sync(self, run_id: str | None = None) -> None:
        """Bring the rows in line with project.runs: rows removed and inserted one by one (views keep
        their selection), the changed run's row redrawn; with no run (a loaded session), all anew."""
        if run_id is None:
            self.beginResetModel()
            self.rows = [run_row(r) for r in self.project.runs]
            self.endResetModel()
            return
        new_ids = [r.id for r in self.project.runs]
        old_ids = [r["id"] for r in self.rows]
        kept = set(new_ids) & set(old_ids)
        if [i for i in old_ids if i in kept] != [i for i in new_ids if i in kept]:
            return self.sync(None)
        for pos in reversed(range(len(old_ids))):
            if old_ids[pos] not in kept:
                self.beginRemoveRows(QModelIndex(), pos, pos)
                del self.rows[pos]
                self.endRemoveRows()
        for pos, run in enumerate(self.project.runs):
            if run.id not in kept:
                self.beginInsertRows(QModelIndex(), pos, pos)
                self.rows.insert(pos, run_row(run))
                self.endInsertRows()
        if run_id in kept:
            pos = self.row_of(run_id)
            self.rows[pos] = run_row(self.project.run(run_id))
            self.dataChanged.emit(self.index(pos, 0), self.index(pos, len(RUN_COLUMNS) - 1))


def _natural(text: str) -> tuple[Any, ...]:
    """"r10" after "r9": digit runs compare as numbers."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text.lower()))


def sort_key(value: Any) -> tuple[Any, ...]:
    """Numbers before text, empty cells last."""
    if value is None or value == "":
        return (2,)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value))
    return (1, _natural(format_value(value)))


class RunsFilter(QSortFilterProxyModel):
    """Sorts by the raw values and keeps the rows that match the text, engine and status filters."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = ""
        self.engine: str | None = None
        self.state: str | None = None
        self.setSortRole(SORT_ROLE)

    def set_text(self, text: str) -> None:
        self._refilter(lambda: setattr(self, "text", text.strip().lower()))

    def set_engine(self, engine: str | None) -> None:
        """Only this engine's runs (None: all)."""
        self._refilter(lambda: setattr(self, "engine", engine))

    def set_state(self, state: str | None) -> None:
        """Only runs with this status (None: all)."""
        self._refilter(lambda: setattr(self, "state", state))

    def _refilter(self, change: Any) -> None:
        if hasattr(self, "beginFilterChange"):          # Qt >= 6.10
            self.beginFilterChange()
            change()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            change()
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: _Index) -> bool:
        model = self.sourceModel()
        assert isinstance(model, RunsModel)
        row = model.rows[source_row]
        if self.engine is not None and row["engine"] != self.engine:
            return False
        if self.state is not None and row["state"] != self.state:
            return False
        return not self.text or any(self.text in cell_text(row, k).lower() for k in KEYS)

    def lessThan(self, left: _Index, right: _Index) -> bool:
        return sort_key(left.data(SORT_ROLE)) < sort_key(right.data(SORT_ROLE))


class RunsView(QWidget):
    def __init__(self, project: Project, context: RunsContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project, self.context = project, context
        self.model = RunsModel(project, self)
        self.proxy = RunsFilter(self)
        self.proxy.setSourceModel(self.model)

        layout = QVBoxLayout(self)
        filters = QHBoxLayout()
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter: text in any column")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self.proxy.set_text)
        self.engine_combo = QComboBox()
        self.engine_combo.currentIndexChanged.connect(
            lambda _: self.proxy.set_engine(self.engine_combo.currentData()))
        self.status_combo = QComboBox()
        self.status_combo.addItem("All statuses", None)
        for s in RUN_STATUSES:
            self.status_combo.addItem(s, s)
        self.status_combo.currentIndexChanged.connect(
            lambda _: self.proxy.set_state(self.status_combo.currentData()))
        filters.addWidget(self.filter_edit, 1)
        filters.addWidget(self.engine_combo)
        filters.addWidget(self.status_combo)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(filters)

        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                   | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)   # fit the rows on show:
        # measuring every row on each change cost a study's hundreds of runs 0.1-0.3 s per run ended
        header.setResizeContentsPrecision(0)
        header.setMaximumSectionSize(260)
        header.setStretchLastSection(True)
        self.table.doubleClicked.connect(self._double_clicked)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_actions())
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)

        bar = QToolBar()
        self.open_action = self._action(bar, "Open", self.open_selected, "Show the run in its engine's tab")
        self.rerun_action = self._action(bar, "Re-run", self.rerun_selected, "Run again with the same setup")
        self.edit_action = self._action(bar, "Edit and re-run", self.edit_selected,
                                        "Put the run's workload, target and settings into its tab to change them")
        self.compare_action = self._action(bar, "Compare", self.compare_selected,
                                           "Compare the selected runs side by side (select two or more)")
        self.delete_action = self._action(bar, "Delete", self.delete_selected, "Delete the selected runs (Undo "
                                          "brings them back)")
        self.delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        bar.addSeparator()
        self.export_action = QAction("Export CSV…", self)
        self.export_action.triggered.connect(lambda: self.export_csv())
        bar.addAction(self.export_action)
        filters.addWidget(bar)              # one row with the filters: the dock stays short
        self.table.setMinimumHeight(48)
        layout.addWidget(self.table, 1)

        self._fill_engines()
        self.table.resizeColumnsToContents()
        self._update_actions()
        follow(self, project.events.run, self._run_changed)
        follow(self, project.events.reset, self._project_reset)

    def _action(self, bar: QToolBar, text: str, slot: Any, tip: str) -> QAction:
        action = QAction(text, self)
        action.setToolTip(tip)
        action.triggered.connect(lambda: slot())
        bar.addAction(action)
        self.table.addAction(action)
        return action

    # ------------------------------------------------------------ following the project
    def _run_changed(self, ev: RunChanged) -> None:
        self.model.sync(ev.id)
        self._fill_engines()
        self._update_actions()

    def _project_reset(self, _ev: Reset) -> None:
        keep = self.selected_ids()
        self.model.sync(None)
        if keep:
            self.select(keep)
        self._fill_engines()
        self._update_actions()

    def _fill_engines(self) -> None:
        """The engine filter offers every engine, and any engine a kept run names that is gone."""
        names = {n: s.title for n, s in engines().items()}
        names.update({r.engine: r.engine for r in self.project.runs if r.engine not in names})
        wanted = [("All engines", None)] + [(title, n) for n, title in names.items()]
        have = [(self.engine_combo.itemText(i), self.engine_combo.itemData(i)) for i in range(self.engine_combo.count())]
        if have == wanted:
            return
        current = self.engine_combo.currentData()
        self.engine_combo.blockSignals(True)
        self.engine_combo.clear()
        for title, name in wanted:
            self.engine_combo.addItem(title, name)
        self.engine_combo.setCurrentIndex(max(0, self.engine_combo.findData(current)))
        self.engine_combo.blockSignals(False)
        self.proxy.set_engine(self.engine_combo.currentData())

    # ------------------------------------------------------------ selection
    def selected_ids(self) -> list[str]:
        """The selected runs' ids, in the order shown."""
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [self.proxy.index(r, 0).data(ID_ROLE) for r in rows]

    def select(self, run_ids: list[str]) -> None:
        """Select these runs (those shown), replacing the selection."""
        sel = self.table.selectionModel()
        sel.clearSelection()
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for run_id in run_ids:
            src = self.model.row_of(run_id)
            if src >= 0:
                index = self.proxy.mapFromSource(self.model.index(src, 0))
                if index.isValid():
                    sel.select(index, flags)

    def _update_actions(self) -> None:
        ids = self.selected_ids()
        one = len(ids) == 1
        running = any(self.project.run(i).status == "running" for i in ids)
        self.open_action.setEnabled(one)
        self.rerun_action.setEnabled(one)
        self.edit_action.setEnabled(one)
        self.compare_action.setEnabled(len(ids) >= 2)
        self.delete_action.setEnabled(bool(ids) and not running)
        self.delete_action.setToolTip("A running run cannot be deleted: cancel it first" if running
                                      else "Delete the selected runs (Undo brings them back)")

    # ------------------------------------------------------------ actions
    def _double_clicked(self, index: QModelIndex) -> None:
        if index.column() != NOTE_COLUMN:            # the note column edits instead
            self.context.open_run(index.data(ID_ROLE))

    def _on_the_one_selected(self, act: Callable[[str], object]) -> None:
        """`act` on the selected run's id when exactly one run is selected (the actions for one run)."""
        ids = self.selected_ids()
        if len(ids) == 1:
            act(ids[0])

    def open_selected(self) -> None:
        self._on_the_one_selected(self.context.open_run)

    def rerun_selected(self) -> None:
        self._on_the_one_selected(self.context.rerun)

    def edit_selected(self) -> None:
        self._on_the_one_selected(self.context.restore_setup)

    def compare_selected(self) -> None:
        ids = self.selected_ids()
        if len(ids) >= 2:
            self.context.compare(ids)

    def delete_selected(self) -> None:
        ids = [i for i in self.selected_ids() if self.project.run(i).status != "running"]
        if not ids:
            return
        with self.project.macro(f"Delete run {ids[0]}" if len(ids) == 1 else f"Delete {len(ids)} runs"):
            for run_id in ids:
                self.project.delete_run(run_id)
        self.context.status(f"Deleted {', '.join(ids)}; Edit > Undo brings {'it' if len(ids) == 1 else 'them'} back")

    # ------------------------------------------------------------ export
    def csv_text(self) -> str:
        """The rows shown (filtered, in the shown order) as CSV, with the full settings and errors."""
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow([title for _, title in RUN_COLUMNS] + ["All settings", "Error"])
        for r in range(self.proxy.rowCount()):
            row = self.model.rows[self.proxy.mapToSource(self.proxy.index(r, 0)).row()]
            w.writerow([cell_text(row, k) for k in KEYS] + [row["settings_full"], row["error"]])
        return buf.getvalue()

    def export_csv(self, path: str | None = None) -> str | None:
        """Write csv_text to `path` (asked for when None); returns the path written, None if cancelled."""
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export runs", "runs.csv", "CSV (*.csv)")
        if not path:
            return None
        atomic_write_text(Path(path), self.csv_text())
        self.context.status(f"Runs exported to {path}")
        return path
