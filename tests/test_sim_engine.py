"""The "simulate" engine through its command-line path: results, noise, comparisons, bad input."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from core.simulate.result import SimulateResult
from core.engine import get_engine
from core.errors import InputError
from core.jobs import CancelToken, Cancelled, FinalResult, MetricPoint, Progress, run_foreground

REPO = Path(__file__).resolve().parents[1]
TABLE2 = str(REPO / "assets/programs/analognet2_cain_table2.txt")


def _parse(*argv: str) -> argparse.Namespace:
    spec = get_engine("simulate")
    parser = argparse.ArgumentParser()
    spec.add_cli_arguments(parser)
    return parser.parse_args(list(argv))


def _run(*argv: str) -> SimulateResult:
    spec = get_engine("simulate")
    outcome = run_foreground(spec.run(spec.request_from_cli(_parse(*argv)), CancelToken()), quiet=True)
    if outcome.error is not None:
        raise outcome.error
    r = outcome.result
    assert isinstance(r, SimulateResult)
    stored = json.loads(json.dumps(r.to_json(), allow_nan=False))     # session files and --json need plain JSON
    assert SimulateResult.from_json(stored) == r                        # and read back as the same result
    return r


def test_table2_program_runs_exactly_and_matches_analognet2() -> None:
    r = _run("--program", TABLE2, "--size", "48", "--filter", "analognet2-tool")
    assert r.exact is True and r.matches_interpreter is True
    assert r.program_length == 21 and r.bus_steps == 19 * 2 + 2 * 5
    assert r.output_registers == ["A", "B", "C"]
    for reg in "ABC":
        o = r.outputs[reg]
        assert o.rms_error == 0.0 and o.max_error == 0.0 and o.goal_matches_expected
        assert o.interior_pixels > 0.75 * 48 * 48
    assert r.outputs["B"].kernel[0] == ["-1", "-1/4", "1/4"]
    assert len(r.error_growth) == 22 and max(r.error_growth) == 0.0
    text = get_engine("simulate").format_text(r)
    assert "exact: true" in text and "21 instructions" in text


def test_wrong_filter_is_reported_not_exact() -> None:
    r = _run("--program", TABLE2, "--size", "32", "--filter", "analognet2")   # equation 1: -1 top right
    assert r.exact is False
    assert r.outputs["A"].max_error == 0.0 and r.outputs["B"].max_error > 0.1
    assert r.outputs["B"].goal_matches_expected is False


def test_noise_gives_seeded_errors() -> None:
    a = _run("--program", TABLE2, "--size", "32", "--noise", "0.005", "--seed", "7")
    b = _run("--program", TABLE2, "--size", "32", "--noise", "0.005", "--seed", "7")
    c = _run("--program", TABLE2, "--size", "32", "--noise", "0.005", "--seed", "8")
    assert a.exact is False and a.matches_interpreter is True   # the exact run still agrees
    assert a.noise.enabled and a.noise.seed == 7
    assert a.outputs["A"].rms_error == b.outputs["A"].rms_error > 0
    assert a.outputs["A"].rms_error != c.outputs["A"].rms_error
    assert a.error_growth[-1] > a.error_growth[1] > 0


def test_a_longer_program_for_the_same_kernels_has_more_error(tmp_path: Path) -> None:
    padded = Path(TABLE2).read_text() + "\n".join(["neg(D, A)", "neg(A, D)"] * 6) + "\n"
    longer = tmp_path / "padded.txt"
    longer.write_text(padded)
    r = _run("--program", TABLE2, "--size", "32", "--noise", "0.005", "--noise-mode", "per-op",
             "--compare", str(longer))
    comp = r.comparison
    assert comp is not None
    assert comp["program"].program_length == 21 and comp["padded"].program_length == 33
    assert comp["padded"].outputs[0].rms_error > comp["program"].outputs[0].rms_error
    assert comp["padded"].final_mean_rms_error > comp["program"].final_mean_rms_error
    assert "error at the end of each program" in get_engine("simulate").format_text(r)


def test_events_report_each_instruction_and_cancel_stops_the_run() -> None:
    spec = get_engine("simulate")
    req = spec.request_from_cli(_parse("--program", TABLE2, "--size", "24"))
    events = list(spec.run(req, CancelToken()))
    metrics = [e for e in events if isinstance(e, MetricPoint)]
    assert [m.x for m in metrics] == list(range(22))
    assert sum(isinstance(e, Progress) for e in events) >= 22
    assert isinstance(events[-1], FinalResult)
    token = CancelToken()
    job = spec.run(req, token)
    next(job)
    token.cancel()
    with pytest.raises(Cancelled):
        for _ in job:
            pass


def test_images_patterns_and_the_sample_load(tmp_path: Path) -> None:
    from PIL import Image

    path = tmp_path / "pic.jpg"
    Image.new("RGB", (40, 30), (200, 100, 50)).save(path)
    r = _run("--program", TABLE2, "--size", "16", "--image", str(path))
    assert r.exact and "pic.jpg" in r.image.description
    assert _run("--program", TABLE2, "--size", "16", "--image", "pattern:checker").exact
    assert "sample" in _run("--program", TABLE2, "--size", "16").image.description


@pytest.mark.parametrize("program, message, line", [
    ("mov(B, A)\nfrobnicate(A, B)\n", "unknown instruction", "line 2"),
    ("mov(B, A)\nadd(C, A)\n", "operands", "line 2"),
    ("# x\n\nneg(A, A)\n", "different registers", "line 3"),
    ("movx(B, A, up)\n", "direction", "line 1"),
    ("mov(B, Q)\n", "register", "line 1"),
])
def test_bad_programs_name_the_line(tmp_path: Path, program: str, message: str, line: str) -> None:
    f = tmp_path / "bad.txt"
    f.write_text(program)
    with pytest.raises(InputError) as err:
        _run("--program", str(f), "--size", "8")
    assert message in err.value.message and err.value.where == f"{f}:{line}"


def test_bad_files_and_arguments(tmp_path: Path) -> None:
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not a picture")
    with pytest.raises(InputError) as err:
        _run("--program", TABLE2, "--image", str(junk), "--size", "8")
    assert err.value.where == str(junk) and "cannot read image" in err.value.message
    with pytest.raises(InputError, match="not found"):
        _run("--program", str(tmp_path / "missing.txt"))
    with pytest.raises(InputError, match="unknown filter preset"):
        _run("--preset", "nosuchfilter")
    with pytest.raises(InputError, match="array size"):
        _run("--program", TABLE2, "--size", "2")
    with pytest.raises(InputError, match="holds no value"):
        f = tmp_path / "undefined.txt"
        f.write_text("add(A, B, C)\n")
        _run("--program", str(f), "--size", "8")


def test_settings_from_a_session_are_checked() -> None:
    spec = get_engine("simulate")
    from core.engine import JobRequest

    for bad, where in [({"noise": -1}, "settings.noise"), ({"program_source": "x"}, "settings.program_source"),
                       ({"bogus": 1}, "settings.bogus"), ({"noise_mode": "loud"}, "settings.noise_mode")]:
        with pytest.raises(InputError) as err:
            list(spec.run(JobRequest(None, None, bad), CancelToken()))
        assert err.value.where == where


def test_preset_runs_the_code_search_and_checks_its_approximation(monkeypatch: pytest.MonkeyPatch) -> None:
    api = pytest.importorskip("core.cain.api")
    search = api.compile_filter
    # the searches get a node budget (and a time limit far beyond it): a 1 s search finds nothing on a
    # machine busy enough, and what a node budget finds does not depend on the load
    monkeypatch.setattr(api, "compile_filter", lambda *a, **k: search(*a, **{**k, "time_s": 120.0, "max_nodes": 1500}))
    r = _run("--preset", "gauss3", "--time", "1", "--size", "24", "--compare", "auke")
    assert r.exact is True and r.matches_interpreter is True
    [reg] = r.output_registers
    o = r.outputs[reg]
    assert o.goal_matches_expected and o.kernel == [["1/16", "1/8", "1/16"], ["1/8", "1/4", "1/8"],
                                                    ["1/16", "1/8", "1/16"]]
    comp = r.comparison
    assert comp is not None
    assert comp["AUKE-style"].exact is True and comp["AUKE-style"].program_length >= 1
    assert {i.split("(")[0] for i in comp["AUKE-style"].program} <= {"mov", "movx", "add", "sub", "divq", "neg"}


def test_export_writes_every_step(tmp_path: Path) -> None:
    from PIL import Image

    r = _run("--program", TABLE2, "--size", "16", "--export", str(tmp_path / "run.gif"))
    assert r.exported == [str(tmp_path / "run.gif")]
    with Image.open(tmp_path / "run.gif") as im:
        assert im.n_frames == 22
    r = _run("--program", TABLE2, "--size", "16", "--export", str(tmp_path / "frames"))
    assert r.exported is not None and len(r.exported) == 22 and (tmp_path / "frames" / "step_021.png").exists()


# ------------------------------------------------------------------ workload, target and format 1
def _v1(settings: dict, workload: dict | None = None) -> dict:
    return {"format": "dataflow-explorer-session", "version": 1,
            "workload": workload or {"kind": "fpsp_filter", "preset": "analognet2"},
            "target": {"kind": "scamp5", "registers": 6, "array_size": 256},
            "engines": {"simulate": {"settings": settings}}}


def _chosen(project, lib: str):
    e = project.chosen("simulate", lib)
    return e.value if e else None


def test_v1_preset_size_and_registers_become_the_tabs_workload_and_target() -> None:
    from core.session import from_json
    from core.workload import FpspFilter, Scamp5Target

    p = from_json(_v1({"program_source": "preset", "preset": "gauss3", "filter": "", "size": 64, "registers": 8,
                       "noise": 0.01}))
    s = p.settings("simulate")
    assert _chosen(p, "workloads") == FpspFilter("gauss3") and _chosen(p, "targets") == Scamp5Target(8, 64)
    assert s["program_source"] == "search" and s["noise"] == 0.01
    assert not {"preset", "filter", "size", "registers"} & set(s)
    assert p.problem("simulate", "workloads") is None and p.request("simulate").settings == s


def test_v1_filter_becomes_the_workload_checked_against() -> None:
    from core.session import from_json
    from core.workload import FpspFilter

    p = from_json(_v1({"program_source": "file", "program_file": TABLE2, "preset": "", "filter": "analognet2-tool"}))
    assert _chosen(p, "workloads") == FpspFilter("analognet2-tool")
    assert p.settings("simulate")["reference"] == "workload"
    spec = get_engine("simulate")
    req = p.request("simulate")
    r = list(spec.run(type(req)(req.workload, type(req.target)(6, 24), req.settings), CancelToken()))[-1].data
    assert isinstance(r, SimulateResult)
    assert r.exact is True and r.outputs["B"].goal_matches_expected
    # no filter, no preset: the window's workload stays the choice and nothing is checked against it
    p = from_json(_v1({"program_source": "file", "preset": "", "filter": "", "size": None, "registers": None}))
    assert _chosen(p, "workloads") == FpspFilter("analognet2") and p.settings("simulate")["reference"] == "none"
    assert _chosen(p, "targets").array_size == 256
    # kernels pasted from a code search stay with their pasted program
    exp = {"denominator": 2, "kernels": [[[0, 0, 0], [0, 2, 2], [0, 0, 0]]]}
    p = from_json(_v1({"program_source": "text", "program_text": "add(C, A, B)", "expected": exp}))
    assert p.settings("simulate")["reference"] == "expected" and p.settings("simulate")["expected"] == exp


def test_the_kept_v1_example_session_replays_its_simulator_run() -> None:
    from core.simulate import replay
    from core.session import load

    p = load(REPO / "tests/data/sessions_v1/example_session.dfx")
    run = p.latest("simulate")
    assert run is not None and isinstance(run.result, SimulateResult)
    assert "preset" in run.result.settings                      # stored as format 1 wrote it
    rp = replay.from_result(run.result)
    assert rp.run.final.values["A"].shape == (256, 256) and len(rp.program.program) == 21
    assert "preset" not in p.settings("simulate") and "size" not in p.settings("simulate")


def test_workload_problem_names_multi_channel_kernels() -> None:
    from core.workload import Kernel, KernelSet

    spec = get_engine("simulate")
    assert spec.workload_problem(KernelSet("one", 1, [Kernel("k", [[1, 2, 1]])])) is None
    two = KernelSet("rgb", 1, [Kernel("k", [[[1]], [[2]]])])
    assert "several input channels" in spec.workload_problem(two)


@pytest.mark.slow
def test_cli_json_from_main() -> None:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "main.py", "simulate", "--program", TABLE2, "--filter", "analognet2-tool",
                          "--size", "24", "--registers", "6", "--json"], cwd=REPO, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["exact"] is True and r["array"]["size"] == 24 and r["settings"]["reference"] == "workload"
    out = subprocess.run([sys.executable, "main.py", "simulate", "--program", TABLE2, "--filter", "nosuch"],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and "unknown filter preset" in out.stderr


def test_the_stepper_replay_refuses_what_would_not_fit_in_memory() -> None:
    """The replay runs in the window's process (core.simulate.replay.GUI_COMPUTES), so it must be
    bounded: it keeps every step's planes, and a big array is refused naming the target's field."""
    from core.simulate import replay
    from core.simulate.engine import default_settings
    from core.workload import FpspFilter, Scamp5Target

    s = {**default_settings(), "program_source": "text", "program_text": "mov(B, A)\nadd(C, A, B)"}
    small = replay.build(s, Scamp5Target(registers=6, array_size=32), FpspFilter("sobel"))
    assert small.run.final.values["A"].shape == (32, 32)
    with pytest.raises(InputError) as exc:
        replay.build(s, Scamp5Target(registers=6, array_size=4096), FpspFilter("sobel"))
    assert exc.value.where == "target.array_size" and "GiB" in exc.value.message
