"""Per output register of a simulated run: what the chip reads out, the ideal result, and the
error map (read-out minus ideal), with the RMS and maximum error over the interior PEs."""

from __future__ import annotations

from fractions import Fraction
import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from sims.scamp5.noise import UPPER_BOUND_MODE
from core.simulate.replay import Replay
from core.simulate.result import SimulateResult
from core.scamp5.analogue import ANALOGUE_RANGE
from core.scamp5.interp import SymKernel
from gui.plotting import diverging_colormap, theme
from sims.scamp5 import analysis
from sims.scamp5.images import FULL_SCALE


def kernel_from_text(rows: list[list[str]]) -> SymKernel:
    """The result's kernel (fraction strings, rows north to south) as an exact SymKernel (denominators
    limited as sims.scamp5.analysis.kernel_from_matrix limits them)."""
    return SymKernel.from_matrix([[Fraction(v).limit_denominator(1 << 20) for v in row] for row in rows])


class OutputsView(QWidget):
    """Three images per output register: read-out, ideal, error."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        self.info = QLabel("Run the simulator to see each output register against its ideal result.")
        self.info.setWordWrap(True)
        lay.addWidget(self.info)
        self.view = pg.GraphicsLayoutWidget()
        self.view.setBackground(theme().background)
        lay.addWidget(self.view, 1)
        self.maps: dict[str, dict[str, np.ndarray]] = {}

    def clear(self) -> None:
        self.view.clear()
        self.maps.clear()
        self.info.setText("Run the simulator to see each output register against its ideal result.")

    def load(self, replay: Replay, result: SimulateResult) -> None:
        """Draw from the replayed run and the result's kernels (the expected ones, not recomputed)."""
        self.view.clear()
        self.maps.clear()
        run = replay.run
        values = replay.levels.astype(float) / FULL_SCALE
        th = theme()
        self.view.setBackground(th.background)
        lut = diverging_colormap(th).getLookupTable(0.0, 1.0, 256)
        lines = []
        limit = result.noise.saturation if result.noise.saturation > 0 else ANALOGUE_RANGE
        for row, (reg, rep) in enumerate(result.outputs.items()):
            read = run.read_out(reg)
            ideal = analysis.ideal(values, kernel_from_text(rep.kernel))
            err = read - ideal
            self.maps[reg] = {"read-out": read, "ideal": ideal, "error": err}
            vmax = float(np.max(np.abs(ideal))) or 1.0
            emax = float(np.max(np.abs(err[run.final.valid[reg]]))) if run.final.valid[reg].any() else 0.0
            # an ideal beyond the analogue range cannot be read out: a clipped read-out gets the range
            # as its scale (on the ideal's it would be almost blank), and the labels say why
            clipped = vmax > limit and result.noise.saturation > 0
            notes = {"read-out": ": saturated" if clipped else f", saturates at ±{limit:g} on the chip",
                     "ideal": f", beyond the ±{limit:g} range", "error": ""} if vmax > limit else {}
            for col, (name, plane, lim) in enumerate((("read-out", read, limit if clipped else vmax),
                                                      ("ideal", ideal, vmax), ("error", err, emax or 1e-12))):
                self.view.addLabel(f"{reg} {name} (±{lim:.3g}{notes.get(name, '')})", row=2 * row, col=col,
                                   color=th.foreground)
                vb = self.view.addViewBox(row=2 * row + 1, col=col, lockAspect=True, enableMenu=False)
                vb.invertY(True)
                img = pg.ImageItem(plane.T, levels=(-lim, lim))
                img.setLookupTable(lut)
                vb.addItem(img)
            lines.append(f"{reg}: RMS {rep.rms_error:.4g}, max {rep.max_error:.4g} over "
                         f"{rep.interior_pixels} interior PEs; edge band {rep.edge_pixels} PEs "
                         f"(max {rep.edge_max_error:.3g})")
        exact = "exact" if result.exact else (f"noise on, {result.noise.model_label()}" if result.noise.enabled
                                              else "NOT exact")
        if result.noise.enabled and result.noise.mode == UPPER_BOUND_MODE:
            exact += (" (the published emulator's linear sum of noise: these errors are an upper bound, not an "
                      "estimate; 'per operation' gives the physical estimate)")
        self.info.setText(f"{exact}. " + "; ".join(lines) +
                          ". The error colour scale is the interior maximum; edge-band PEs may exceed it.")
