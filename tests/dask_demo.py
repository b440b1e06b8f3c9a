"""A Dask worker plugin that gives every worker of a cluster the tests' demo engine (as a study runs
it, tests.demo_engine.STUDY_DEMO), the worker a nanny starts again after one died included: a study
test can then run points that wait for its go-ahead instead of searches that take long enough."""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin


class DemoEngine(WorkerPlugin):
    name = "dfx-tests-demo-engine"

    def setup(self, worker: Any) -> None:
        from core.engine import engines
        from tests.demo_engine import STUDY_DEMO

        engines()["demo"] = STUDY_DEMO
