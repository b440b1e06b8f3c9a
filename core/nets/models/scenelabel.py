"""The scene-labelling ConvNet of Cavigelli, Magno & Benini (DAC 2015), cited by f-CNNx as SceneLabelCNN."""

from __future__ import annotations

from core.nets.builder import NetBuilder
from core.nets.layers import Network

NAME = "scenelabel"
TITLE = "SceneLabelCNN (Cavigelli et al. 2015, 320x240)"

N_CLASSES = 8        # Stanford Background labels


def build() -> Network:
    b = NetBuilder(NAME, TITLE, (3, 240, 320))
    b.conv("conv1", 16, 7)                                   # tanh in the original; shape only matters
    b.pool("pool1", 2, 2)
    b.conv("conv2", 64, 7)
    b.pool("pool2", 2, 2)
    b.conv("conv3", 256, 7)
    b.conv("classifier", N_CLASSES, 1, relu=False)           # per-pixel linear classifier
    return b.network(
        "Farabet-style 3-stage feature extractor as used by Cavigelli et al. (DAC 2015): 320x240 RGB, "
        "conv 16/64/256 @7x7 (valid) with tanh, 2x2 max pools after stages 1 and 2, then a 1x1 "
        "per-pixel classifier to 8 classes (Stanford Background). f-CNNx Table I lists 7.6528 GOps "
        "(8 layers); this definition gives 7.4724 GOps under the fcnnx convention (7.4563 from the "
        "three 7x7 convolutions alone), about 2.4% less: the exact input size / padding f-CNNx used is not "
        "published, so the figure is not reproduced."
    )
