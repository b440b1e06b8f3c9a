"""LeNet-5 as in Caffe's MNIST example (lenet_train_test.prototxt): 20/50 conv maps, 500-unit FC."""

from __future__ import annotations

from core.nets.builder import NetBuilder
from core.nets.layers import Network

NAME = "lenet5"
TITLE = "LeNet-5 (Caffe version, MNIST 28x28)"


def build() -> Network:
    b = NetBuilder(NAME, TITLE, (1, 28, 28))
    b.conv("conv1", 20, 5, relu=False)        # Caffe's LeNet has no non-linearity after the convs
    b.pool("pool1", 2, 2)
    b.conv("conv2", 50, 5, relu=False)
    b.pool("pool2", 2, 2)
    b.fc("ip1", 500)
    b.fc("ip2", 10, relu=False)
    return b.network(
        "LeCun et al. 1998 as in Caffe examples/mnist/lenet_train_test.prototxt: conv 20@5x5, "
        "max-pool 2x2/2, conv 50@5x5, max-pool 2x2/2, ip 500 + ReLU, ip 10."
    )
