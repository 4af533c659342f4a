"""The 64-bit hashes the bloom filter index uses, vectorized.

Numbers, dates, times and timestamps use Paimon's ``longHash`` (Thomas Wang) of the
value as a long (floats through ``floatToIntBits`` sign-extended, doubles through
``doubleToLongBits``); strings and binaries use XXH64 with seed 0 of their bytes.
"""
from __future__ import annotations

import numpy as np
import xxhash

from .. import _speedups

__all__ = ["long_hash", "xx64", "hash_keys"]

_MASK63 = 1 << 63
_TWO64 = 1 << 64


def long_hash(values) -> np.ndarray:
    """``longHash`` of every int64 in ``values`` (int64 array)."""
    v = np.ascontiguousarray(values, dtype=np.int64)
    out = np.empty(v.shape[0], dtype=np.int64)
    _speedups.kernel("hashing").long_hash(v, out)
    return out


def xx64(data: bytes) -> int:
    """Signed XXH64 (seed 0) of ``data``."""
    h = xxhash.xxh64_intdigest(data)
    return h - _TWO64 if h & _MASK63 else h


def hash_keys(keys, kind: str) -> np.ndarray:
    """Hashes of index keys (see :mod:`paimon_engine.index.values`); ``keys`` of the
    bytes kind is a sequence of ``bytes`` (no ``None``)."""
    if kind == "bytes":
        return np.fromiter(map(xxhash.xxh64_intdigest, keys), dtype=np.uint64, count=len(keys)).view(np.int64)
    return long_hash(np.asarray(keys).astype(np.int64))
