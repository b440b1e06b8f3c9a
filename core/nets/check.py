"""Consistency check of a flattened layer table: every layer reads a tensor that exists.

A `Network` stores no edges, so the check is what the table itself can prove: each layer's input
shape must be the network input or the output of an earlier layer (an FC layer may read it
flattened), an add must merge an earlier shape, and a concat's channels must be a sum of channels
of earlier outputs of its height and width produced since the previous merge.
"""

from __future__ import annotations

from typing import cast

from core.errors import InputError
from core.nets.layers import Conv, Eltwise, Network, Pool


def _subset_sums(values: list[int], limit: int) -> set[int]:
    sums = {0}
    for v in values:
        sums |= {s + v for s in sums if s + v <= limit}
    return sums


def check_chain(net: Network) -> None:
    """Raise InputError naming the first layer whose input no earlier tensor provides."""
    first = cast("tuple[int, int, int]", tuple(net.input_shape))
    seen: list[tuple[int, int, int]] = [first]
    since_merge: list[tuple[int, int, int]] = [first]
    names: set[str] = set()
    for i, l in enumerate(net.layers):
        where = f"{net.name}.layers[{i}] ({l.name})"
        if l.name in names:
            raise InputError("duplicate layer name", where)
        names.add(l.name)
        if isinstance(l, Conv):
            want = (l.in_ch, l.in_h, l.in_w)
            ok = want in seen or (l.fc and l.in_h == l.in_w == 1
                                  and any(c * h * w == l.in_ch for c, h, w in seen))
            if l.in_ch % l.groups or l.out_ch % l.groups:
                raise InputError(f"channels {l.in_ch}->{l.out_ch} not divisible by groups {l.groups}", where)
            out = l.out_shape
        elif isinstance(l, Pool):
            want = (l.ch, l.in_h, l.in_w)
            ok = want in seen
            out = l.out_shape
        elif isinstance(l, Eltwise):
            want = out = l.out_shape
            if l.op == "concat":
                parts = [c for c, h, w in since_merge if (h, w) == (l.h, l.w)]
                ok = l.ch in _subset_sums(parts, l.ch) and l.ch > 0
            else:
                ok = want in seen
        else:
            raise InputError(f"unknown layer type {type(l).__name__}", where)
        if not ok:
            raise InputError(f"input shape {want} is not produced by any earlier layer", where)
        if min(out) <= 0:
            raise InputError(f"empty output shape {out}", where)
        seen.append(out)
        since_merge = [out] if isinstance(l, Eltwise) else since_merge + [out]
