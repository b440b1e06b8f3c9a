"""SqueezeNet 1.1 (Iandola et al. 2016; the v1.1 layout of the reference repository and torchvision)."""

from __future__ import annotations

from core.nets.builder import NetBuilder, T
from core.nets.layers import Network

NAME = "squeezenet11"
TITLE = "SqueezeNet 1.1 (ImageNet, 224x224)"

# Fire modules in order: (squeeze 1x1, expand 1x1, expand 3x3); a 3x3/2 max pool (rounded up)
# comes before fire2, fire4 and fire6.
FIRES = {"fire2": (16, 64, 64), "fire3": (16, 64, 64), "fire4": (32, 128, 128), "fire5": (32, 128, 128),
         "fire6": (48, 192, 192), "fire7": (48, 192, 192), "fire8": (64, 256, 256), "fire9": (64, 256, 256)}
POOL_BEFORE = {"fire2": "pool1", "fire4": "pool3", "fire6": "pool5"}


def fire(b: NetBuilder, name: str, squeeze: int, e1: int, e3: int) -> T:
    """Fire module: 1x1 squeeze, then 1x1 and 3x3 (pad 1) expands side by side, concatenated."""
    s = b.conv(f"{name}/squeeze1x1", squeeze, 1)
    a = b.conv(f"{name}/expand1x1", e1, 1, x=s)
    c = b.conv(f"{name}/expand3x3", e3, 3, 1, 1, x=s)
    return b.concat(f"{name}/concat", a, c)


def build() -> Network:
    b = NetBuilder(NAME, TITLE, (3, 224, 224))
    b.conv("conv1", 64, 3, 2)
    for name, cfg in FIRES.items():
        if name in POOL_BEFORE:
            b.pool(POOL_BEFORE[name], 3, 2, ceil_mode=True)
        fire(b, name, *cfg)
    b.conv("conv10", 1000, 1)                   # the classifier is a 1x1 convolution with ReLU
    b.global_pool("pool10")
    return b.network(
        "Iandola et al. 2016, SqueezeNet v1.1 as in the DeepScale repository and torchvision "
        "squeezenet1_1: 3x3/2 conv to 64 (no pad), 3x3/2 max pools rounded up before fire2/4/6, eight Fire "
        "modules (squeeze 1x1 -> expand 1x1 | expand 3x3, concatenated), 1x1 conv10 to 1000 with ReLU, "
        "global average pool. torchvision: 1,235,496 parameters, 0.35 GFLOPS (multiply-adds)."
    )
