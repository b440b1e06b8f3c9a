"""Repeated building blocks (residual blocks, Inception modules) shared by several zoo models.

They live outside `core/nets/models/` because every module there is a zoo entry.
"""

from __future__ import annotations

from typing import Callable

from core.nets.builder import NetBuilder, T


def basic_block(b: NetBuilder, name: str, ch: int, stride: int) -> T:
    """ResNet-18/34 block: 3x3 -> 3x3, plus an identity or 1x1-projection shortcut, then ReLU."""
    x = b.x
    y = b.conv(f"{name}.conv1", ch, 3, stride, 1, x=x)
    y = b.conv(f"{name}.conv2", ch, 3, 1, 1, relu=False, x=y)
    short = x
    if stride != 1 or x.shape[0] != ch:
        short = b.conv(f"{name}.downsample", ch, 1, stride, relu=False, x=x)
    return b.add(f"{name}.add", y, short)


def bottleneck(b: NetBuilder, name: str, mid: int, stride: int, expansion: int = 4) -> T:
    """ResNet-50 bottleneck, stride on the 3x3 (torchvision's "v1.5"): 1x1 -> 3x3 -> 1x1 (x4)."""
    x = b.x
    out = mid * expansion
    y = b.conv(f"{name}.conv1", mid, 1, x=x)
    y = b.conv(f"{name}.conv2", mid, 3, stride, 1, x=y)
    y = b.conv(f"{name}.conv3", out, 1, relu=False, x=y)
    short = x
    if stride != 1 or x.shape[0] != out:
        short = b.conv(f"{name}.downsample", out, 1, stride, relu=False, x=x)
    return b.add(f"{name}.add", y, short)


def resnet_stem(b: NetBuilder) -> T:
    b.conv("conv1", 64, 7, 2, 3)
    return b.pool("maxpool", 3, 2, 1)


def resnet(b: NetBuilder, block: Callable[[NetBuilder, str, int, int], T], stages: list[tuple[int, int]]) -> T:
    """Stem, stages and classifier: what every ResNet depth shares (He et al. 2016, Table 1); a depth
    is its block and its (block width, blocks) per stage. The first block of every stage after the
    first strides by 2; blocks are named layerS.I as in torchvision."""
    resnet_stem(b)
    for stage, (width, n) in enumerate(stages, start=1):
        for i in range(n):
            block(b, f"layer{stage}.{i}", width, 2 if (i == 0 and stage > 1) else 1)
    b.global_pool("avgpool")
    return b.fc("fc", 1000, relu=False)


def inception(b: NetBuilder, name: str, c1: int, c3r: int, c3: int, c5r: int, c5: int, pp: int) -> T:
    """GoogLeNet Inception module: 1x1 | 1x1->3x3 | 1x1->5x5 | 3x3 max-pool->1x1, concatenated."""
    x = b.x
    a = b.conv(f"{name}/1x1", c1, 1, x=x)
    r3 = b.conv(f"{name}/3x3_reduce", c3r, 1, x=x)
    t3 = b.conv(f"{name}/3x3", c3, 3, 1, 1, x=r3)
    r5 = b.conv(f"{name}/5x5_reduce", c5r, 1, x=x)
    t5 = b.conv(f"{name}/5x5", c5, 5, 1, 2, x=r5)
    p = b.pool(f"{name}/pool", 3, 1, 1, x=x)
    pp_ = b.conv(f"{name}/pool_proj", pp, 1, x=p)
    return b.concat(f"{name}/output", a, t3, t5, pp_)
