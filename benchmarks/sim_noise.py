"""How analogue noise grows with program length: AnalogNet2 programs of different lengths on the
bus-level simulator, under both noise models (the Cain emulator's accumulated std drawn on read,
and noise drawn per bus operation).

Programs: Cain's published 21-macro program (Table 2), a fresh Cain search ("all" set), and an
AUKE-style search (AUKE's instruction set). Errors are RMS over the interior PEs against the ideal
correlation with the AnalogNet2 kernels (published tool's version), per kernel, averaged over seeds.

Run: .venv/bin/python benchmarks/sim_noise.py [--size 128] [--seeds 5] [--time 10] [--sigma 0.005]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.filters import preset  # noqa: E402
from core.scamp5.program import parse_program  # noqa: E402
from sims.scamp5 import analysis  # noqa: E402
from sims.scamp5.images import load_input, to_values  # noqa: E402
from sims.scamp5.noise import NoiseModel  # noqa: E402
from sims.scamp5.simulator import simulate  # noqa: E402


def programs(time_s: float) -> list[tuple[str, list, list[str]]]:
    ks = preset("analognet2-tool")
    out = [("Cain, Table 2 (published)",
            parse_program((REPO / "assets/programs/analognet2_cain_table2.txt").read_text()), ["A", "B", "C"])]
    try:
        from core.cain.api import compile_filter
    except ImportError:
        print("  (core.cain.api not available: only the published program)")
        return out
    for label, isa, mode in (("Cain search, all", "all", "cain"), ("AUKE-style search", "auke", "auke")):
        plan = compile_filter(ks, isa=isa, mode=mode, time_s=time_s)
        out.append((f"{label} ({time_s:g} s)", plan.program, plan.output_registers))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--time", type=float, default=10.0)
    ap.add_argument("--sigma", type=float, default=0.005)
    a = ap.parse_args()
    ks = preset("analognet2-tool")
    kernels = [analysis.kernel_from_matrix(k.values, ks.denominator) for k in ks.kernels]
    values = to_values(load_input("sample", a.size)[0])
    ideals = [analysis.ideal(values, k) for k in kernels]
    progs = programs(a.time)
    print(f"AnalogNet2 on the {a.size}x{a.size} sample image, write-noise factor {a.sigma}, "
          f"mean over {a.seeds} seeds; RMS error per kernel (k1, k2, k3), full scale = 1")
    for mode in ("emulator", "per-op"):
        print(f"\n  noise model: {mode}")
        print(f"  {'program':<34}{'macros':>7}{'bus ops':>8}   {'k1':>8}{'k2':>8}{'k3':>8}{'mean':>8}")
        for label, prog, outs in progs:
            exact = simulate(prog, values)
            for reg, k, ref in zip(outs, kernels, ideals):
                v = exact.final.valid[reg]
                assert np.array_equal(exact.final.values[reg][v], ref[v]), (label, reg)   # exact when noise off
            errs = np.zeros((a.seeds, 3))
            for s in range(a.seeds):
                run = simulate(prog, values, noise=NoiseModel.analogue(a.sigma, seed=s + 1, mode=mode))
                for j, (reg, ref) in enumerate(zip(outs, ideals)):
                    errs[s, j] = analysis.error_stats(run.read_out(reg) - ref, run.final.valid[reg])[0]
            m = errs.mean(axis=0)
            print(f"  {label:<34}{len(prog):>7}{exact.bus_steps():>8}   {m[0]:>8.4f}{m[1]:>8.4f}{m[2]:>8.4f}{m.mean():>8.4f}")
    print("\n  error growth, per-op model, seed 1: mean RMS error of the registers holding a Goal, by macro index")
    from core.scamp5.interp import run_symbolic

    for label, prog, _outs in progs:
        run = simulate(prog, values, noise=NoiseModel.analogue(a.sigma, seed=1, mode="per-op"))
        rows = analysis.step_errors(run, values, run_symbolic(prog))
        growth = [float(np.mean(list(r.values()))) if r else 0.0 for r in rows]
        marks = range(0, len(growth), max(1, len(growth) // 8))
        print(f"  {label:<34}" + "  ".join(f"{i}:{growth[i]:.4f}" for i in marks) + f"  end:{growth[-1]:.4f}")


if __name__ == "__main__":
    main()
