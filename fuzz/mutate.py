"""The hypothesis engine's inputs: random bytes, and seeds changed by a few byte-level mutations."""
from __future__ import annotations

import struct

from hypothesis import strategies as st

__all__ = ["inputs", "mutate"]

#: values that sit on the edges of the lengths, counts and offsets decoders read
INTERESTING = (0, 1, 2, 7, 8, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000,
               0xFFFFFFFF, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1)
_OPS = ("flip", "byte", "int", "cut", "insert", "delete", "copy", "splice")


def mutate(data: bytes, ops, seeds) -> bytes:
    """Apply ``ops`` (tuples drawn by :func:`inputs`) to ``data``; positions wrap around its length."""
    b = bytearray(data)
    for op, a, c, v in ops:
        n = len(b)
        if op == "flip" and n:
            b[a % n] ^= 1 << (c % 8)
        elif op == "byte" and n:
            b[a % n] = v & 0xFF
        elif op == "int" and n:
            width = (1, 2, 4, 8)[c % 4]
            order = "<>"[(c // 4) % 2]
            val = INTERESTING[v % len(INTERESTING)]
            raw = struct.pack(order + "BHIQ"[(1, 2, 4, 8).index(width)], val & ((1 << (8 * width)) - 1))
            pos = a % n
            b[pos:pos + width] = raw
        elif op == "cut":
            del b[a % (n + 1):]
        elif op == "insert":
            pos = a % (n + 1)
            b[pos:pos] = bytes([v & 0xFF]) * (1 + c % 16)
        elif op == "delete" and n:
            pos = a % n
            del b[pos:pos + 1 + c % 16]
        elif op == "copy" and n:
            src, dst = a % n, c % n
            chunk = b[src:src + 1 + v % 32]
            b[dst:dst] = chunk
        elif op == "splice" and seeds:
            other = seeds[v % len(seeds)]
            pos = a % (n + 1)
            b = b[:pos] + other[c % (len(other) + 1):]
    return bytes(b)


def inputs(seeds, max_len: int):
    """Strategy: mostly mutated seeds, sometimes plain random bytes."""
    seeds = [bytes(s) for s in seeds] or [b""]
    op = st.tuples(st.sampled_from(_OPS), st.integers(0, 1 << 20), st.integers(0, 1 << 10), st.integers(0, 255))
    mutated = st.builds(lambda s, ops: mutate(s, ops, seeds)[:max_len], st.sampled_from(seeds),
                        st.lists(op, min_size=1, max_size=8))
    return st.one_of(mutated, mutated, mutated, st.binary(max_size=min(max_len, 512)))
