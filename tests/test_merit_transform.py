"""MERIT transforms (eq. 5) evaluated with numpy against direct implementations."""

import numpy as np
import pytest

from core.errors import InputError
from core.merit_transform import workloads as W
from core.merit.evaluate import evaluate, m_grid, naive_rows
from core.merit_transform.fileformat import transform_from_json, workload_from_json


@pytest.mark.parametrize("name", W.names())
def test_workload_matches_direct_numpy(name):
    wl = W.WORKLOADS[name]
    rng = np.random.default_rng(1)
    data = wl.make_data(rng)
    for st in wl.stages:
        st.validate()
        data[st.name] = evaluate(st, data)
    out = data[wl.stages[-1].name]
    ref = wl.reference(data)
    assert out.shape == ref.shape
    assert np.max(np.abs(out - ref)) < 1e-9 * max(1.0, np.max(np.abs(ref)))
    # the vectorised gather agrees with eq. 5 walked element by element
    st = wl.stages[-1]
    rows = sorted({0, st.p_count - 1, *rng.integers(0, st.p_count, 5).tolist()})
    assert np.allclose(naive_rows(st, data, rows), out.reshape(-1)[rows])


def test_alexnet_conv1_is_equation_6():
    t = W.alexnet_conv1()
    assert t.p_sizes + t.a_sizes == (48, 55, 55, 3, 11, 11)
    # M(I)_{p,a} = I_{a1, 4 p2 + a2 - 5, 4 p3 + a3 - 5}
    k = {"p1": 7, "p2": 10, "p3": 3, "a1": 2, "a2": 9, "a3": 0}
    assert t.source_index(t.operand("I"), k) == (2, 4 * 10 + 9 - 5, 4 * 3 + 0 - 5)
    assert t.source_index(t.operand("k"), k) == (7, 2, 9, 0)


def test_correlation_is_equation_8():
    t = W.correlation(4, 6, 6, 2)
    k = {"p1": 3, "p2": 1, "p3": 4, "p4": 0, "a1": 2}
    assert t.source_index(t.operand("I1"), k) == (2, 3, 1)
    assert t.source_index(t.operand("I2"), k) == (2, 3 + 4 - 2, 1 + 0 - 2)


def test_m_grid_shows_source_elements():
    t = W.gemm(3, 4, 5)
    g = m_grid(t, t.operand("A"))
    assert (g.rows, g.cols) == (12, 5)
    # row 5 is (m=1, n=1); column 3 is k=3 -> A[1, 3]
    assert [g.coords[0][5][3], g.coords[1][5][3]] == [1, 3]


GEMM_JSON = {
    "name": "g", "parallel": [["m", 4], ["n", 5]], "accumulate": [["k", 6]],
    "operands": [{"name": "A", "shape": [4, 6], "map": {"m": [0, 1, 0], "k": [1, 1, 0]}},
                 {"name": "B", "shape": [6, 5], "map": {"k": [0, 1, 0], "n": [1, 1, 0]}}],
    "strategy": "dot", "reference": {"kind": "gemm"},
}


def test_json_transform_round_trip_and_reference():
    wl = workload_from_json(GEMM_JSON)
    d = wl.make_data(np.random.default_rng(0))
    out = evaluate(wl.transform, d)
    assert np.allclose(out, wl.reference(d))
    again = transform_from_json(wl.transform.to_json())
    assert again.to_json() == wl.transform.to_json()


def test_offset_leaving_tensor_is_input_error():
    bad = dict(GEMM_JSON, operands=[dict(GEMM_JSON["operands"][0], map={"m": [0, 1, 0], "k": [1, 1, 1]}),
                                    GEMM_JSON["operands"][1]])
    with pytest.raises(InputError) as e:
        transform_from_json(bad)
    assert "leave the tensor" in e.value.message and "operands[0]" in e.value.where


def test_stride_leaving_tensor_is_input_error():
    bad = dict(GEMM_JSON, operands=[GEMM_JSON["operands"][0],
                                    dict(GEMM_JSON["operands"][1], map={"k": [0, 2, 0], "n": [1, 1, 0]})])
    with pytest.raises(InputError) as e:
        transform_from_json(bad)
    assert "axis 0" in e.value.message


def test_mismatched_accumulated_sizes_is_input_error():
    ops = [dict(GEMM_JSON["operands"][0], accumulate_sizes=[6]),
           dict(GEMM_JSON["operands"][1], accumulate_sizes=[7])]
    with pytest.raises(InputError) as e:
        transform_from_json(dict(GEMM_JSON, operands=ops))
    assert "mismatched accumulated sizes" in e.value.message
    assert e.value.where.endswith("operands[1].accumulate_sizes")


def test_other_bad_transforms():
    with pytest.raises(InputError):
        transform_from_json(dict(GEMM_JSON, strategy="residual"))          # needs three operands
    with pytest.raises(InputError):
        transform_from_json(dict(GEMM_JSON, strategy="nope"))
    ops = [dict(GEMM_JSON["operands"][0], map={"q": [0, 1, 0]}), GEMM_JSON["operands"][1]]
    with pytest.raises(InputError):
        transform_from_json(dict(GEMM_JSON, operands=ops))                 # unknown index
    with pytest.raises(InputError):
        transform_from_json(dict(GEMM_JSON, parallel=[["m", 0], ["n", 5]]))


def test_bad_data_and_params():
    with pytest.raises(InputError) as e:
        workload_from_json(dict(GEMM_JSON, data={"A": [[1, 2], [3, 4]]}))
    assert e.value.where == "transform.data.A"
    t = W.bilateral(8, 8, 3).to_json()
    t["params"] = {}
    with pytest.raises(InputError) as e:
        transform_from_json(t)
    assert e.value.where.endswith("params.norm")
