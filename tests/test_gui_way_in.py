"""Issue 30, "No way in": Help > Open example session and a tour of the tabs, the first launch's
offer of the example (remembered in settings the test owns, never the user's), and a natural image
as the stepper's default input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QMessageBox

EXAMPLE_RUNS = 7


@pytest.fixture
def window(qtbot):
    from gui.main_window import MainWindow

    w = MainWindow(restore_layout=False)
    qtbot.addWidget(w)
    w.show()
    yield w
    w.shutdown_jobs()


def menu_texts(window, title: str) -> list[str]:
    menu = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == title)
    return [a.text().replace("&", "") for a in menu.actions() if not a.isSeparator()]


def test_help_opens_the_example_session_as_an_untitled_copy(window):
    assert menu_texts(window, "Help")[:2] == ["Open example session", "Tour"]
    assert len(window.project.runs) == 0
    window.act_example.trigger()
    assert len(window.project.runs) == EXAMPLE_RUNS
    assert window.path is None and window.windowTitle().startswith("untitled")   # Save never overwrites it
    assert {r.engine for r in window.project.runs} >= {"cain", "simulate", "merit", "fcnnx", "bound"}


def test_the_tour_says_what_each_tab_does(window):
    window.act_tour.trigger()
    QApplication.processEvents()
    tour = window.tour
    assert tour.isVisible()
    text = tour.text.toPlainText()
    for i in range(window.tabs.count()):
        assert window.tabs.tabText(i) in text
    for part in ("Library", "Runs", "Compare runs", "Studies", "Open example session"):
        assert part in text


@pytest.fixture
def private_settings(tmp_path):
    """A settings file of the test's own: the real user's settings are never read or written."""
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def test_the_first_launch_offers_the_example_once(window, private_settings, monkeypatch, tmp_path):
    asked = []

    def answer(*args, **kw):
        asked.append(args[2])
        return QMessageBox.StandardButton.Yes
    monkeypatch.setattr(QMessageBox, "question", answer)
    assert window.offer_example(private_settings)
    assert len(asked) == 1 and "example session" in asked[0]
    assert len(window.project.runs) == EXAMPLE_RUNS
    assert not window.offer_example(private_settings)           # launched before: not asked again
    assert len(asked) == 1
    again = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    assert str(again.value("launched_before")).lower() == "true"         # kept in the file for next time


def test_declining_the_offer_keeps_the_empty_project(window, private_settings, monkeypatch):
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.No)
    assert not window.offer_example(private_settings)
    assert len(window.project.runs) == 0


def test_the_stepper_starts_on_a_natural_image(window, qtbot):
    from PIL import Image
    from sklearn.datasets import load_sample_image

    window.open_path(Path(__file__).resolve().parents[1] / "assets" / "example_session.dfx", ask=False)
    window.open_run("r2")                       # the simulator's run on the default input ("sample")
    stepper = window.panels["simulate"].stepper
    qtbot.waitUntil(lambda: stepper.replay is not None, timeout=60_000)
    levels = stepper.replay.levels
    n = levels.shape[0]
    grey = Image.fromarray(load_sample_image("china.jpg")).convert("L")
    w, h = grey.size
    s = min(w, h)
    grey = grey.crop(((w - s) // 2, (h - s) // 2, (w - s) // 2 + s, (h - s) // 2 + s))
    want = np.asarray(grey.resize((n, n), Image.Resampling.BOX), dtype=np.uint8)
    assert np.array_equal(levels, want), "the default input is scikit-learn's sample photo, grey, resized"
    assert "photo" in stepper.replay.image_description
    assert levels.std() > 40 and len(np.unique(levels)) > 150        # not planes of one colour


def test_the_example_session_file_is_shipped():
    from gui.tour import EXAMPLE_SESSION

    assert Path(EXAMPLE_SESSION).is_file()
