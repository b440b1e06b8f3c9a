"""Cappuccino's settings, declared once (core.settings): the engine parses a request's settings into
CappuccinoSettings, and the synthesis and timing (core.cappuccino.synth_run) read them typed."""

from __future__ import annotations

from dataclasses import dataclass

from core.cappuccino.inexact import SEARCH_GMAC_IMAGES
from core.cappuccino.numerics import IMPRECISE, RELAXED
from core.settings import setting

MAX_BUDGET_PP = 100.0


@dataclass(frozen=True)
class CappuccinoSettings:
    """The synthesis's settings, declared once (SETTINGS_SCHEMA is made from them); the network is
    the CNN workload, the threads and vector width the mobile SoC target's."""

    accuracy_budget: float = setting(0.5, "Accuracy budget", "Allowed drop of validation accuracy, in percentage "
                                     "points, for choosing inexact layers", minimum=0, maximum=MAX_BUDGET_PP,
                                     unit="pp", decimals=2, step=0.1)
    prefer: str = setting(RELAXED, "Prefer", "Inexact mode preferred when both keep the same number of layers "
                          "inexact", enum=[RELAXED, IMPRECISE],
                          labels={RELAXED: "prefer relaxed", IMPRECISE: "prefer imprecise"})
    int8: bool = setting(False, "Try int8 layers", "Also try 8-bit integer layers (u8 activations x s8 weights, "
                         "AVX-512 VNNI where the CPU has it) in the inexact-mode search, preferred when within the "
                         "budget")
    measure_split: bool = setting(True, "Measure thread split", "Share each layer between the threads only where "
                                  "that measured faster on this machine (profiles the chosen program shared and on "
                                  "one thread; off: the size rule decides)")
    emit_dir: str = setting("", "Output folder", "Folder for the C programs and the validation data (empty: not "
                            "kept)", placeholder="emit folder (optional)")
    compile: bool = setting(True, "Compile and time", "Build and run the programs with the C compiler found here "
                            "(gcc, cc, clang)")
    min_seconds: float = setting(0.3, "Min. time per run", "Timing: each run repeats passes over the images for at "
                                 "least this long", minimum=0, maximum=600, unit="s", decimals=2, step=0.1)
    repeats: int = setting(3, "Runs", "Timing: runs per program, interleaved; the fastest counts",
                           minimum=1, maximum=1000)
    limit: int = setting(0, "Images", "Use only the first N validation images (0: all)", minimum=0,
                         maximum=2 ** 31 - 1, labels={"0": "all"})
    search_sample: int = setting(
        0, "Search images", "Validation images the inexact-mode search and the layout checks measure: a seeded "
        f"sample of N (0: automatic, every image while images x GMACs <= {SEARCH_GMAC_IMAGES:g})",
        minimum=0, maximum=2 ** 31 - 1, labels={"0": "auto"})
