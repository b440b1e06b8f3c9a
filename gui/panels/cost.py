"""The Target cost tab: one network costed on the target chosen in the bar (engine "cost"), layer by
layer, each figure beside its limit on the target; the settings are the budgets of the engines some
kinds are costed by (f-CNNx on an FPGA board, Cain on SCAMP-5)."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractItemView, QTableWidget, QTableWidgetItem, QWidget

from core.cost import Figure, LayerCost
from core.engine import EngineSpec
from core.numbers import format_number
from core.results import EngineResult
from core.target_cost.result import TargetCostResult
from gui.panels.base import PanelContext
from gui.panels.generic import GenericPanel

COLUMNS = ("layer", "MACs", "time", "time limit", "energy", "energy limit", "off-chip", "off-chip limit", "how")


def _cells(layer: LayerCost) -> list[str]:
    if layer.reason is not None:
        return [layer.name, format_number(layer.macs, ""), f"not run: {layer.reason}"] + [""] * 6

    def pair(f: Figure, unit: str) -> list[str]:
        return [format_number(f.value, unit), format_number(f.limit, unit)]
    return [layer.name, format_number(layer.macs, ""), *pair(layer.time_s, "s"), *pair(layer.energy_j, "J"),
            *pair(layer.offchip_bytes, "B"), layer.time_s.how]


class CostPanel(GenericPanel):
    engine_name = "cost"

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(engine, context, parent)
        self.binding.build_into(self.controls, list(engine.settings_schema["properties"]))
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setToolTip("Each layer's cost beside its limit on the target: the least any schedule could reach")
        self.tabs.insertTab(0, self.table, "Cost")
        self.tabs.setCurrentIndex(0)

    def show_result(self, result: EngineResult | None) -> None:
        super().show_result(result)
        self.table.setRowCount(0)
        if not isinstance(result, TargetCostResult):
            return
        rows = [*result.record.layers, result.record.total]
        self.table.setRowCount(len(rows))
        for i, layer in enumerate(rows):
            for j, text in enumerate(_cells(layer)):
                self.table.setItem(i, j, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()


PANEL = CostPanel
