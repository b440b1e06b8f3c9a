"""Panel of the "simulate" engine: program and image choice, noise settings, and the stepping view.

Every settings widget is bound to the project (gui.binding). The tab's workload is what the code
search compiles and, when "Check against" says so, what a file or pasted program is compared with;
the tab's target is the pixel array (size, registers)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFileDialog, QPlainTextEdit, QPushButton, QToolButton, QWidget

from core.cain.result import CainResult
from core.results import EngineResult
from core.engine import EngineSpec
from core.errors import InputError
from core.simulate import replay as replays
from core.simulate import sources
from core.simulate.engine import SimulateSettings
from core.simulate.result import SimulateResult
from core.settings import held
from gui.panels.base import PanelContext
from gui.panels.generic import GenericPanel
from gui.panels.simulate.outputs import OutputsView
from gui.panels.simulate.stepper import Scamp5Stepper
from gui.plotting import LivePlot
from sims.scamp5.images import PATTERNS

SEARCH_KEYS = ("isa", "mode", "search_time_s")


class SimulatePanel(GenericPanel):
    engine_name = "simulate"

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(engine, context, parent)
        b, c = self.binding, self.controls
        self.source = b.build("program_source", QComboBox)
        c.addWidget(self.source)
        self.file_edit = b.build("program_file")
        self.file_edit.setMinimumWidth(200)
        c.addWidget(self.file_edit, 2)
        self.browse = QPushButton("…")
        self.browse.setToolTip("Choose a program file")
        self.browse.clicked.connect(self._browse_program)
        c.addWidget(self.browse)
        self.use_cain = QPushButton("Use code-search result")
        self.use_cain.setToolTip("Paste the newest code-search program (with its registers) into the program "
                                 "text, checked against its approximated kernels")
        self.use_cain.clicked.connect(self.use_code_search_result)
        c.addWidget(self.use_cain)
        b.build_into(c, [*SEARCH_KEYS, "reference", "input_register", "output_registers"])
        self.image = QComboBox()
        self.image.setEditable(True)
        self.image.addItems(["sample"] + [f"pattern:{p}" for p in PATTERNS if p != "sample"])
        c.addWidget(b.label("image"))
        c.addWidget(b.bind("image", self.image))
        self.image_browse = QPushButton("…")
        self.image_browse.setToolTip("Choose an image file (PNG/JPEG)")
        self.image_browse.clicked.connect(self._browse_image)
        c.addWidget(self.image_browse)
        b.build_into(c, ["noise", "noise_mode", "fixed_pattern", "saturation", "seed"])
        self.compare = QComboBox()
        self.compare.setEditable(True)
        self.compare.addItems(["", "auke"])
        self.compare.setMinimumWidth(80)
        c.addWidget(b.label("compare"))
        c.addWidget(b.bind("compare", self.compare))
        b.build_into(c, ["export"])
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
        b.bind("program_text", self.program_text)
        self.tabs.insertTab(2, self.program_text, "Program text")
        self.tabs.setCurrentIndex(0)
        # Stepping mode: the settings rows fold away so the planes' grid gets the height (at 1920x1080
        # every PE then gets at least one screen pixel); one click brings them back.
        self.settings_button = QToolButton()
        self.settings_button.setCheckable(True)
        self.settings_button.setChecked(True)
        self.settings_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.settings_button.toggled.connect(self.show_settings)
        self.settings_button.clicked.connect(lambda on: setattr(self, "_auto_fold", not on))
        self._auto_fold = True             # until the user opens the settings again by hand
        self.tabs.setCornerWidget(self.settings_button, Qt.Corner.TopRightCorner)
        self.show_settings(True)
        # a user's switch to pasted text shows the text (not an undo: binding updates emit nothing)
        self.source.currentIndexChanged.connect(self._source_picked)
        self._sync_enabled()

    # ------------------------------------------------------------------ settings
    def _live_plot(self) -> LivePlot:
        plot = super()._live_plot()
        plot.setTitle("Mean RMS error of the outputs after each instruction")
        plot.setLabel("bottom", "instruction")
        plot.setLabel("left", "RMS error (full scale = 1)")
        return plot

    def settings_changed(self) -> None:
        self._sync_enabled()

    def _sync_enabled(self) -> None:
        """Widgets that do nothing for the current program source are greyed out."""
        s = held(SimulateSettings, self.project.choice(self.engine.name).settings)
        src = s.program_source
        self.file_edit.setEnabled(src == "file")
        self.browse.setEnabled(src == "file")
        searching = src == "search" or str(s.compare).strip() == "auke"
        for key in SEARCH_KEYS:
            self.binding.widget(key).setEnabled(searching)
        for key in ("reference", "input_register", "output_registers"):
            self.binding.widget(key).setEnabled(src != "search")
        self.step_button.setEnabled(src != "search")

    def show_settings(self, on: bool) -> None:
        """Show or fold away the summary and the settings rows above the tabs."""
        if self.settings_button.isChecked() != on:
            self.settings_button.setChecked(on)          # re-enters through toggled
            return
        self.summary.setVisible(on)
        self.controls_bar.setVisible(on)
        self.settings_button.setText("Hide settings" if on else "Show settings")
        self.settings_button.setArrowType(Qt.ArrowType.UpArrow if on else Qt.ArrowType.DownArrow)
        self.settings_button.setToolTip("Fold the settings rows away to give the stepper more room" if on
                                        else "Show the simulator's settings (program, image, noise)")

    def _stepping(self, switch: bool = True) -> None:
        """A run went into the stepper: show it, with the room it needs (settings folded away, unless
        the user opened them by hand since)."""
        if switch:
            self.tabs.setCurrentWidget(self.stepper)
        if self._auto_fold and self.tabs.currentWidget() is self.stepper:
            self.show_settings(False)

    def _source_picked(self, *_args: Any) -> None:
        if self.source.currentData() == "text":
            self.tabs.setCurrentWidget(self.program_text)

    def _browse_program(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Program file", "", "SCAMP-5 programs (*.txt *.s *.scamp5);;All files (*)")
        if path:
            self.project.set_setting(self.engine.name, "program_file", path)

    def _browse_image(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Image", "", "Images (*.png *.jpg *.jpeg *.bmp *.tif)")
        if path:
            self.project.set_setting(self.engine.name, "image", path)

    # ------------------------------------------------------------------ actions
    def use_code_search_result(self) -> bool:
        """Replay the newest finished code search's program: its program file text goes into the
        pasted text, and its approximated kernels become what the outputs are checked against."""
        cain_run = self.project.latest("cain")
        result = cain_run.result if cain_run else None
        try:
            update = sources.settings_from_cain_result(result) if isinstance(result, CainResult) else None
        except InputError:                  # the search found no program
            update = None
        if not isinstance(result, CainResult) or update is None:
            self.context.status("No code-search result yet: run the code search first.")
            return False
        # and the kernels it was searched for become the tab's workload: a run is recorded under them
        self.project.open_program(self.engine.name, update, cain_run.workload if cain_run else None,
                                  cain_run.id if cain_run else "", "Use the code-search program")
        self.tabs.setCurrentWidget(self.program_text)
        self.context.log(f"simulate: loaded the code-search program ({len(result.program)} instructions)")
        return True

    def step_through_settings(self) -> bool:
        """Simulate the current file/text program without a job (fast) and show it in the stepper."""
        try:
            rp = replays.build(self.settings(), self.target(), self.workload())
        except InputError as exc:
            self.stepper.clear(f"Cannot simulate: {exc}")
            self.context.log(f"simulate: {exc}", "error")
            return False
        self.stepper.load(rp)
        self._stepping()
        return True

    # ------------------------------------------------------------------ results
    def job_started(self) -> None:
        super().job_started()
        self.stepper.stop()

    def show_run(self, run: Any, **focus: Any) -> None:
        """As for every panel; `step=i` shows the stepper at instruction i."""
        super().show_run(run, **focus)
        if "step" in focus:
            self.stepper.set_step(int(focus["step"]))

    def show_result(self, result: EngineResult | None) -> None:
        super().show_result(result)
        if result is None:
            self.stepper.clear()
            self.outputs.clear()
            return
        assert isinstance(result, SimulateResult)
        try:
            rp = replays.from_result(result)
        except InputError as exc:
            self.stepper.clear(f"The stored result cannot be replayed here: {exc}")
            self.outputs.clear()
            return
        self.stepper.load(rp)
        self.outputs.load(rp, result)
        self._stepping(switch=False)


PANEL = SimulatePanel
