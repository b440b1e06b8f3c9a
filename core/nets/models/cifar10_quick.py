"""Caffe's CIFAR-10 "quick" network (examples/cifar10/cifar10_quick_train_test.prototxt)."""

from __future__ import annotations

from core.nets.builder import NetBuilder
from core.nets.layers import Network

NAME = "cifar10_quick"
TITLE = "CIFAR-10 quick (Caffe, 32x32)"


def build() -> Network:
    b = NetBuilder(NAME, TITLE, (3, 32, 32))
    b.conv("conv1", 32, 5, 1, 2)                             # ReLU follows pool1 in Caffe; same tensor
    b.pool("pool1", 3, 2, mode="max", ceil_mode=True)
    b.conv("conv2", 32, 5, 1, 2)
    b.pool("pool2", 3, 2, mode="avg", ceil_mode=True)
    b.conv("conv3", 64, 5, 1, 2)
    b.pool("pool3", 3, 2, mode="avg", ceil_mode=True)
    b.fc("ip1", 64, relu=False)                              # no non-linearity between ip1 and ip2
    b.fc("ip2", 10, relu=False)
    return b.network(
        "Caffe cifar10_quick (the CIFAR-10 network f-CNNx cites with Krizhevsky 2009): conv 32/32/64 "
        "@5x5 pad 2, 3x3/2 pools (max, avg, avg) rounded up as Caffe does, ip 64, ip 10. "
        "f-CNNx Table I: 0.0247 GOps, reproduced by the fcnnx convention (0.02468)."
    )
