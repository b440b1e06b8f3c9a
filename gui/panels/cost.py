"""The Target cost tab (engine "cost", core.target_cost): one network costed on one target, layer by layer.

Each part of the Targets tab's comparison is a run of this engine, so a click on a target there opens
its run here, as does a study point over target parameters: the summary (how it was costed, or why
the target cannot run the network) above a table of the record's layers and their total, each figure
with its limit and the percentage of the limit reached.
The settings are the comparison's budgets (the Cain and f-CNNx budgets, timing this machine).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from core.comparison import current_words
from core.cost import Figure
from core.engine import EngineSpec
from core.numbers import format_number
from core.results import EngineResult
from core.target_cost.result import TargetCostResult
from gui.panels.base import PanelContext
from gui.panels.generic import GenericPanel

SETTING_WIDGETS = ["measure", "scamp5_max_nodes", "scamp5_time_s", "fcnnx_max_joint"]
COLUMNS = ["Layer", "MACs", "Time (limit, % of it)", "Energy (limit, % of it)", "Off-chip (limit, % of it)", "How"]


def figure_text(f: Figure, unit: str) -> str:
    if f.value is None:
        return "-"
    text = format_number(f.value, unit)
    if f.limit is not None and f.value:
        text += f" ({format_number(f.limit, unit)}, {100 * f.limit / f.value:.3g}%)"
    return text


def _waiting_text(run: Any) -> str:
    """The headline of a tab with no result on show: the run on show's state where it has one."""
    if run is None:
        return "Run to cost the chosen network on the chosen target."
    what = " on ".join(s.name for s in (run.workload, run.target) if s is not None)
    if run.status == "running":
        return f"Costing {what}: its layers appear here when it ends."
    return f"{run.id} ({what}) {run.status} before any result."


class TargetCostPanel(GenericPanel):
    engine_name = "cost"

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(engine, context, parent)
        self.binding.build_into(self.controls, SETTING_WIDGETS)
        page = QWidget()
        lay = QVBoxLayout(page)
        self.headline = QLabel("Run to cost the chosen network on the chosen target.")
        self.headline.setWordWrap(True)
        self.layers = QTableWidget(0, len(COLUMNS))
        self.layers.setHorizontalHeaderLabels(COLUMNS)
        self.layers.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.layers.verticalHeader().setVisible(False)
        self.layers.resizeColumnsToContents()       # every heading whole before the first run
        lay.addWidget(self.headline)
        lay.addWidget(self.layers, 1)
        self.tabs.insertTab(0, page, "Layers")
        # the engine streams no metric points: an always-empty live plot (and its export) would mislead
        self.tabs.removeTab(self.tabs.indexOf(self._live_page))
        self.export_plot_button.hide()
        self.tabs.setCurrentIndex(0)

    def show_result(self, result: EngineResult | None) -> None:
        super().show_result(result)
        self.layers.setRowCount(0)
        run = getattr(self, "run", None)         # the target by its library name where the run is at hand
        if not isinstance(result, TargetCostResult):
            self.headline.setText(_waiting_text(run))
            self.layers.resizeColumnsToContents()       # the last run's wide reasons go with its rows
            return
        name = run.target.name if run is not None and run.result is result and run.target is not None else None
        engine = current_words(result.engine) if result.engine else "no engine"      # an older session's in today's words
        head = f"{result.network} on {name or result.target}, costed by {engine}: "
        if result.reason is not None:
            head += f"not run there: {result.reason}"
        else:
            note = result.note[:1].upper() + result.note[1:]
            head += f"{100 * result.covered_macs / max(1, result.macs):.4g}% of the MACs run. {note}"
        self.headline.setText(head)
        self.headline.setToolTip(result.record.target if result.record is not None else "")
        layers = [*result.record.layers, result.record.total] if result.record is not None else []
        self.layers.setRowCount(len(layers))
        for i, l in enumerate(layers):
            cells: list[Any] = [l.name, f"{l.macs:,}", figure_text(l.time_s, "s"), figure_text(l.energy_j, "J"),
                                figure_text(l.offchip_bytes, "B"), l.reason or l.time_s.how]
            for j, text in enumerate(cells):
                self.layers.setItem(i, j, QTableWidgetItem(str(text)))
        self.layers.resizeColumnsToContents()


PANEL = TargetCostPanel
