"""Shared fixtures: headless Qt, no modal dialogs, a private settings folder, and a small demo engine."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# One BLAS thread per test process (set before numpy is first imported, below): xdist already runs
# one process per core, and OpenBLAS's extra threads only spin for work on busy cores (the
# Cappuccino tests' numpy reference took 10 s of CPU instead of 6). Engine processes the tests start
# inherit it. Results do not depend on it (a product's element is summed by one thread either way).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import gc
import itertools

import pytest

from core import engine as engine_module
from tests.demo_engine import DEMO, demo_run  # noqa: F401  (demo_run: re-exported for the tests)


SLOW_MODULE = "pytestmark = pytest.mark.slow"


_GC_THRESHOLD = gc.get_threshold()


def pytest_configure(config):
    """The cyclic garbage collector runs between tests on the main thread, never on its own: run
    automatically it starts in whichever thread allocates next, and a worker thread (a run's
    thread, a comparison part, a Dask client) that frees a Qt widget's cycle from an earlier test
    deadlocks with the UI thread or crashes Qt (CI hung so in test_targets_tab, and segfaulted so
    before). The app does the same with a timer on its UI thread (gui.app.make_app)."""
    gc.disable()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After each test's fixtures are torn down: the generations due, as the automatic collector
    would (every 10th of the young one, every 100th a full one), on this, the main thread."""
    yield
    g0, g1, g2 = gc.get_count()
    t0, t1, t2 = _GC_THRESHOLD
    if g1 >= t1 and g2 >= t2:
        gc.collect(2)
    elif g1 >= t1:
        gc.collect(1)
    elif g0 >= t0:
        gc.collect(0)


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config):
    """An xdist worker ends here, once it has told the controller its tests are done (it did so at
    the end of pytest_sessionfinish): tearing down its heap (every window and plot the tests left,
    and Python's last collection) took 2-3 s that the whole run waited for, and nothing the run
    reports is left to write. First of the unconfigure hooks: pytest's unraisableexception plugin
    runs a full collection of the worker's heap in its own (0.2-0.3 s), for warnings nobody reads."""
    if os.environ.get("PYTEST_XDIST_WORKER") and hasattr(config, "workeroutput"):
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def pytest_ignore_collect(collection_path, config):
    """Under `-m "not slow"` (make test-fast) a test file whose every test is slow (a module-level
    `pytestmark = pytest.mark.slow` line) is not even imported: some build their cases at import
    (test_bad_inputs: about 2.5 s), and each xdist worker would pay that again."""
    if config.getoption("markexpr", "") != "not slow" or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    try:
        text = collection_path.read_text(encoding="utf-8")
    except OSError:
        return None
    return True if any(line.startswith(SLOW_MODULE) for line in text.splitlines()) else None


@pytest.fixture
def demo_engine(monkeypatch):
    """Registers the demo engine next to the real ones for one test."""
    registry = dict(engine_module.engines())
    registry = {"demo": DEMO, **registry}
    monkeypatch.setattr(engine_module, "_REGISTRY", registry)
    return DEMO


_HOMES = itertools.count()


@pytest.fixture(autouse=True)
def _private_qsettings(tmp_path_factory, monkeypatch):
    """A fresh, empty home and settings folder for each test. Not `tmp_path`: pytest makes each
    test's tmp_path by listing every earlier one (about a millisecond a test, growing with the suite),
    and most tests never look at their home."""
    home = tmp_path_factory.getbasetemp() / "homes" / str(next(_HOMES))
    home.mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("HOME", str(home))


@pytest.fixture(autouse=True)
def _no_modal_dialogs(monkeypatch):
    """A modal message box would wait forever headless: answer 'discard' and just record messages.
    Tests that check a message patch these again themselves."""
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    for name in ("warning", "critical", "information"):
        monkeypatch.setattr(QMessageBox, name, lambda *a, **k: QMessageBox.StandardButton.Ok)


@pytest.fixture
def misclassifying_program(monkeypatch):
    """The synthesised inexact program answers the next class for every image, so the run's check
    against numpy must fail (the reference program is left as it is)."""
    from core.cappuccino import synth

    real = synth.run_program

    def wrong(exe, *args, **kw):
        rr = real(exe, *args, **kw)
        if exe.name == "cappuccino":
            rr.predictions = [(p + 1) % 10 for p in rr.predictions]
        return rr

    monkeypatch.setattr(synth, "run_program", wrong)
