"""GoogLeNet / Inception v1 (Szegedy et al., CVPR 2015, Table 1), 3x224x224 input, no auxiliary heads."""

from __future__ import annotations

from core.nets.blocks import inception
from core.nets.builder import NetBuilder
from core.nets.layers import Network

NAME = "googlenet"
TITLE = "GoogLeNet / Inception v1 (ImageNet, 224x224)"

# name: (#1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5, pool proj), Table 1 of the paper.
MODULES = {
    "inception_3a": (64, 96, 128, 16, 32, 32),
    "inception_3b": (128, 128, 192, 32, 96, 64),
    "inception_4a": (192, 96, 208, 16, 48, 64),
    "inception_4b": (160, 112, 224, 24, 64, 64),
    "inception_4c": (128, 128, 256, 24, 64, 64),
    "inception_4d": (112, 144, 288, 32, 64, 64),
    "inception_4e": (256, 160, 320, 32, 128, 128),
    "inception_5a": (256, 160, 320, 32, 128, 128),
    "inception_5b": (384, 192, 384, 48, 128, 128),
}
POOL_AFTER = {"inception_3b": "pool3", "inception_4e": "pool4"}


def build() -> Network:
    b = NetBuilder(NAME, TITLE, (3, 224, 224))
    b.conv("conv1/7x7_s2", 64, 7, 2, 3)
    b.pool("pool1", 3, 2, ceil_mode=True)
    b.conv("conv2/3x3_reduce", 64, 1)
    b.conv("conv2/3x3", 192, 3, 1, 1)
    b.pool("pool2", 3, 2, ceil_mode=True)
    for name, cfg in MODULES.items():
        inception(b, name, *cfg)
        if name in POOL_AFTER:
            b.pool(POOL_AFTER[name], 3, 2, ceil_mode=True)
    b.global_pool("pool5/7x7_s1")
    b.fc("loss3/classifier", 1000, relu=False)
    return b.network(
        "Szegedy et al. 2015, Table 1, Caffe bvlc_googlenet layout (3x3/2 pools rounded up); each "
        "Inception module's four branches are listed in order and joined by an Eltwise(op=\"concat\") "
        "entry, which has no MACs. LRN and the two training-only auxiliary classifiers are omitted."
    )
