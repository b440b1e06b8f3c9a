"""ResNet-18 (He et al., CVPR 2016, Table 1) on a 3x224x224 ImageNet image."""

from __future__ import annotations

from core.nets.blocks import basic_block, resnet
from core.nets.builder import NetBuilder
from core.nets.layers import Network

NAME = "resnet18"
TITLE = "ResNet-18 (ImageNet, 224x224)"


def build() -> Network:
    b = NetBuilder(NAME, TITLE, (3, 224, 224))
    resnet(b, basic_block, [(64, 2), (128, 2), (256, 2), (512, 2)])
    return b.network(
        "He et al. 2016, Table 1 (18-layer): 7x7/2 stem, 3x3/2 max pool, 4 stages of 2 basic blocks "
        "(64-512 channels), 1x1 projection shortcuts where the shape changes, global average pool, FC. "
        "Batch-norm is folded into the convolutions (no MACs counted); ReLU after each add."
    )
