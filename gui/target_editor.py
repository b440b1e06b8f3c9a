"""The target model: SCAMP-5, an FPGA board, a dataflow accelerator or a mobile SoC."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QFormLayout, QSpinBox, QWidget

from core.boards import BOARDS
from core.workload import (TARGET_KINDS, DataflowTarget, FpgaTarget, MobileSocTarget, Scamp5Target,
                           Target)
from gui.kind_pages import KindPages


def _spin(lo: int, hi: int, value: int, suffix: str = "", step: int = 1) -> QSpinBox:
    s = QSpinBox()
    s.setRange(lo, hi)
    s.setValue(value)
    s.setSingleStep(step)
    if suffix:
        s.setSuffix(suffix)
    return s


class TargetEditor(KindPages):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(TARGET_KINDS, parent)

        d = Scamp5Target()
        self.s_registers = _spin(2, 26, d.registers)
        self.s_registers.setToolTip("Analogue registers A, B, C, ... (SCAMP-5 has six)")
        self.s_size = _spin(8, 4096, d.array_size, " px")
        self._page("scamp5", [("Registers", self.s_registers), ("Array size", self.s_size)])

        f = FpgaTarget()
        self.f_board = QComboBox()
        for key, b in BOARDS.items():
            self.f_board.addItem(f"{b.name} ({b.device})", key)
        self.f_bandwidth = QDoubleSpinBox()
        self.f_bandwidth.setRange(0.01, 1000.0)
        self.f_bandwidth.setDecimals(2)
        self.f_bandwidth.setSingleStep(0.1)
        self.f_bandwidth.setSuffix(" GB/s")
        self.f_bandwidth.setValue(f.bandwidth_gbps)
        self._page("fpga", [("Board", self.f_board), ("Off-chip bandwidth", self.f_bandwidth)])

        a = DataflowTarget()
        self.a_memory = _spin(1, 1 << 20, a.memory_bytes // 1024, " KiB")
        self.a_word = _spin(1, 64, a.word_bits, " bit")
        self.a_rows = _spin(1, 4096, a.pe_rows)
        self.a_cols = _spin(1, 4096, a.pe_cols)
        self._page("dataflow", [("On-chip memory", self.a_memory), ("Word", self.a_word),
                                     ("PE rows", self.a_rows), ("PE columns", self.a_cols)])

        m = MobileSocTarget()
        self.m_cores = _spin(1, 256, m.cores)
        self.m_vector = QComboBox()
        for w in (1, 2, 4, 8, 16):
            self.m_vector.addItem(f"{w} lanes (float32)", w)
        self.m_vector.setCurrentIndex(self.m_vector.findData(m.vector_width))
        self._page("mobile_soc", [("Cores", self.m_cores), ("Vector width", self.m_vector)])

        for w in (self.s_registers, self.s_size, self.a_memory, self.a_word, self.a_rows, self.a_cols,
                  self.m_cores):
            w.valueChanged.connect(lambda _v: self.changed.emit())
        self.f_bandwidth.valueChanged.connect(lambda _v: self.changed.emit())
        for c in (self.f_board, self.m_vector):
            c.currentIndexChanged.connect(lambda _i: self.changed.emit())

    def _page(self, kind: str, rows: list[tuple[str, QWidget]]) -> QWidget:
        page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 0, 0, 0)
        for label, w in rows:
            form.addRow(label, w)
        return self.add_page(kind, page)

    def target(self) -> Target:
        kind = self.current_kind()
        if kind == "scamp5":
            return Scamp5Target(self.s_registers.value(), self.s_size.value())
        if kind == "fpga":
            return FpgaTarget(self.f_board.currentData(), round(self.f_bandwidth.value(), 3))
        if kind == "dataflow":
            return DataflowTarget(self.a_memory.value() * 1024, self.a_word.value(), self.a_rows.value(),
                                  self.a_cols.value())
        return MobileSocTarget(self.m_cores.value(), self.m_vector.currentData())

    def set_target(self, t: Target) -> None:
        self.blockSignals(True)
        if isinstance(t, Scamp5Target):
            self.s_registers.setValue(t.registers)
            self.s_size.setValue(t.array_size)
        elif isinstance(t, FpgaTarget):
            self.f_board.setCurrentIndex(max(0, self.f_board.findData(t.board)))
            self.f_bandwidth.setValue(t.bandwidth_gbps)
        elif isinstance(t, DataflowTarget):
            self.a_memory.setValue(max(1, t.memory_bytes // 1024))
            self.a_word.setValue(t.word_bits)
            self.a_rows.setValue(t.pe_rows)
            self.a_cols.setValue(t.pe_cols)
        elif isinstance(t, MobileSocTarget):
            self.m_cores.setValue(t.cores)
            self.m_vector.setCurrentIndex(max(0, self.m_vector.findData(t.vector_width)))
        self.set_kind(t.kind)
        self.blockSignals(False)
