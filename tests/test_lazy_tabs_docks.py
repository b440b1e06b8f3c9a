"""The Targets tab's panel and the Studies dock's panel are built when first reached (their tab or
dock shown, or `window.targets_panel` / `window.study_panel` read), in their place; Run's state and
the progress bar are set only when they change."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _window(qtbot):
    from gui.main_window import MainWindow

    window = MainWindow(restore_layout=False)
    qtbot.addWidget(window)
    return window


def test_the_targets_panel_is_built_in_its_tab_when_the_tab_is_shown(qtbot) -> None:
    from gui.targets_panel import TargetsPanel

    window = _window(qtbot)
    window.show()
    assert window._targets_panel is None                    # not on show yet
    index = len(window.panels)
    assert window.tabs.tabText(index) == "Targets" and window.tabs.tabToolTip(index).startswith("Targets:")
    engine = window.tabs.currentIndex()
    changes: list[int] = []
    window.tabs.currentChanged.connect(changes.append)
    window.tabs.setCurrentIndex(index)
    panel = window._targets_panel
    assert isinstance(panel, TargetsPanel) and window.targets_panel is panel
    assert window.tabs.currentWidget() is panel and window.tabs.indexOf(panel) == index
    assert window.tabs.tabText(index) == "Targets" and window.tabs.tabToolTip(index).startswith("Targets:")
    assert panel.isVisible() and changes == [index]         # one tab change, not one per rebuild step
    assert window.current_engine() is None
    window.tabs.setCurrentIndex(engine)
    assert window.tabs.widget(index) is panel                # once


def test_the_targets_panel_read_by_code_is_built_behind_the_tab_on_show(qtbot) -> None:
    window = _window(qtbot)
    current = window.tabs.currentWidget()
    panel = window.targets_panel
    assert window.tabs.currentWidget() is current            # the tab on show stays
    assert window.tabs.indexOf(panel) == len(window.panels)
    assert window.tabs.count() == len(window.panels) + 1


def test_the_study_panel_is_built_when_its_dock_is_raised(qtbot) -> None:
    from PySide6.QtWidgets import QApplication

    from gui.study_panel import StudyPanel

    window = _window(qtbot)
    window.show()
    assert window._study_panel is None                      # its dock starts behind Runs
    window.study_dock.raise_()
    panel = window._study_panel
    assert isinstance(panel, StudyPanel) and window.study_dock.widget() is panel and panel.isVisible()
    assert window.study_panel is panel
    for _ in range(3):
        QApplication.processEvents()
    assert window.study_dock.height() >= 300                 # raised, it takes room as on every raise


def test_run_actions_are_set_when_they_change(qtbot) -> None:
    window = _window(qtbot)
    bar = window.progress_bar
    window._update_run_actions()
    assert bar.value() == bar.minimum() - 1 and window.act_run.isEnabled()
    bar.setRange(0, 1000)
    bar.setValue(400)
    window.elapsed_label.setText("1.0 s")
    window._update_run_actions()
    assert bar.value() == bar.minimum() - 1 and window.elapsed_label.text() == ""      # reset when not
    window.act_run.setToolTip("stale")
    window._run_actions_state = None                        # forgotten: set again
    window._update_run_actions()
    assert window.act_run.toolTip() == "Run the engine of the current tab"


def test_the_library_marks_what_the_tab_runs_and_follows_renames(qtbot) -> None:
    window = _window(qtbot)
    spec = window.current_engine()
    assert spec is not None
    tree = window.library.trees["workloads"]

    def bold() -> set[str]:
        return {tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())
                if tree.topLevelItem(i).font(0).bold()}

    chosen = window.project.chosen(spec.name, "workloads")
    assert chosen is not None and bold() == {chosen.name}
    window.project.rename("workloads", chosen.id, "Renamed in use")
    assert bold() == {"Renamed in use"}                      # the same item in use: named anew
    other = next(e for e in window.project.fitting(spec.name, "workloads") if e.id != chosen.id)
    window.project.choose(spec.name, "workloads", other.id)
    assert bold() == {other.name}


def test_a_choice_bar_lists_what_the_project_holds_after_each_refresh(qtbot) -> None:
    window = _window(qtbot)
    spec = window.current_engine()
    assert spec is not None
    bar = window.bars[spec.name]
    combo = bar.combos["workloads"]
    chosen = window.project.chosen(spec.name, "workloads")
    assert chosen is not None and combo.currentData() == chosen.id
    texts = [combo.itemText(i) for i in range(combo.count())]
    bar.refresh()                                           # nothing changed: the same rows
    assert [combo.itemText(i) for i in range(combo.count())] == texts and combo.currentData() == chosen.id
    combo.setCurrentIndex(combo.count() - 1 if combo.currentIndex() == 0 else 0)
    bar.refresh()                                           # the box says the project's choice again
    assert combo.currentData() == chosen.id
    window.project.rename("workloads", chosen.id, "Renamed")
    assert combo.currentText().startswith("Renamed  (")
