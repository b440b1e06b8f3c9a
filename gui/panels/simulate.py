"""Panel of the "simulate" engine: program and image choice, noise settings, and the stepping view."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFileDialog, QLabel, QLineEdit, QPlainTextEdit,
                               QPushButton, QSpinBox, QWidget)

from core.engine import EngineSpec
from core.errors import InputError
from core.filters import PRESETS
from core.fpsp_sim import replay as replays
from core.fpsp_sim import sources
from core.fpsp_sim.engine import default_settings
from gui.panels.base import PanelContext
from gui.panels.generic import GenericPanel
from gui.scamp5_outputs import OutputsView
from gui.scamp5_stepper import Scamp5Stepper
from sims.scamp5.images import PATTERNS

SOURCE_LABELS = {"file": "Program file", "text": "Pasted text", "preset": "Code search"}


class SimulatePanel(GenericPanel):
    engine_name = "simulate"

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(engine, context, parent)
        self._extra: dict[str, Any] = {}        # settings without a widget (kept from sessions)
        c = self.controls
        self.source = QComboBox()
        for key, label in SOURCE_LABELS.items():
            self.source.addItem(label, key)
        self.source.setToolTip("Where the program comes from")
        c.addWidget(self.source)
        self.file_edit = QLineEdit()
        self.file_edit.setPlaceholderText("program file")
        self.file_edit.setMinimumWidth(200)
        c.addWidget(self.file_edit, 2)
        self.browse = QPushButton("…")
        self.browse.setToolTip("Choose a program file")
        self.browse.clicked.connect(self._browse_program)
        c.addWidget(self.browse)
        self.preset = QComboBox()
        self.preset.addItem("(window's workload)", "")
        for name in PRESETS:
            self.preset.addItem(name, name)
        self.preset.setToolTip("Filter compiled by the code search when the source is 'Code search'")
        c.addWidget(self.preset)
        self.use_cain = QPushButton("Use code-search result")
        self.use_cain.setToolTip("Copy the program found by the code-search tab into the pasted text")
        self.use_cain.clicked.connect(self.use_code_search_result)
        c.addWidget(self.use_cain)
        c.addWidget(QLabel("Image:"))
        self.image = QComboBox()
        self.image.setEditable(True)
        self.image.addItem("sample")
        for p in PATTERNS:
            if p != "sample":
                self.image.addItem(f"pattern:{p}")
        self.image.setToolTip("'sample', pattern:NAME, or an image file path")
        c.addWidget(self.image)
        self.image_browse = QPushButton("…")
        self.image_browse.setToolTip("Choose an image file (PNG/JPEG)")
        self.image_browse.clicked.connect(self._browse_image)
        c.addWidget(self.image_browse)
        c.addWidget(QLabel("Noise:"))
        self.noise = QDoubleSpinBox()
        self.noise.setDecimals(4)
        self.noise.setRange(0.0, 0.2)
        self.noise.setSingleStep(0.001)
        self.noise.setToolTip("Write-noise factor per bus operation (0 = exact; Cain's emulator: 0.005)")
        c.addWidget(self.noise)
        self.noise_mode = QComboBox()
        self.noise_mode.addItems(["emulator", "per-op"])
        self.noise_mode.setToolTip("emulator: std accumulated per register, drawn on read-out; "
                                   "per-op: drawn at every bus operation")
        c.addWidget(self.noise_mode)
        self.compare = QComboBox()
        self.compare.setEditable(True)
        self.compare.addItems(["", "auke"])
        self.compare.setToolTip("Also run and compare: 'auke' (an AUKE-style search) or a second program file")
        self.compare.setMinimumWidth(80)
        c.addWidget(QLabel("Compare:"))
        c.addWidget(self.compare)
        c.addWidget(QLabel("Seed:"))
        self.seed = QSpinBox()
        self.seed.setRange(0, 2 ** 31 - 1)
        c.addWidget(self.seed)
        self.step_button = QPushButton("Step through")
        self.step_button.setToolTip("Simulate the file or pasted program now and open it in the stepper")
        self.step_button.clicked.connect(self.step_through_settings)
        c.addWidget(self.step_button)

        self.stepper = Scamp5Stepper()
        self.tabs.insertTab(0, self.stepper, "Stepper")
        self.outputs = OutputsView()
        self.tabs.insertTab(1, self.outputs, "Outputs")
        self.program_text = QPlainTextEdit()
        self.program_text.setPlaceholderText("Paste a program, one macro per line, e.g.\n# outputs: A\n"
                                             "movx(B, A, north)\nadd(A, A, B)")
        self.tabs.insertTab(2, self.program_text, "Program text")
        self.tabs.setCurrentIndex(0)
        for sig in (self.source.currentIndexChanged, self.preset.currentIndexChanged,
                    self.image.currentTextChanged, self.noise.valueChanged, self.noise_mode.currentIndexChanged,
                    self.seed.valueChanged, self.file_edit.textEdited, self.program_text.textChanged,
                    self.compare.currentTextChanged):
            sig.connect(self._edited)
        self.source.currentIndexChanged.connect(self._source_changed)
        self.set_settings(default_settings())

    # ------------------------------------------------------------------ settings
    def _edited(self, *_args: Any) -> None:
        self.settings_changed.emit()

    def _source_changed(self, *_args: Any) -> None:
        src = self.source.currentData()
        self.file_edit.setEnabled(src == "file")
        self.browse.setEnabled(src == "file")
        self.preset.setEnabled(src == "preset")
        self.step_button.setEnabled(src != "preset")
        if src != "text":
            self._extra["expected"] = None      # the code-search kernels belong to its pasted program
        if src == "text":
            self.tabs.setCurrentWidget(self.program_text)

    def settings(self) -> dict[str, Any]:
        s = default_settings()
        s.update(self._extra)
        s.update(program_source=self.source.currentData(), program_file=self.file_edit.text().strip(),
                 program_text=self.program_text.toPlainText(), preset=self.preset.currentData(),
                 image=self.image.currentText().strip() or "sample", noise=float(self.noise.value()),
                 noise_mode=self.noise_mode.currentText(), seed=int(self.seed.value()),
                 compare=self.compare.currentText().strip())
        return s

    def set_settings(self, settings: dict[str, Any]) -> None:
        s = default_settings()
        s.update(settings or {})
        widgets = ("program_source", "program_file", "program_text", "preset", "image", "noise", "noise_mode", "seed",
                   "compare")
        self._extra = {k: v for k, v in s.items() if k not in widgets}
        for w in (self.source, self.file_edit, self.program_text, self.preset, self.image, self.noise,
                  self.noise_mode, self.seed, self.compare):
            w.blockSignals(True)
        self.source.setCurrentIndex(max(0, self.source.findData(s["program_source"])))
        self.file_edit.setText(str(s["program_file"]))
        self.program_text.setPlainText(str(s["program_text"]))
        self.preset.setCurrentIndex(max(0, self.preset.findData(s["preset"])))
        self.image.setCurrentText(str(s["image"]))
        self.noise.setValue(float(s["noise"]))
        self.noise_mode.setCurrentText(str(s["noise_mode"]))
        self.seed.setValue(int(s["seed"]))
        self.compare.setCurrentText(str(s["compare"]))
        for w in (self.source, self.file_edit, self.program_text, self.preset, self.image, self.noise,
                  self.noise_mode, self.seed, self.compare):
            w.blockSignals(False)
        self._source_changed()

    def _browse_program(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Program file", "", "SCAMP-5 programs (*.txt *.s *.scamp5);;All files (*)")
        if path:
            self.file_edit.setText(path)
            self._edited()

    def _browse_image(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Image", "", "Images (*.png *.jpg *.jpeg *.bmp *.tif)")
        if path:
            self.image.setCurrentText(path)

    # ------------------------------------------------------------------ actions
    def use_code_search_result(self) -> bool:
        """Replay the code-search tab's program: its text (with input/output registers) goes into the
        pasted text, and its approximated kernels become the expected results."""
        result = self.context.result_of("cain")
        try:
            update = sources.settings_from_cain_result(result or {})
        except InputError:
            self.context.status("No code-search result yet: run the code search first.")
            return False
        self.set_settings(dict(self.settings(), **update))
        self.tabs.setCurrentWidget(self.program_text)
        self.settings_changed.emit()
        self.context.log(f"simulate: loaded the code-search program ({len(result['program'])} instructions)")
        return True

    def _target_size(self) -> tuple[int | None, int | None]:
        t = self.context.target()
        if t is not None and getattr(t, "kind", "") == "scamp5":
            return t.array_size, t.registers
        return None, None

    def step_through_settings(self) -> bool:
        """Simulate the current file/text program without a job (fast) and show it in the stepper."""
        size, regs = self._target_size()
        try:
            rp = replays.build(self.settings(), size=size, registers=regs)
        except InputError as exc:
            self.stepper.clear(f"Cannot simulate: {exc}")
            self.context.log(f"simulate: {exc}", "error")
            return False
        self.stepper.load(rp)
        self.tabs.setCurrentWidget(self.stepper)
        return True

    # ------------------------------------------------------------------ results
    def job_started(self) -> None:
        super().job_started()
        self.stepper.stop()

    def show_result(self, result: dict[str, Any] | None) -> None:
        super().show_result(result)
        if result is None:
            self.stepper.clear()
            self.outputs.clear()
            return
        try:
            rp = replays.from_result(result)
        except InputError as exc:
            self.stepper.clear(f"The stored result cannot be replayed here: {exc}")
            self.outputs.clear()
            return
        self.stepper.load(rp)
        self.outputs.load(rp, result)


PANEL = SimulatePanel
