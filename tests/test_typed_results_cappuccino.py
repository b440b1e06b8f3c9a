"""Issue 29, typed results are the data: the Cappuccino engine builds CappuccinoResult, its synthesis
and its compiled programs directly (no dict on the way and no from_json inside the engine), and the
JSON form a session stores is unchanged by that: plain JSON values that read back to the same result."""

from __future__ import annotations

import argparse
import inspect

import pytest

from tests.typed_results import assert_reads_back

from core.cappuccino import engine as cappuccino_engine
from core.cappuccino import synth, synth_run
from core.cappuccino.result import CappuccinoResult
from core.errors import CheckFailed
from core.jobs import CancelToken, run_foreground

ENGINE = cappuccino_engine.ENGINE
needs_cc = pytest.mark.skipif(synth.find_compiler() is None, reason="no C compiler (gcc/cc/clang) on PATH")


def _refuse_from_json(*args, **kwargs):
    raise AssertionError("the engine must build its result, not read it from JSON")


def _run(monkeypatch, *argv: str):
    p = argparse.ArgumentParser()
    ENGINE.add_cli_arguments(p)
    req = ENGINE.request_from_cli(p.parse_args(list(argv)))
    monkeypatch.setattr(CappuccinoResult, "from_json", classmethod(_refuse_from_json))
    out = run_foreground(ENGINE.run(req, CancelToken()), quiet=True)
    monkeypatch.undo()
    assert isinstance(out.result, CappuccinoResult)
    return out


def _reads_back(r: CappuccinoResult) -> None:
    assert_reads_back(r, same_value=True)


def test_uncompiled_run_builds_its_result_and_reads_back(monkeypatch, tmp_path):
    out = _run(monkeypatch, "--no-compile", "--limit", "30", "--emit", str(tmp_path))
    assert out.error is None, out.error
    r = out.result
    assert r.synthesis.programs is None and r.synthesis.program_sizes and r.synthesis.emitted
    assert r.layers and r.layers[0].in_shape == tuple(r.layers[0].in_shape)
    _reads_back(r)


@pytest.mark.slow
@needs_cc
def test_compiled_run_builds_its_result_and_reads_back(monkeypatch):
    out = _run(monkeypatch, "--limit", "20", "--min-seconds", "0", "--repeats", "1", "--threads", "1")
    assert out.error is None, out.error
    r = out.result
    assert r.synthesis.programs and r.synthesis.speedups and r.classification_agreement
    assert set(r.synthesis.speedups) == set(r.synthesis.programs)      # a speed-up for every program built
    _reads_back(r)


@pytest.mark.slow
@needs_cc
def test_failed_check_still_yields_a_typed_result(monkeypatch, misclassifying_program):
    out = _run(monkeypatch, "--limit", "20", "--min-seconds", "0", "--repeats", "1", "--threads", "1")
    assert isinstance(out.error, CheckFailed)
    assert out.result.check_failed and out.result.summary.startswith("CHECK FAILED")
    _reads_back(out.result)


def test_engine_source_calls_no_from_json():
    for module in (cappuccino_engine, synth_run):
        src = inspect.getsource(module)
        assert "CappuccinoResult.from_json" not in src and ".from_json(result" not in src
