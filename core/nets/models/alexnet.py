"""AlexNet as in Caffe's bvlc_alexnet: the original two-GPU grouped version on a 3x227x227 crop."""

from __future__ import annotations

from core.nets.builder import NetBuilder
from core.nets.layers import Network

NAME = "alexnet"
TITLE = "AlexNet (ImageNet, 227x227, grouped)"


def build() -> Network:
    b = NetBuilder(NAME, TITLE, (3, 227, 227))
    b.conv("conv1", 96, 11, 4)
    b.pool("pool1", 3, 2)                      # LRN before the pool is shape-neutral and omitted
    b.conv("conv2", 256, 5, 1, 2, groups=2)
    b.pool("pool2", 3, 2)
    b.conv("conv3", 384, 3, 1, 1)
    b.conv("conv4", 384, 3, 1, 1, groups=2)
    b.conv("conv5", 256, 3, 1, 1, groups=2)
    b.pool("pool5", 3, 2)
    b.fc("fc6", 4096)
    b.fc("fc7", 4096)
    b.fc("fc8", 1000, relu=False)
    return b.network(
        "Krizhevsky et al. 2012 as in Caffe bvlc_alexnet: conv2, conv4, conv5 split into 2 groups "
        "(the two-GPU layout), 227x227 input so conv1 gives 55x55; LRN layers omitted (no MACs)."
    )
