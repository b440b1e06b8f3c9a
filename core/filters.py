"""Built-in FPSP filters: the kernels of the Cain paper's Table 1 and common image filters.

Values are numerators over the filter's common denominator, rows top to bottom (north first).
"""

from __future__ import annotations

from core.workload import Kernel, KernelSet

_G3 = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
# As published in Cain's Table 1 (it sums to 66/64).
_G5 = [[0, 1, 2, 1, 0], [1, 4, 6, 4, 1], [2, 6, 10, 6, 2], [1, 4, 6, 4, 1], [0, 1, 2, 1, 0]]
_G3_IN_5_OVER_64 = [[0, 0, 0, 0, 0], [0, 4, 8, 4, 0], [0, 8, 16, 8, 0], [0, 4, 8, 4, 0], [0, 0, 0, 0, 0]]
# AnalogNet2, Cain's equation 1 (second kernel with -1 top right) ...
_AN2 = [
    [[0, 0, 0], [-3, 1, 0], [-3, 0, 2]],
    [[-4, -1, -1], [-1, 2, 0], [1, 1, 0]],
    [[-1, 2, 0], [-1, 1, -3], [0, -3, 0]],
]
# ... and the published tool's example files (+1 there), as in Cain's Table 1.
_AN2_TOOL = [_AN2[0], [[-4, -1, 1], [-1, 2, 0], [1, 1, 0]], _AN2[2]]


def _set(name: str, denominator: int, *kernels: tuple[str, list]) -> KernelSet:
    return KernelSet(name=name, denominator=denominator,
                     kernels=[Kernel(n, [list(map(float, r)) for r in m]) for n, m in kernels])


def _presets() -> dict[str, KernelSet]:
    return {
        "gauss3": _set("3x3 Gaussian", 16, ("gauss3", _G3)),
        "gauss5": _set("5x5 Gaussian", 64, ("gauss5", _G5)),
        "gauss5+gauss3": _set("5x5 and 3x3 Gaussian", 64, ("gauss5", _G5), ("gauss3", _G3_IN_5_OVER_64)),
        "analognet2": _set("AnalogNet2 (Cain eq. 1)", 4, *[(f"k{i + 1}", k) for i, k in enumerate(_AN2)]),
        "analognet2-tool": _set("AnalogNet2 (published tool)", 4,
                                *[(f"k{i + 1}", k) for i, k in enumerate(_AN2_TOOL)]),
        "sobel": _set("Sobel x and y", 1, ("sobel_x", [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]),
                      ("sobel_y", [[1, 2, 1], [0, 0, 0], [-1, -2, -1]])),
        "laplacian": _set("Laplacian", 1, ("laplacian", [[0, 1, 0], [1, -4, 1], [0, 1, 0]])),
        "box3": _set("3x3 box", 9, ("box3", [[1, 1, 1], [1, 1, 1], [1, 1, 1]])),
    }


PRESETS: dict[str, KernelSet] = _presets()


def preset(name: str) -> KernelSet:
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown filter preset {name!r}; known: {', '.join(PRESETS)}") from None
