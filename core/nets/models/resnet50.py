"""ResNet-50 (He et al., CVPR 2016, Table 1) on a 3x224x224 ImageNet image."""

from __future__ import annotations

from core.nets.blocks import bottleneck, resnet
from core.nets.builder import NetBuilder
from core.nets.layers import Network

NAME = "resnet50"
TITLE = "ResNet-50 (ImageNet, 224x224)"

STAGES = [(64, 3), (128, 4), (256, 6), (512, 3)]             # (bottleneck width, blocks)


def build() -> Network:
    b = NetBuilder(NAME, TITLE, (3, 224, 224))
    resnet(b, bottleneck, STAGES)
    return b.network(
        "He et al. 2016, Table 1 (50-layer): bottleneck blocks 3-4-6-3; the stride-2 blocks stride "
        "in the 3x3 convolution as in torchvision (\"ResNet v1.5\", ~4.1 GMACs; the paper's original "
        "strides the first 1x1, ~3.9 GMACs). Batch-norm folded into the convolutions."
    )
