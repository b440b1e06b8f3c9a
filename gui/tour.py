"""A way in for a new user: the example session, a short tour of the window, and the first-launch
offer of the example (issue 30: Help had only About, and nothing said where to start).

The "launched before" mark lives in QSettings; `first_launch` takes the settings object, so tests
use a private file and never the real user's settings.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from core.engine import engines
from core.paths import ASSETS

EXAMPLE_SESSION = ASSETS / "example_session.dfx"
LAUNCHED_KEY = "launched_before"

# What each part of the window is for, in the order a new user meets them.
WINDOW_PARTS: tuple[tuple[str, str], ...] = (
    ("Library (left)", "The named workloads (kernels, filters, CNNs, CNN sets, MERIT transforms, layer specs) "
                       "and targets (SCAMP-5, FPGA board, dataflow accelerator, mobile SoC). Add, duplicate, "
                       "rename, import; the editor under the lists changes the selected item."),
    ("Engine tabs (centre)", "One tab per engine. The bar at the top of each says which workload and target it "
                             "runs and which of its runs is shown; Run (F5) starts it, Esc cancels."),
    ("Runs (bottom)", "Every run of the session, kept: open, re-run, edit and re-run, add a note, export CSV. "
                      "Select two or more and press Compare (Ctrl+D)."),
    ("Targets (a tab)", "One network (a zoo CNN or the library's ONNX CNN) costed on every target of the "
                        "library: latency, throughput, energy and off-chip traffic against each target's limit, "
                        "the best highlighted, the time per layer as bars; export CSV and PNG/SVG."),
    ("Compare runs (a tab)", "The compared runs' settings side by side with the differences first, their "
                             "metrics, and their live plots overlaid."),
    ("Studies (View > Studies)", "Parameter sweeps over an engine's settings, on this machine or a Dask "
                                 "cluster; every point becomes a run."),
)


def tour_html() -> str:
    """The tour's text: the window's parts, then what each engine's tab does (its own summary)."""
    parts = "".join(f"<li><b>{html.escape(t)}</b>: {html.escape(s)}</li>" for t, s in WINDOW_PARTS)
    tabs = "".join(f"<li><b>{html.escape(spec.title)}</b>: {html.escape(spec.summary)}</li>"
                   for spec in engines().values())
    return (f"<h3>The window</h3><ul>{parts}</ul>"
            f"<h3>The tabs</h3><ul>{tabs}</ul>"
            "<p>To look around without running anything: <b>Help &gt; Open example session</b> (seven finished "
            "runs, one or more per engine). Every engine also runs from the command line: "
            "<code>python main.py ENGINE --help</code>.</p>")


class TourDialog(QDialog):
    """Help > Tour: what each part of the window and each tab does."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Tour of Dataflow Explorer")
        self.resize(720, 560)
        lay = QVBoxLayout(self)
        self.text = QTextBrowser()
        self.text.setOpenExternalLinks(False)
        self.text.setHtml(tour_html())
        lay.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)


def first_launch(settings: QSettings) -> bool:
    """True the first time the app starts with these settings (and marks them launched)."""
    if str(settings.value(LAUNCHED_KEY, "false")).lower() == "true":
        return False
    settings.setValue(LAUNCHED_KEY, True)
    settings.sync()
    return True
