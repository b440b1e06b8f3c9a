"""ResNet-18 (He et al., CVPR 2016, Table 1) on a 3x224x224 ImageNet image."""

from __future__ import annotations

from core.nets.blocks import basic_block, resnet_stem
from core.nets.builder import NetBuilder
from core.nets.layers import Network

NAME = "resnet18"
TITLE = "ResNet-18 (ImageNet, 224x224)"


def build() -> Network:
    b = NetBuilder(NAME, TITLE, (3, 224, 224))
    resnet_stem(b)
    for stage, ch in enumerate((64, 128, 256, 512), start=1):
        for i in range(2):
            basic_block(b, f"layer{stage}.{i}", ch, 2 if (i == 0 and stage > 1) else 1)
    b.global_pool("avgpool")
    b.fc("fc", 1000, relu=False)
    return b.network(
        "He et al. 2016, Table 1 (18-layer): 7x7/2 stem, 3x3/2 max pool, 4 stages of 2 basic blocks "
        "(64-512 channels), 1x1 projection shortcuts where the shape changes, global average pool, FC. "
        "Batch-norm is folded into the convolutions (no MACs counted); ReLU after each add."
    )
