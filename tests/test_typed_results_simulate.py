"""The SCAMP-5 simulator builds its SimulateResult field by field (issue 29: JSON only at the process
and session boundaries), and the stored JSON stays what it was."""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path
from typing import Any

from core.engine import get_engine
from core.jobs import CancelToken, run_foreground
from core.simulate import engine as simulate_engine
from core.simulate.result import SimulateResult
from tests.typed_results import assert_reads_back

REPO = Path(__file__).resolve().parents[1]
TABLE2 = str(REPO / "assets/programs/analognet2_cain_table2.txt")
# noise, a saturation limit (analogue-range warnings) and a second program (the comparison): every
# optional part of the result but the exported pictures
ARGV = ("--program", TABLE2, "--size", "16", "--noise", "0.005", "--seed", "3", "--saturation", "0.5",
        "--compare", TABLE2, "--filter", "analognet2-tool")


def _run(*argv: str) -> Any:
    spec = get_engine("simulate")
    parser = argparse.ArgumentParser()
    spec.add_cli_arguments(parser)
    outcome = run_foreground(spec.run(spec.request_from_cli(parser.parse_args(list(argv))), CancelToken()),
                             quiet=True)
    if outcome.error is not None:
        raise outcome.error
    return outcome.result


def test_the_engine_yields_its_typed_result_and_its_json_reads_back_unchanged(monkeypatch) -> None:
    def refused(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the engine read its own result through from_json")

    monkeypatch.setattr(SimulateResult, "from_json", classmethod(refused))
    r = _run(*ARGV)
    monkeypatch.undo()
    assert type(r) is SimulateResult
    assert r.comparison is not None and r.warnings and r.noise.enabled
    stored = assert_reads_back(r)
    assert list(stored) == [f for f in SimulateResult.__dataclass_fields__ if f in stored]    # field order kept


def test_the_run_builds_no_json_on_the_way() -> None:
    for fn in (simulate_engine.run, simulate_engine.simulate_program):
        assert "from_json" not in inspect.getsource(fn)


def test_a_plain_run_writes_no_optional_keys() -> None:
    stored = _run("--program", TABLE2, "--size", "12").to_json()
    assert "comparison" not in stored and "exported" not in stored and stored["warnings"] == []
    assert SimulateResult.from_json(stored).to_json() == stored
