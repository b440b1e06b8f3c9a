"""Study files and results files as a careful user (or a fuzzer) would give them (issue 34): every
bad one is refused before anything runs, with the field or flag named, and no user file is ever
moved, renamed or emptied by a study that fails."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from core.errors import InputError
from core.study import results_file, spec
from core.study.runner import StudyRunner

BOUND = {"name": "two layers", "engine": "bound",
         "workload": {"kind": "conv_layers", "layers": ["Ci=4,Hi=8,Wi=8,Co=4,Hk=3"]},
         "target": {"kind": "dataflow", "memory_bytes": 65536, "word_bits": 16, "pe_rows": 16, "pe_cols": 16},
         "settings": {"sweep": False}, "axes": [{"param": "target.memory_bytes", "values": [4096, 8192]}],
         "metrics": ["optimal_traffic"]}


def _refused(doc: Any) -> InputError:
    with pytest.raises(InputError) as exc:
        spec.from_json(copy.deepcopy(doc))
    return exc.value


def test_an_axis_over_a_field_no_item_has_is_refused():
    """Workload and target readers refused no unknown key, so a typo ran the same point every time."""
    e = _refused({**BOUND, "axes": [{"param": "target.memory_byte", "values": [4096, 8192]}]})
    assert e.where.startswith("study.axes[0]") and "did you mean 'memory_bytes'" in e.message
    e = _refused({**BOUND, "axes": [{"param": "workload.layer", "values": [["Ci=4,Hi=8,Wi=8,Co=4,Hk=3"]]}]})
    assert e.where.startswith("study.axes[0]") and "did you mean 'layers'" in e.message
    e = _refused({**BOUND, "target": {**BOUND["target"], "registers": 6}})     # a SCAMP-5 field on a dataflow target
    assert e.where.startswith("study.target") and "registers" in e.message


@pytest.mark.parametrize("extra", [{"combine": "zip", "repeats": 1000,
                                    "axes": [{"param": "target.memory_bytes", "range": {"from": 4096, "to": 4096 + 999, "step": 1}}]},
                                   {"combine": "random", "samples": 100_000, "repeats": 1000,
                                    "axes": [{"param": "target.memory_bytes", "values": [4096, 8192]}]}])
def test_every_combination_is_capped_before_points_are_built(extra):
    """The cap held for grids only: zip or random with repeats asked for 10^8 points and hung. A
    refusal comes before any point is built, so it is quick however large the request."""
    e = _refused({**BOUND, **extra})
    assert "at most" in e.message and e.where in ("study.repeats", "study.samples", "study.axes")


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 12):
        lines.append(f"{chr(97 + i)}: &{chr(97 + i)} [" + ",".join([f"*{chr(96 + i)}"] * 9) + "]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\nengine: bound\n")
    with pytest.raises(InputError) as exc:         # before: the reader never came back
        spec.load(path)
    assert "alias" in exc.value.message and exc.value.where.startswith(str(path))


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_numbers_in_a_study_are_refused(value):
    doc = {**BOUND, "settings": {"sweep": False, "batch": value}}
    e = _refused(json.loads(json.dumps(doc)))       # what json.loads makes of NaN / Infinity in a file
    assert e.where == "study.settings.batch"


def test_a_study_file_that_is_not_a_regular_file_is_refused(tmp_path):
    with pytest.raises(InputError) as exc:
        spec.load(tmp_path)
    assert "regular file" in exc.value.message


def _study(tmp_path: Path) -> spec.Study:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(BOUND))
    return spec.load(path)


def test_out_naming_a_folder_is_refused_and_the_folder_is_untouched(tmp_path):
    """--out naming an existing folder renamed the user's folder to .bak and wrote a file there."""
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "mine.txt").write_text("keep me")
    with pytest.raises(InputError) as exc:
        StudyRunner(_study(tmp_path), "local:1", folder)
    assert exc.value.where == "--out" and "folder" in exc.value.message
    assert (folder / "mine.txt").read_text() == "keep me" and not (tmp_path / "results.bak").exists()


def test_out_where_nothing_can_be_written_is_refused(tmp_path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a folder")
    with pytest.raises(InputError) as exc:
        StudyRunner(_study(tmp_path), "local:1", blocker / "out.jsonl")
    assert exc.value.where == "--out" and "not a folder" in exc.value.message


def test_a_failed_start_leaves_the_previous_results_where_they_were(tmp_path, monkeypatch):
    """An unreachable cluster moved the results to .bak and wrote a header-only file before
    connecting: after one good run and two failed attempts no file held a finished record."""
    out = tmp_path / "s.results.jsonl"
    good = [{"type": "header", "format": results_file.FORMAT, "study": "x"},
            {"type": "point", "key": "k1", "index": 0, "params": {}, "status": "finished", "metrics": {}}]
    text = "".join(json.dumps(r) + "\n" for r in good)
    out.write_text(text)

    def unreachable(self: StudyRunner) -> None:
        raise InputError("cannot reach a Dask scheduler there: refused", "--cluster")

    monkeypatch.setattr(StudyRunner, "_start", unreachable)
    for _ in range(2):
        summary = StudyRunner(_study(tmp_path), "tcp://127.0.0.1:9", out).run()
        assert summary.error and "cannot reach" in summary.error
    assert out.read_text() == text and not out.with_name(out.name + ".bak").exists()


@pytest.mark.parametrize("content, says", [
    (b"\x8b\x00\xffrandom bytes\n" * 3, "line 1"),
    (b'{"type":"point","key":"k","index":"zero","params":{},"status":"finished"}\n{"type":"header"}\n',
     "'index' must be an integer"),
    (b'{"type":"point","key":"k","index":0,"params":{},"status":"done"}\n{"type":"header"}\n', "'status'"),
    (b'[1, 2, 3]\n{"type":"header"}\n', "expected a record"),
    (b'{"type":"tally"}\n{"type":"header"}\n', "unknown record type"),
])
def test_resume_checks_every_record_and_names_its_line(tmp_path, content, says):
    out = tmp_path / "s.results.jsonl"
    out.write_bytes(content)
    with pytest.raises(InputError) as exc:
        StudyRunner(_study(tmp_path), "local:1", out, resume=True)
    assert exc.value.where == "--resume" and says in exc.value.message and "line" in exc.value.message
    assert out.read_bytes() == content


def test_resume_from_a_folder_is_refused(tmp_path):
    folder = tmp_path / "r"
    folder.mkdir()
    with pytest.raises(InputError) as exc:
        StudyRunner(_study(tmp_path), "local:1", folder, resume=True)
    assert exc.value.where in ("--out", "--resume")


def test_the_command_line_says_it_in_one_line_with_exit_2(tmp_path, capsys):
    from main import main

    path = tmp_path / "s.json"
    path.write_text(json.dumps(BOUND))
    (tmp_path / "dir").mkdir()
    assert main(["study", "run", str(path), "--out", str(tmp_path / "dir")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --out:") and "Traceback" not in err[0]
