"""VGG-16 (configuration D of Simonyan & Zisserman, ICLR 2015) on a 3x224x224 ImageNet image."""

from __future__ import annotations

from core.nets.builder import NetBuilder
from core.nets.layers import Network

NAME = "vgg16"
TITLE = "VGG-16 (ImageNet, 224x224)"

# (number of 3x3 convolutions, output channels) per stage; each stage ends in a 2x2/2 max pool.
STAGES = [(2, 64), (2, 128), (3, 256), (3, 512), (3, 512)]


def build() -> Network:
    b = NetBuilder(NAME, TITLE, (3, 224, 224))
    for s, (n, ch) in enumerate(STAGES, start=1):
        for i in range(1, n + 1):
            b.conv(f"conv{s}_{i}", ch, 3, 1, 1)
        b.pool(f"pool{s}", 2, 2)
    b.fc("fc6", 4096)
    b.fc("fc7", 4096)
    b.fc("fc8", 1000, relu=False)
    return b.network(
        "Simonyan & Zisserman 2015, configuration D: 13 conv 3x3/1 pad 1 + 5 max-pool 2x2/2 + 3 FC. "
        "f-CNNx Table I lists 30.72 GOps; the conv+pool convention of core.nets.workload gives 30.70 "
        "(conv MACs x2 = 30.69), see docs/nets.md."
    )
