"""The MERIT-z timing model: bounds, scaling with ALUs and bandwidth, the paper's networks."""

from dataclasses import replace

import pytest

from core.merit import workloads as W
from core.nets import zoo
from sims import meritz as Z


def test_compute_bound_layer_is_fully_used_at_one_tau():
    t = W.conv(64, 30, 30, 64, 3, pad=1)
    r = Z.simulate(t, Z.MeritzConfig(alus=32))
    assert 0.95 < r.utilisation <= 1.0
    assert r.cycles >= r.useful_ops / 32                     # never faster than the ALUs allow


def test_dram_bound_layer_follows_bandwidth():
    t = W.depthwise(32, 64, 64)
    cfg = Z.MeritzConfig(alus=256)
    r = Z.simulate(t, cfg)
    # DRAM-bound: the time is the traffic at the configured bandwidth (plus a short fill/drain)
    assert r.cycles == pytest.approx(r.dram_bytes / cfg.bytes_per_cycle, rel=0.05)
    faster = Z.simulate(t, replace(cfg, dram_gbps=6.4))
    assert faster.utilisation == pytest.approx(2 * r.utilisation, rel=0.1)


def test_traffic_never_below_compulsory():
    t = W.conv(32, 40, 40, 32, 3, pad=1)
    r = Z.simulate(t, Z.MeritzConfig())
    compulsory = (32 * 40 * 40 + 32 * 32 * 9 + 32 * 40 * 40) * 2
    assert r.dram_bytes >= compulsory


def test_tiles_fit_the_srams():
    cfg = Z.MeritzConfig()
    t = W.conv(256, 56, 56, 256, 3, pad=1)
    Z._TRANSFORMS[Z._key(t)] = t
    plan = Z.plan_tiles(t, cfg)
    P = plan.tile["oc"] * plan.tile["y"] * plan.tile["x"]
    assert P <= cfg.cp_bytes // cfg.word_bytes
    fp_in = plan.tile["ic"] * (plan.tile["y"] + 2) * (plan.tile["x"] + 2)
    assert fp_in <= cfg.rp_bytes[plan.rp_of["I"]] // cfg.word_bytes // 2


@pytest.fixture(scope="module")
def vgg_convs():
    return [(n, t) for n, t in Z.network_transforms(zoo.get("vgg16")) if not n.startswith("fc")][1:6]


def test_fig15_shape_on_vgg_convolutions(vgg_convs):
    """Near-full up to 256 ALUs, then DRAM-bound: utilisation roughly halves per doubling."""
    curve = Z.scaling(vgg_convs, [32, 128, 256, 512, 1024], Z.MeritzConfig())
    assert curve[0] > 0.97 and curve[1] > 0.97 and curve[2] > 0.85
    assert curve[3] < 0.6 and curve[4] < 0.3
    assert curve[4] == pytest.approx(curve[3] / 2, rel=0.1)


def test_alexnet_and_table_ix_run():
    u, layers = Z.run_layers(Z.network_transforms(zoo.get("alexnet")), Z.MeritzConfig())
    assert [l.name for l in layers][:1] == ["conv1"] and len(layers) == 8
    assert 0.5 < u <= 1.0
    names = [n for n, _, _ in Z.table_ix_transforms()]
    assert set(names) == set(Z.PAPER_TABLE_IX)
    dw = dict((n, t) for n, t, _ in Z.table_ix_transforms())["Depthwise (MobileNet)"]
    # the paper's one memory-bound workload: it scales worst
    assert Z.scaling([("dw", dw)], [128], Z.MeritzConfig())[0] < 0.5
