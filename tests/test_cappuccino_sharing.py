"""The thread split chosen from measured per-op time (issue 35): the decision and the keep-or-drop
rule on made-up times (never the machine's), the plan's flags, and one real measurement's shape."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from core.cappuccino import sharing, synth, synth_program
from core.cappuccino.graph_import import layer_table
from core.cappuccino.model import CnnModel, ConvOp, Op, PoolOp
from core.cappuccino.numerics import PRECISE
from core.cappuccino.sharing import MEASURED, RULE, decide, keep, measure
from tests.test_cappuccino_kernels import CC, odd_shapes_model


def test_an_op_moves_to_one_worker_only_when_every_alone_run_beat_every_shared_run():
    shared = [[1.0, 1.1], [5.0, 5.2], [9.0, 9.5], [3.0, 3.4], [4.0, 6.0]]
    alone = [[2.0, 2.0], [8.0, 8.1], [7.0, 7.2], [3.0, 3.1], [3.0, 5.0]]
    assert decide([1, 16, 16, 4, 4], shared, alone) == [False, True, False, True, True]
    # op 3: alone's 3.1 is not below shared's 3.0; op 4: the ranges overlap: noise moves nothing
    with pytest.raises(ValueError):
        decide([1, 2], [[1.0]], [[1.0], [2.0]])


def test_the_measured_program_is_kept_only_when_its_median_is_lower():
    assert keep([10, 11, 12], [9, 13, 10.5]) == MEASURED          # medians 11 vs 10.5
    assert keep([10, 11, 12], [9, 13, 11]) == RULE                # a tie keeps the rule
    assert keep([10, 11, 12], [12, 12, 12]) == RULE


class FakeMachine:
    """A program whose per-op times are given: an op worker 0 runs alone takes its alone time. A
    whole pass takes the sum of its ops' times plus `extra` when the split differs from both
    profiled ones (what the per-op view cannot see)."""

    def __init__(self, shared_us, alone_us, extra=0.0):
        self.shared_us, self.alone_us, self.extra = shared_us, alone_us, extra
        self.calls: list[list[tuple[int, ...]]] = []

    def run(self, splits, rounds):
        self.calls.append(splits)
        out = []
        for alone in splits:
            ops = [a if i in alone else s for i, (s, a) in enumerate(zip(self.shared_us, self.alone_us))]
            mixed = 0 < len(alone) < len(self.shared_us)
            out.append([(sum(ops) + (self.extra if mixed else 0.0), ops)] * rounds)
        return out


def test_measure_moves_the_ops_that_lose_by_sharing_and_keeps_a_faster_whole():
    m = FakeMachine(shared_us=[5, 30, 4, 50], alone_us=[5, 55, 2, 90])
    choice = measure(["pack", "conv1", "pool1", "conv2"], ["copy", "conv", "maxpool", "conv"], [1, 16, 4, 16],
                     m.run, rounds=3)
    assert [o.shared for o in choice.ops] == [False, True, False, True]
    assert choice.kept == MEASURED and choice.shared == [False, True, False, True]
    assert choice.measured_us == 5 + 30 + 2 + 50 and choice.rule_us == 5 + 30 + 4 + 50
    assert choice.changed() == ["pool1 (maxpool) on one worker"] and "kept" in choice.summary()
    # first as built against every shared op alone, then as built against the measured split
    assert m.calls == [[(), (1, 2, 3)], [(), (2,)]]


def test_a_per_op_win_that_loses_as_a_whole_keeps_the_rule():
    m = FakeMachine(shared_us=[30, 4, 7], alone_us=[55, 2, 9], extra=10.0)
    choice = measure(["conv1", "pool1", "conv2"], ["conv", "maxpool", "conv"], [16, 4, 16], m.run, rounds=3)
    assert choice.kept == RULE and choice.shared is None and "dropped" in choice.summary()


def test_when_the_rule_wins_every_op_nothing_more_is_timed():
    m = FakeMachine(shared_us=[30, 4], alone_us=[55, 9])
    choice = measure(["conv1", "pool1"], ["conv", "maxpool"], [16, 4], m.run, rounds=2)
    assert choice.kept == RULE and choice.measured_us is None and m.calls == [[(), (0, 1)]]


def test_a_program_that_prints_too_few_op_times_is_an_error():
    with pytest.raises(RuntimeError, match="op times"):
        measure(["a"], ["conv"], [4], lambda splits, rounds: [[(1.0, [])]] * 2, rounds=1)


def test_split_output_is_read_per_split_and_round():
    out = "\n".join(["pred 0", "split 0 round 0 passes 2 seconds 0.004", "sop 0 0 1.5", "sop 0 1 0.5",
                     "split 1 round 0 passes 4 seconds 0.004", "sop 1 0 0.7", "sop 1 1 0.3",
                     "split 1 round 1 passes 1 seconds 0.001", "sop 1 0 0.6", "sop 1 1 0.4",
                     "split 0 round 1 passes 1 seconds 0.002", "sop 0 0 1.4", "sop 0 1 0.6"])
    assert sharing.parse_splits(out, 2, 2) == [[(2000.0, [1.5, 0.5]), (2000.0, [1.4, 0.6])],
                                                [(1000.0, [0.7, 0.3]), (1000.0, [0.6, 0.4])]]


def test_the_plan_runs_unshared_ops_on_one_worker():
    model = odd_shapes_model()
    modes = {op.name: PRECISE for op in model.conv_ops}
    rule = synth_program.plan(model, modes, 16, 2)
    alone = synth_program.plan(model, modes, 16, 2, shared=[False] * len(rule.ops))
    assert all(op.chunks == 1 for op in alone.ops)
    assert [o.chunks for o in synth_program.plan(model, modes, 16, 2, shared=[True] * len(rule.ops)).ops] == \
        [o.chunks for o in rule.ops]
    with pytest.raises(ValueError, match="flags"):
        synth_program.plan(model, modes, 16, 2, shared=[True])


def _shareable_model() -> CnnModel:
    """[max pooling 1x1, 3x3 convolution 32 -> 48 maps on 20x20]: 5.5 M multiply-adds, which the size
    rule shares; the pooling it runs alone."""
    rng = np.random.default_rng(3)
    c, hw, m = 32, 20, 48
    w = (rng.standard_normal((m, c, 3, 3)) * 0.1).astype(np.float32)
    ops: list[Op] = [PoolOp("feed", 1, 1, 0, "max", False, (c, hw, hw), inputs=["input"]),
                     ConvOp("conv", w, rng.standard_normal(m).astype(np.float32), 1, 1, True, (c, hw, hw),
                            inputs=["feed"])]
    x = rng.standard_normal((2, c, hw, hw)).astype(np.float32)
    return CnnModel("shareable", layer_table("shareable", (c, hw, hw), ops, "seeded"), ops, x, np.zeros(2, np.int64))


@pytest.mark.slow
@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_a_real_measurement_times_every_op_and_alone_changes_no_output_bit(tmp_path):
    """Which split wins depends on the machine, so no test asserts it; the outputs never change."""
    model = _shareable_model()
    modes = {op.name: PRECISE for op in model.conv_ops}
    prog = synth.synthesise_program(model, modes, 8, 2)
    assert [o.chunks > 1 for o in prog.plan.ops] == [False, True]
    src, exe, wts, x = tmp_path / "p.c", tmp_path / "p", tmp_path / "p.bin", tmp_path / "x.f32"
    src.write_text(prog.source)
    wts.write_bytes(prog.weights)
    synth.write_images(x, model.x_val)
    synth.compile_c(CC, src, exe, True, lambda: None)
    as_built = synth.run_program(exe, x, 2, 0.0, lambda: None, weights=wts, threads=2)
    alone = synth.run_program(exe, x, 2, 0.0, lambda: None, weights=wts, threads=2, alone=[0, 1])
    assert as_built.logits is not None and alone.logits is not None
    assert np.array_equal(as_built.logits, alone.logits)
    choice = sharing.measure_program(prog.plan, exe, wts, x, 2, 0.0, lambda: None, rounds=1)
    assert len(choice.ops) == 2 and all(o.shared_us >= 0 and o.alone_us >= 0 for o in choice.ops)
    assert choice.kept in (RULE, MEASURED) and choice.rule_us > 0 and not choice.ops[0].shared
    with pytest.raises(RuntimeError):
        synth.run_program(exe, x, 2, 0.0, lambda: None, weights=wts, threads=2, alone=[7])
    # switching splits inside one process: every op still runs in every round (was: after a switch the
    # work counters of the old chunk count skipped the convolution, or waited forever)
    out = subprocess.run([str(exe), str(wts), str(x), "2", "0.0", "2", "--splits", "-/1", "--rounds", "4"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    runs = sharing.parse_splits(out, 2, 4)
    assert [len(per) for per in runs] == [4, 4] and all(len(ops) == 2 for per in runs for _, ops in per)
    outs = sharing.split_outputs(out)
    assert sorted(outs) == [(sp, r) for sp in (0, 1) for r in range(4)]
    first = np.float32(as_built.logits[0]).tolist()
    assert all(np.float32(v).tolist() == first for v in outs.values())
