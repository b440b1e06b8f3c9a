"""Speed of the bus-level SCAMP-5 simulator (targets: one macro over 256x256 < 5 ms; the whole
AnalogNet2 program < 0.2 s; a GUI step well under a frame).

Run: .venv/bin/python benchmarks/sim_speed.py [--size 256] [--repeat 20] [--no-gui]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.scamp5.isa import OPS  # noqa: E402
from core.scamp5.program import parse_program  # noqa: E402
from sims.scamp5.array import PixelArray  # noqa: E402
from sims.scamp5.bus import expand  # noqa: E402
from sims.scamp5.images import load_input, to_values  # noqa: E402
from sims.scamp5.noise import NoiseModel  # noqa: E402
from sims.scamp5.simulator import simulate  # noqa: E402

TABLE2 = REPO / "assets/programs/analognet2_cain_table2.txt"
REGS = ("A", "B", "C", "D", "E", "F")


def _args(spec) -> tuple[str, ...]:
    regs = iter(["B", "C", "D", "E", "F", "A"])
    dirs = iter(["north", "east"])
    return tuple(next(dirs) if role == "dir" else next(regs) for role in spec.roles)


def time_macros(size: int, repeat: int, noise: NoiseModel) -> dict[str, float]:
    values = to_values(load_input("sample", size)[0])
    out = {}
    for spec in OPS:
        ops = expand(spec.name, _args(spec))
        arr = PixelArray((size, size), REGS, noise)
        for r in REGS:
            arr.load(r, values)
        samples = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            for op in ops:
                arr.execute(op)
            samples.append(time.perf_counter() - t0)
        out[f"{spec.name}/{spec.arity}"] = statistics.median(samples) * 1000
    return out


def time_program(size: int, repeat: int, noise: NoiseModel) -> float:
    values = to_values(load_input("sample", size)[0])
    program = parse_program(TABLE2.read_text())
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        simulate(program, values, noise=noise)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def time_engine(size: int) -> float:
    from core.engine import JobRequest, get_engine
    from core.jobs import CancelToken

    spec = get_engine("simulate")
    req = JobRequest(None, None, dict(spec.default_settings(), size=size))
    t0 = time.perf_counter()
    list(spec.run(req, CancelToken()))
    return time.perf_counter() - t0


def time_gui_steps(size: int) -> tuple[float, float]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from core.simulate import replay
    from core.simulate.engine import default_settings
    from core.workload import Scamp5Target
    from gui.panels.simulate.stepper import Scamp5Stepper

    st = Scamp5Stepper()
    t0 = time.perf_counter()
    st.load(replay.build(default_settings(), Scamp5Target(array_size=size)))
    load = time.perf_counter() - t0
    samples = []
    for i in list(range(1, st.steps + 1)) + list(range(st.steps - 1, -1, -1)):
        t0 = time.perf_counter()
        st.set_step(i)
        app.processEvents()
        samples.append(time.perf_counter() - t0)
    return load, max(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--no-gui", action="store_true")
    a = ap.parse_args()
    print(f"bus-level SCAMP-5 simulator, {a.size}x{a.size} PEs, median of {a.repeat} runs")
    for label, noise in (("exact", NoiseModel()), ("noise (emulator)", NoiseModel.analogue(0.005)),
                         ("noise (per-op)", NoiseModel.analogue(0.005, mode="per-op"))):
        per = time_macros(a.size, a.repeat, noise)
        worst = max(per, key=per.get)
        print(f"  one macro, {label:<17}: median over forms {statistics.median(per.values()):.2f} ms, "
              f"slowest {worst} {per[worst]:.2f} ms (target < 5 ms)")
        if label == "exact":
            print("    " + ", ".join(f"{k} {v:.2f}" for k, v in per.items()))
        prog = time_program(a.size, max(3, a.repeat // 4), noise)
        print(f"  AnalogNet2 (Cain Table 2, 21 macros, 48 bus ops), {label:<17}: {prog * 1000:.1f} ms (target < 200 ms)")
    print(f"  engine run incl. image load, symbolic Goals, per-step error analysis, interpreter check: "
          f"{time_engine(a.size):.2f} s")
    if not a.no_gui:
        load, worst = time_gui_steps(a.size)
        print(f"  GUI stepper: load (simulate + scales) {load * 1000:.0f} ms, slowest step redraw {worst * 1000:.1f} ms")


if __name__ == "__main__":
    main()
