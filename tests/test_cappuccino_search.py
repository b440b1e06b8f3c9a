"""Issue 35, bullet 3: the inexact-mode search computed incrementally and on a seeded sample
(forward.ActivationCache, inexact.sample_rows), so that VGG-16 runs in minutes."""

from __future__ import annotations

import numpy as np
import pytest

from core.cappuccino import engine as capp
from core.cappuccino import networks
from core.cappuccino.forward import ActivationCache, forward_reference
from core.cappuccino.inexact import ModeChoice, sample_rows, search_modes
from core.cappuccino.model import load_builtin
from core.cappuccino.numerics import IMPRECISE, PRECISE, RELAXED
from core.engine import JobRequest
from core.errors import InputError
from core.jobs import CancelToken, FinalResult
from core.workload import CnnNetwork, MobileSocTarget


@pytest.fixture(scope="module")
def digits():
    return load_builtin(60)


@pytest.fixture(scope="module")
def tiny_resnet(tmp_path_factory):
    """Residual adds and branches (a tensor read twice): ResNet-18 at 32x32, channels / 16."""
    return networks.load("resnet18", 3, resolution=32, divisor=16, folder=tmp_path_factory.mktemp("onnx"))


@pytest.fixture(scope="module")
def tiny_vgg(tmp_path_factory):
    """VGG-16's 16 arithmetic layers at 32x32, channels / 16 (the full network is never built here)."""
    return networks.load("vgg16", 4, resolution=32, divisor=16, folder=tmp_path_factory.mktemp("onnx"))


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, np.float32).view(np.uint32)


@pytest.mark.parametrize("which", ["digits", "tiny_resnet"])
def test_incremental_logits_equal_a_whole_forward_pass_bit_for_bit(which, request):
    m = request.getfixturevalue(which)
    layers = [op.name for op in m.conv_ops]
    cache = ActivationCache(m, m.x_val, prefix_bytes=64 << 20)
    rng = np.random.default_rng(3)
    assignments = [{}, {layers[0]: RELAXED}, {layers[1]: IMPRECISE}, {layers[-1]: IMPRECISE},
                   {n: IMPRECISE for n in layers}]
    assignments += [{n: str(rng.choice([PRECISE, RELAXED, IMPRECISE])) for n in layers} for _ in range(4)]
    for modes in assignments + assignments[::-1]:        # again in reverse: from the remembered prefixes
        want = forward_reference(m, m.x_val, modes)[0]
        assert np.array_equal(_bits(cache.logits(modes)), _bits(want)), modes


def test_a_layer_equal_to_precise_costs_one_op_and_a_changed_one_only_the_ops_after_it(tiny_resnet):
    m = tiny_resnet
    cache = ActivationCache(m, m.x_val)
    assert cache.logits({}) is not None and cache.computed == 0              # all precise: the cache itself
    first = m.conv_ops[0].name
    cache.logits({first: RELAXED})               # no denormals here: relaxed gives precise's bits
    assert cache.computed == 1 and cache.same[(first, RELAXED)]
    cache.logits({first: RELAXED})               # remembered: not even that op again
    assert cache.computed == 1
    last = m.conv_ops[-1]
    after = len(m.ops) - [op.name for op in m.ops].index(last.name)
    cache.logits({last.name: IMPRECISE})
    assert cache.computed == 1 + after           # the last layer and what follows it, nothing before


def test_search_on_a_tiny_vgg_does_far_less_than_a_pass_per_configuration(tiny_vgg):
    m = tiny_vgg
    items = list(search_modes(m, 0.5, RELAXED))
    choice = items[-1]
    assert isinstance(choice, ModeChoice) and len(m.conv_ops) == 16
    configs = len(choice.configurations)
    assert configs >= 1 + 2 * 16
    # the old search ran (a prefix-shared part of) the network per configuration; this one computes
    # from the changed layer on, and relaxed layers that meet no denormal one op each
    assert choice.ops_computed < 0.3 * configs * len(m.ops)
    assert choice.search_images == choice.validation_images == 4 and choice.sample_seed is None
    for c in choice.configurations:              # every accuracy is what a whole forward pass gives
        if c.index % 7 == 0:
            pred = forward_reference(m, m.x_val, c.modes)[0].argmax(1)
            assert c.accuracy == pytest.approx(100.0 * (pred == m.y_val).mean())


def test_the_sample_is_seeded_sorted_and_automatic_by_size():
    assert sample_rows(360, 84e3 / 1e9) is None                  # digits: every image
    assert sample_rows(8, 1.8) is None                            # the paper's networks: all 8
    vgg = sample_rows(8, 15.5)
    assert vgg is not None and len(vgg) == 2 and list(vgg) == sorted(vgg)
    assert np.array_equal(vgg, np.asarray(sample_rows(8, 15.5)))  # seeded: the same every run
    assert len(np.asarray(sample_rows(360, 0.001, 50))) == 50 and sample_rows(8, 15.5, 8) is None
    assert len(np.asarray(sample_rows(3, 1000.0))) == 1           # at least one image


def test_a_sampled_search_measures_the_sample_and_says_so(digits):
    rows = sample_rows(len(digits.y_val), 1.0, 12)
    choice = list(search_modes(digits, 0.5, RELAXED, rows=rows))[-1]
    assert isinstance(choice, ModeChoice) and rows is not None
    assert choice.search_images == 12 and choice.validation_images == 60 and choice.sample_seed == 0
    assert "seeded sample of 12 of the 60" in choice.message
    pred = forward_reference(digits, digits.x_val[rows])[0].argmax(1)
    assert choice.precise_accuracy == pytest.approx(100.0 * (pred == digits.y_val[rows]).mean())


def _run(request: JobRequest):
    result = None
    for ev in capp.run(request, CancelToken()):
        if isinstance(ev, FinalResult):
            result = ev.data
    return result


def test_engine_runs_a_sampled_search_and_refuses_a_sample_it_cannot_keep(monkeypatch):
    net = CnnNetwork(capp.BUILTIN_DIGITS)
    s = dict(capp.default_settings(), compile=False, limit=40, search_sample=10)
    r = _run(JobRequest(net, MobileSocTarget(2, 4), s))
    assert r.inexact.search_images == 10 and r.inexact.validation_images == 40
    assert r.layout_check.precise.ok and r.layout_check.chosen.ok
    model = capp.load_model(net, 40)
    per_image = 4 * sum(int(np.prod(op.out_shape)) for op in model.ops)
    monkeypatch.setattr(capp, "CACHE_BYTES", 20 * per_image)  # the sample's activations fit, not all 40
    r2 = _run(JobRequest(net, MobileSocTarget(2, 4), s))
    assert r2.inexact.search_images == 10 and r2.inexact.precise_accuracy == r.inexact.precise_accuracy
    assert r2.inexact.modes == r.inexact.modes
    monkeypatch.setattr(capp, "CACHE_BYTES", 1000)          # neither all images' activations nor 10 fit
    with pytest.raises(InputError) as e:
        _run(JobRequest(net, MobileSocTarget(2, 4), s))
    assert e.value.where == "settings.search_sample"
    with pytest.raises(InputError) as e:
        capp._settings({"search_sample": -1})
    assert "search_sample" in e.value.where
