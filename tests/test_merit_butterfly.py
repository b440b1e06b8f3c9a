"""Section V-C: hash property matrix and the reduction test, with the paper's equations 11-16."""

import itertools

import numpy as np
import pytest

from core.errors import InputError
from core.merit import butterfly as BF


def test_equation_11_banks_and_S():
    a = BF.address_pattern(3, [1, 6, 12])
    assert (a % 8).tolist() == [3, 4, 1, 2, 7, 0, 5, 6]      # the paper prints 8 for 0 (mod 8)
    S = np.array([[(b >> i) & 1 for b in (a % 8)] for i in range(3)])
    assert S.tolist() == [[1, 0, 1, 0, 1, 0, 1, 0], [1, 0, 0, 1, 1, 0, 0, 1], [0, 1, 0, 0, 1, 0, 1, 1]]


def test_equation_13_holds_for_every_base_address():
    allbases = BF.property_matrix(np.stack([BF.address_pattern(a, [1, 6, 12]) for a in range(32)]), 3)
    assert BF.fmt(allbases) == ["100", "x10", "xx1"]
    for a0 in range(32):
        single = BF.property_matrix(BF.address_pattern(a0, [1, 6, 12]), 3)
        # each single base refines eq. 13: fixed entries agree, x may be either
        assert all(h == X or h == s for h, s, X in zip(allbases.ravel(), single.ravel(), [2] * 9))


def test_equations_14_and_15():
    assert BF.reduce_to_identity(BF.parse(["100", "x10", "xx1"]))[0]
    ok, steps = BF.reduce_to_identity(BF.parse(["10x", "x10", "0x1"]))
    assert not ok and "no unused row without x" in steps[-1]


def test_equation_16_non_square():
    H = BF.property_matrix(np.stack([BF.address_pattern(a, [4, 8, 3]) for a in range(16)]), 4)
    assert BF.fmt(H) == ["001", "00x", "10x", "x1x"]
    X = np.array([[1, 0, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]], dtype=np.int8)
    Hp = BF.rotate(BF.t_matmul(X, H), 1)
    assert BF.fmt(Hp) == ["10x", "x1x", "001"]
    assert BF.reduce_to_identity(Hp)[0]
    found = BF.square_up(H, 3)
    assert found is not None and found[0].tolist() == X.tolist() and found[1] == 1
    # the square test alone fails on these addresses: mod 8 they collide
    addr = np.stack([BF.address_pattern(a, [4, 8, 3]) for a in range(16)])
    assert not BF.reduce_to_identity(BF.property_matrix(addr, 3))[0]
    v = BF.verdict(addr, 8)
    assert v.ok and v.routable == 1.0


@pytest.mark.slow
def test_reduction_implies_butterfly_routing():
    """Over all strides c in 1..16 for 8 lanes: whenever H reduces to I, every base address routes."""
    checked = 0
    for c in itertools.product(range(1, 17), repeat=3):
        addr = np.stack([BF.address_pattern(a, list(c)) for a in range(16)])
        if BF.reduce_to_identity(BF.property_matrix(addr, 3))[0]:
            checked += 1
            assert all(BF.routes(b % 8) or BF.routes(b % 8, False) for b in addr)
    assert checked > 50


def test_bank_count_must_be_power_of_two():
    with pytest.raises(InputError) as e:
        BF.verdict(np.arange(6), 6)
    assert "power-of-two" in e.value.message
