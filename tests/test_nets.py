"""Zoo networks: they build, chain, and reproduce published MAC / parameter / workload figures."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.nets import zoo
from core.nets.check import check_chain
from core.nets.layers import Conv, Network, Pool
from core.nets.opcount import layer_counts, params, workload_gops

EXPECTED = {"alexnet", "vgg16", "lenet5"}


def test_zoo_lists_the_expected_networks():
    assert EXPECTED <= set(zoo.names())
    assert all(zoo.titles()[n] for n in zoo.names())


@pytest.mark.parametrize("name", zoo.names())
def test_every_model_builds_and_chains(name):
    net = zoo.get(name)
    assert isinstance(net, Network) and net.name == name and net.notes
    check_chain(net)
    assert net.layers and net.macs > 0
    assert zoo.get(name) is not net            # a fresh copy each time


def test_check_chain_rejects_a_broken_table():
    net = zoo.get("lenet5")
    bad = Conv("conv2", 21, 12, 12, 50, 5, 5)  # 21 channels: nothing produces that
    net.layers[2] = bad
    with pytest.raises(InputError, match="conv2"):
        check_chain(net)


def test_vgg16_published_counts():
    net = zoo.get("vgg16")
    assert net.macs == pytest.approx(15.5e9, rel=0.01)       # ~15.5 GMACs
    assert params(net) == pytest.approx(138.36e6, rel=0.001)  # 138,357,544 in the paper's Table 2 (138M)
    assert layer_counts(net) == {"conv": 13, "fc": 3, "pool": 5, "eltwise": 0}
    assert net.layers[-1].out_shape == (1000, 1, 1)


def test_alexnet_published_counts():
    net = zoo.get("alexnet")
    assert params(net) == pytest.approx(61e6, rel=0.01)       # ~61M (60,965,224 with biases)
    assert net.convs[0].out_shape == (96, 55, 55)
    assert net.macs == pytest.approx(724e6, rel=0.01)         # grouped AlexNet: ~0.72 GMACs


def test_lenet5_caffe_shapes():
    net = zoo.get("lenet5")
    assert [l.out_shape for l in net.layers] == [
        (20, 24, 24), (20, 12, 12), (50, 8, 8), (50, 4, 4), (500, 1, 1), (10, 1, 1)]
    assert params(net) == 431_080                              # Caffe LeNet: 431,080 parameters


def test_pool_ceil_mode_matches_caffe():
    p = Pool("p", 32, 32, 32, 3, 2, ceil_mode=True)
    assert (p.out_h, p.out_w) == (16, 16)
    assert Pool("p", 32, 32, 32, 3, 2).out_h == 15
