"""MobileNet v1 (Howard et al. 2017, Table 1), width 1.0, 3x224x224 input."""

from __future__ import annotations

from core.nets.builder import NetBuilder
from core.nets.layers import Network

NAME = "mobilenet_v1"
TITLE = "MobileNet v1 1.0 (ImageNet, 224x224)"

# (pointwise output channels, depthwise stride) of the 13 depthwise-separable layers.
SEPARABLE = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]


def build() -> Network:
    b = NetBuilder(NAME, TITLE, (3, 224, 224))
    b.conv("conv0", 32, 3, 2, 1)
    for i, (ch, stride) in enumerate(SEPARABLE, start=1):
        b.dwconv(f"conv{i}_dw", 3, stride, 1)                # groups = channels
        b.conv(f"conv{i}_pw", ch, 1)
    b.global_pool("avgpool")
    b.fc("fc", 1000, relu=False)
    return b.network(
        "Howard et al. 2017, Table 1: 3x3/2 conv to 32, then 13 depthwise 3x3 (Conv with groups = "
        "channels) + pointwise 1x1 pairs up to 1024 channels, 7x7 average pool, FC 1000. "
        "Batch-norm folded; paper: 569M mult-adds, 4.2M parameters."
    )
