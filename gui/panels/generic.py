"""A panel that works for any engine: its summary, a live plot of metric points, the result as a
tree, and JSON export. Engine panels subclass it and add their own views in `self.tabs`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (QFileDialog, QFrame, QHBoxLayout, QLabel, QPushButton, QScrollArea, QTabWidget,
                               QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from core.results import EngineResult, plain_parts
from core.atomic import atomic_write_text
from core.engine import EngineSpec
from core.jobs import Event, MetricPoint, PartialResult
from core.project import Run
from gui.flow_layout import FlowLayout
from gui.panels.base import EnginePanel, PanelContext
from gui.plotting import LIVE_REDRAW_S, LivePlot, ask_export_plot


class _TreeItem(QTreeWidgetItem):
    """A result row; `pending` holds the value whose rows are made when the row is first expanded."""

    pending: Any = None


def fill_tree(parent: QTreeWidgetItem | QTreeWidget, value: Any, key: str = "", depth: int = 1) -> None:
    """Show a result as tree rows: its typed parts (dataclasses, read a level at a time with
    core.results.plain_parts, so nothing is converted to JSON to be shown) or nested JSON data (long
    lists are cut to keep the widget fast). Rows below `depth` levels are made only when their parent
    is first expanded (`expand_pending`): a large result (f-CNNx's is about 0.8 MB as JSON) is shown at
    once instead of blocking the window."""
    value = plain_parts(value)
    if isinstance(value, dict):
        node = _TreeItem([key, "{…}" if value else "{}"])
    elif isinstance(value, (list, tuple)):
        node = _TreeItem([key, f"[{len(value)}]"])
        if all(isinstance(v, _SCALARS) for v in value) and len(value) <= 32:
            node.setText(1, json.dumps(list(value)))
            value = None
    else:
        node = _TreeItem([key, value if isinstance(value, str) else json.dumps(value, default=str)])
        value = None
    if value:
        if depth > 0:
            _fill_children(node, value, depth - 1)
        else:
            node.pending = value
            node.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
    if isinstance(parent, QTreeWidget):
        parent.addTopLevelItem(node)
    else:
        parent.addChild(node)


_SCALARS = (str, int, float, bool, type(None))


def _fill_children(node: QTreeWidgetItem, value: dict[str, Any] | list[Any] | tuple[Any, ...], depth: int) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            fill_tree(node, v, str(k), depth)
        return
    for i, v in enumerate(value[:200]):
        fill_tree(node, v, str(i), depth)
    if len(value) > 200:
        node.addChild(QTreeWidgetItem(["…", f"{len(value) - 200} more"]))


def expand_pending(item: QTreeWidgetItem) -> None:
    """Make the rows of a row expanded for the first time (connected to itemExpanded)."""
    if not isinstance(item, _TreeItem) or item.pending is None:
        return
    value, item.pending = item.pending, None
    item.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.DontShowIndicatorWhenChildless)
    _fill_children(item, value, 0)


def replay_events(run: Run) -> list[Event]:
    """The events a run streamed, rebuilt from what the project kept of them."""
    events: list[Event] = [MetricPoint(series, x, y, plot)
                           for plot, by_series in run.series.items()
                           for series, pts in by_series.items() for x, y in pts]
    events += [PartialResult(kind, data) for kind, data in run.partial.items()]
    return events


RESULT_VIEWS_MIN_H = 240       # px the result views keep (a plot's axis titles whole); the panel scrolls below it
MAX_WARNING_LINES = 4          # a result's warnings above the views; the rest in the tooltip


class _FillingLayout(QVBoxLayout):
    """A panel's content layout: its height follows the scroll area's view (down to its minimum), not
    the height its wrapped texts would prefer, which would make a tall screen scroll too."""

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt name)
        return False


class _LivePlotPage(QWidget):
    """The generic live plot's tab, its plot built when the tab is first shown (or the plot first used).
    The plot fills it and its size hints are the plot's, asked each time (as the tab's stack asks a
    page: a plot's minimum grows with its legend)."""

    def __init__(self, panel: GenericPanel) -> None:
        super().__init__()
        self._panel = panel
        self.plot: LivePlot | None = None

    def put(self, plot: LivePlot) -> None:
        self.plot = plot
        plot.setParent(self)
        plot.setGeometry(self.rect())
        plot.show()                     # now, not on the next event-loop pass: on show with its tab
        self.updateGeometry()

    def showEvent(self, event: Any) -> None:  # noqa: N802 (Qt name)
        self._panel.plot
        super().showEvent(event)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt name)
        super().resizeEvent(event)
        if self.plot is not None:
            self.plot.setGeometry(self.rect())

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        return self.plot.sizeHint() if self.plot is not None else super().sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt name)
        return self.plot.minimumSizeHint() if self.plot is not None else super().minimumSizeHint()


class GenericPanel(EnginePanel):
    # True while `show_run` replays what a run streamed before drawing its result: a view that the
    # result clears and draws whole (e.g. a design space) need not draw the streamed points first
    _result_follows = False

    def __init__(self, engine: EngineSpec, context: PanelContext, parent: QWidget | None = None) -> None:
        super().__init__(engine, context, parent)
        self._result: EngineResult | None = None      # the result on show; its JSON form only on export
        # the panel's content scrolls: a short tab (a bottom dock taking half a 768-pixel screen) keeps
        # every control and view whole, reached by scrolling, rather than holding the docks small
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.scroller = QScrollArea()
        self.scroller.setWidgetResizable(True)
        self.scroller.setFrameShape(QFrame.Shape.NoFrame)
        self.content = QWidget()
        self.scroller.setWidget(self.content)
        outer.addWidget(self.scroller)
        layout = _FillingLayout(self.content)
        self.summary = QLabel(engine.summary)
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.controls_bar = QWidget()
        self.controls = FlowLayout(self.controls_bar)   # subclasses add settings widgets here; rows wrap
        layout.addWidget(self.controls_bar)
        # the result's typed warnings (e.g. a kernel beyond SCAMP-5's analogue range), hidden when none
        self.result_warnings = QLabel()
        self.result_warnings.setObjectName("resultWarnings")
        self.result_warnings.setWordWrap(True)
        self.result_warnings.setTextFormat(Qt.TextFormat.PlainText)
        self.result_warnings.setStyleSheet("#resultWarnings { background: #fff1c2; color: #5c3c00; "
                                           "border: 1px solid #e0a800; padding: 4px; }")
        self.result_warnings.hide()
        layout.addWidget(self.result_warnings)
        self.tabs = QTabWidget()
        self.tabs.setMinimumHeight(RESULT_VIEWS_MIN_H)     # a short tab scrolls to its views, never squeezes them
        layout.addWidget(self.tabs, 1)
        page, title, self._plot = self._live_views()
        self._live_page = page
        self.tabs.addTab(page, title)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["field", "value"])
        self.tree.setColumnWidth(0, 260)
        self.tree.itemExpanded.connect(expand_pending)
        self.tabs.addTab(self.tree, "Result")
        buttons = QHBoxLayout()
        self.export_json_button = QPushButton("Export result JSON…")
        self.export_json_button.clicked.connect(self.export_json)
        self.export_json_button.setEnabled(False)
        self.export_plot_button = QPushButton("Export plot…")
        self.export_plot_button.clicked.connect(lambda: ask_export_plot(self, self.plot, self.engine.name))
        buttons.addWidget(self.export_json_button)
        buttons.addWidget(self.export_plot_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)

    def _live_views(self) -> tuple[QWidget, str, LivePlot | None]:
        """The first result tab (its page and title) and the live plot that a run's start clears and
        "Export plot…" writes: here one plot of the run's metric points, built when first used or its
        tab first shown (None here: most panels show their own views first, and a plot costs about
        10 ms). A panel with plots of its own returns them instead."""
        return _LivePlotPage(self), "Live plot", None

    def _live_plot(self) -> LivePlot:
        """The generic live plot, as its tab first needs it (a panel may title and label it)."""
        return LivePlot(title="Live metrics", redraw_interval_s=LIVE_REDRAW_S)

    @property
    def plot(self) -> LivePlot:
        """The live plot of the run's metric points (built into its tab when first wanted)."""
        if self._plot is None:
            self._plot = self._live_plot()
            assert isinstance(self._live_page, _LivePlotPage)
            self._live_page.put(self._plot)
        return self._plot

    def job_started(self) -> None:
        if self._plot is not None:      # a plot not built yet holds nothing to clear
            self._plot.clear_series()

    def handle_events(self, events: list[Event]) -> None:
        batch: dict[str, tuple[list[float], list[float]]] = {}
        for ev in events:
            if isinstance(ev, MetricPoint):
                xs, ys = batch.setdefault(ev.series, ([], []))
                xs.append(ev.x)
                ys.append(ev.y)
            elif isinstance(ev, PartialResult):
                self.handle_partial(ev)
        for series, (xs, ys) in batch.items():
            self.plot.add_points(series, xs, ys)

    def handle_partial(self, event: PartialResult) -> None:
        """Subclasses show intermediate results (e.g. the current best program)."""

    def tree_data(self, result: EngineResult) -> dict[str, Any]:
        """What the Result tab's tree lists: the result's fields, typed, unfolded a level at a time as
        rows are expanded (a panel may shorten it)."""
        return dict(plain_parts(result))

    def show_result(self, result: EngineResult | None) -> None:
        """The Result tab: the result as a tree; the export button writes its JSON form (made then)."""
        self._result = result
        self.show_warnings(result)
        self.tree.clear()
        self.export_json_button.setEnabled(result is not None)
        if result is not None:
            for k, v in self.tree_data(result).items():
                fill_tree(self.tree, v, k)
            self.tree.expandToDepth(0)

    def show_warnings(self, result: EngineResult | None) -> None:
        """Above the views: each warning the result carries (a `warnings` list of items with a
        `message`), so a cause such as a saturating kernel is read before the numbers it spoils."""
        lines = [f"⚠ {w.message}" for w in getattr(result, "warnings", None) or []]
        self.result_warnings.setVisible(bool(lines))
        shown = lines if len(lines) <= MAX_WARNING_LINES else \
            lines[:MAX_WARNING_LINES - 1] + [f"… and {len(lines) - MAX_WARNING_LINES + 1} more (hover to see all)"]
        self.result_warnings.setText("\n".join(shown))
        self.result_warnings.setToolTip("\n".join(lines) if shown != lines else "")

    def show_run(self, run: Run | None, **focus: Any) -> None:
        """Draw a run from the model: what it streamed (its live plot points and last partial
        results, so a running, failed or cancelled run shows where it is or where it stopped), then
        its result when it has one."""
        self.run = run
        self.show_result(None)
        self.job_started()
        if run is None:
            return
        self._result_follows = run.result is not None
        try:
            self.handle_events(replay_events(run))
        finally:
            self._result_follows = False
        if run.result is not None:
            self.show_result(run.result)

    def export_json(self) -> None:
        if self._result is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export result", f"{self.engine.name}-result.json", "JSON (*.json)")
        if path:
            atomic_write_text(Path(path), json.dumps(self._result.to_json(), indent=2))
