"""Butterfly routing of SRAM banks to ALUs (paper, section V-C, equations 10-16).

For the N = 2^L lanes of one access, A_n is the SRAM address lane n reads. The hash property
matrix H (rows: address bits, columns: lane bits) says, for each address bit i and lane bit j,
whether flipping bit j of the lane number always (1), never (0) or sometimes (x) flips bit i of
the address (eq. 12; printed in the paper with the roles of i and j as in eq. 13). The paper's
sufficient condition: H reduces to the identity by repeatedly taking a row without x and ANDing
its NOT into the other rows. A non-square H (more address bits than bank bits, strided or
dilated access) is first squared by an XOR hash X and a bit rotation R (eq. 16).

The verdict is cross-checked by routing the lanes' banks through a simulated butterfly.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import cast

import numpy as np

from core.errors import InputError

X = 2          # the ternary "unconstrained" symbol


def log2_exact(n: int, what: str = "banks") -> int:
    """L with 2^L = n, or an InputError: the butterfly network needs a power-of-two width."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 2 or n & (n - 1):
        raise InputError(f"the butterfly network needs a power-of-two bank count (2, 4, 8, ...), got {n}", what)
    return n.bit_length() - 1


def address_pattern(a0: int, c: list[int]) -> np.ndarray:
    """Eq. 10: A_n = A_0 + sum_i c_i b_{n,i}."""
    L = len(c)
    n = np.arange(1 << L)
    return cast(np.ndarray, a0 + sum(ci * ((n >> i) & 1) for i, ci in enumerate(c)))


def property_matrix(addr: np.ndarray, rows: int) -> np.ndarray:
    """Eq. 12 over one or many accesses: addr has shape (N,) or (groups, N)."""
    a = np.atleast_2d(np.asarray(addr, dtype=np.int64))
    N = a.shape[1]
    L = log2_exact(N, "lanes")
    H = np.zeros((rows, L), dtype=np.int8)
    n = np.arange(N)
    for j in range(L):
        partner = a[:, n ^ (1 << j)]
        for i in range(rows):
            flips = ((a >> i) ^ (partner >> i)) & 1
            H[i, j] = 1 if flips.all() else (0 if not flips.any() else X)
    return H


def t_not(v: np.ndarray) -> np.ndarray:
    return np.where(v == X, X, 1 - v).astype(np.int8)


def t_and(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where((a == 0) | (b == 0), 0, np.where((a == 1) & (b == 1), 1, X)).astype(np.int8)


def t_xor(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where((a == X) | (b == X), X, a ^ b).astype(np.int8)


def t_matmul(M: np.ndarray, H: np.ndarray) -> np.ndarray:
    """Binary M times ternary H with XOR as addition and AND as multiplication."""
    out = np.zeros((M.shape[0], H.shape[1]), dtype=np.int8)
    for i in range(M.shape[0]):
        for m in np.flatnonzero(M[i]):
            out[i] = t_xor(out[i], H[m])
    return out


def reduce_to_identity(H: np.ndarray) -> tuple[bool, list[str]]:
    """The reduction of section V-C; returns (reaches I, the steps taken)."""
    H = H.copy()
    n = H.shape[0]
    if H.shape[0] != H.shape[1]:
        return False, ["H is not square"]
    used: set[int] = set()
    steps: list[str] = []
    while True:
        if np.array_equal(H, np.eye(n, dtype=np.int8)):
            return True, steps
        pick = next((r for r in range(n) if r not in used and not (H[r] == X).any()), None)
        if pick is None:
            steps.append("no unused row without x: stop")
            return False, steps
        mask = t_not(H[pick])
        for r in range(n):
            if r != pick:
                H[r] = t_and(H[r], mask)
        used.add(pick)
        steps.append(f"row {pick} = {fmt_row(H[pick])}: AND NOT into the others -> {fmt(H)}")


def fmt_row(r: np.ndarray) -> str:
    return "".join("x" if v == X else str(int(v)) for v in r)


def fmt(H: np.ndarray) -> list[str]:
    return [fmt_row(r) for r in H]


def parse(rows: list[str]) -> np.ndarray:
    return np.array([[X if ch == "x" else int(ch) for ch in r] for r in rows], dtype=np.int8)


def rotate(H: np.ndarray, k: int) -> np.ndarray:
    """R^k H with R the cyclic shift of eq. 16 (row i takes row i+1)."""
    return np.roll(H, -k, axis=0)


def xor_candidates(L: int, M: int):
    """Upper-triangular L x M binary matrices with unit diagonal and at most one off-diagonal 1 per row."""
    per_row = [[None] + list(range(i + 1, M)) for i in range(L)]
    for choice in itertools.product(*per_row):
        Xm = np.zeros((L, M), dtype=np.int8)
        for i, j in enumerate(choice):
            Xm[i, i] = 1
            if j is not None:
                Xm[i, j] = 1
        yield Xm


def square_up(H: np.ndarray, L: int) -> tuple[np.ndarray, int, np.ndarray] | None:
    """Find (X, k) with R^k X H reducible to I (eq. 16), fewest off-diagonal terms first."""
    cands = sorted(xor_candidates(L, H.shape[0]), key=lambda m: int(m.sum()))
    for Xm in cands:
        XH = t_matmul(Xm, H)
        for k in range(L):
            Hs = rotate(XH, k)
            if reduce_to_identity(Hs)[0]:
                return Xm, k, Hs
    return None


def hashed_banks(addr: np.ndarray, Xm: np.ndarray | None, k: int, L: int) -> np.ndarray:
    """Bank number of each address after the XOR hash X and rotation R^k (identity without X)."""
    a = np.asarray(addr, dtype=np.int64)
    if Xm is None:
        return a & ((1 << L) - 1)
    bits = np.stack([(a >> m) & 1 for m in range(Xm.shape[1])], axis=-1)      # (..., M)
    hb = (bits @ Xm.T.astype(np.int64)) & 1                                      # (..., L)
    hb = np.roll(hb, -k, axis=-1)
    return (hb * (1 << np.arange(L))).sum(axis=-1)


def routes(banks: np.ndarray, lsb_first: bool = True) -> bool:
    """Route bank b(n) -> ALU n through a log2 N-stage butterfly; False on any wire collision."""
    N = banks.size
    L = log2_exact(N, "lanes")
    if len(set(banks.tolist())) != N:
        return False
    dst = np.arange(N)
    order = range(L) if lsb_first else range(L - 1, -1, -1)
    pos = banks.astype(np.int64).copy()
    for s in order:
        pos = (pos & ~(1 << s)) | (dst & (1 << s))
        if np.unique(pos).size != N:
            return False
    return True


@dataclass
class Verdict:
    L: int
    H: np.ndarray
    square_ok: bool
    steps: list[str]
    Xm: np.ndarray | None = None
    k: int = 0
    H_squared: np.ndarray | None = None
    H_tall: np.ndarray | None = None
    routable: float = 0.0
    broadcast_bits: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        return self.square_ok or self.Xm is not None


def verdict(addr: np.ndarray, n_banks: int, extra_bits: int = 2) -> Verdict:
    """Square test first; if it fails, try XOR hash + rotation with up to `extra_bits` more bits."""
    L = log2_exact(n_banks)
    a = np.atleast_2d(np.asarray(addr, dtype=np.int64))
    if a.shape[1] != n_banks:
        raise InputError(f"an access has {a.shape[1]} lanes but there are {n_banks} banks", "banks")
    H = property_matrix(a, L)
    ok, steps = reduce_to_identity(H)
    v = Verdict(L, H, ok, steps)
    n = np.arange(n_banks)
    v.broadcast_bits = tuple(j for j in range(L) if (a == a[:, n ^ (1 << j)]).all())
    if not ok:
        for M in range(L + 1, L + 1 + extra_bits):
            Ht = property_matrix(a, M)
            found = square_up(Ht, L)
            v.H_tall = Ht
            if found:
                v.Xm, v.k, v.H_squared = found
                break
    sample = a[:: max(1, a.shape[0] // 256)]
    if v.ok:
        banks = hashed_banks(sample, v.Xm, v.k, L)
        v.routable = float(np.mean([routes(b) or routes(b, False) for b in banks]))
    return v
