"""ZFNet (Zeiler & Fergus, "Visualizing and Understanding Convolutional Networks", ECCV 2014)."""

from __future__ import annotations

from core.nets.builder import NetBuilder
from core.nets.layers import Network

NAME = "zfnet"
TITLE = "ZFNet (ImageNet, 224x224)"


def build() -> Network:
    b = NetBuilder(NAME, TITLE, (3, 224, 224))
    b.conv("conv1", 96, 7, 2, 1)                             # 110 x 110, as in the paper's Fig. 3
    b.pool("pool1", 3, 2, ceil_mode=True)                    # 55 x 55
    b.conv("conv2", 256, 5, 2)                               # 26 x 26
    b.pool("pool2", 3, 2, ceil_mode=True)                    # 13 x 13
    b.conv("conv3", 384, 3, 1, 1)
    b.conv("conv4", 384, 3, 1, 1)
    b.conv("conv5", 256, 3, 1, 1)
    b.pool("pool5", 3, 2, ceil_mode=True)                    # 6 x 6
    b.fc("fc6", 4096)
    b.fc("fc7", 4096)
    b.fc("fc8", 1000, relu=False)
    return b.network(
        "Zeiler & Fergus 2014, Fig. 3: conv1 96@7x7/2 (pad 1 -> 110x110), 3x3/2 pools rounded up "
        "(55, 13, 6), conv2 256@5x5/2, conv3-5 384/384/256 @3x3, FC 4096-4096-1000; LRN omitted "
        "(no MACs). f-CNNx Table I: 2.2219 GOps, reproduced exactly by the fcnnx convention."
    )
