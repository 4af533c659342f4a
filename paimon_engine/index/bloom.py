"""Bloom filter index (``bloom-filter``), byte-compatible with Paimon's ``BloomFilterFileIndex``.

Serialized form: int32 BE number of hash functions, then the bit set (``numBits / 8``
bytes, bit ``p`` is ``byte[p >> 3] & (1 << (p & 7))``). Nulls are not added.
Sizing for ``items`` expected values and false-positive rate ``fpp``:
``nb = (int)(-items * ln(fpp) / ln(2)^2)``, ``numBits = nb + (8 - nb % 8)``,
``k = max(1, round(numBits / items * ln 2))``.
"""
from __future__ import annotations

import math
import struct

import numpy as np

from .. import _speedups
from .. import types as T
from ..errors import CorruptFileError, InvalidArgumentError, UnsupportedTypeError
from .hashing import hash_keys
from .result import REMAIN, SKIP
from .values import column_keys, kind_of, literal_key

__all__ = ["BloomFilterIndex", "bloom_params"]

DEFAULT_ITEMS = 1_000_000
DEFAULT_FPP = 0.1
OPTIONS = ("items", "fpp")


def _java_round(x: float) -> int:
    return int(math.floor(x + 0.5))


def bloom_params(items: int, fpp: float):
    """``(numBits, numHashFunctions)`` exactly as Java sizes them."""
    if items <= 0:
        raise InvalidArgumentError(f"bloom-filter items must be positive, got {items}")
    if not 0.0 < fpp < 1.0:
        raise InvalidArgumentError(f"bloom-filter fpp must be in (0, 1), got {fpp}")
    nb = int(-items * math.log(fpp) / (math.log(2) ** 2))
    num_bits = nb + (8 - nb % 8)
    k = max(1, _java_round(num_bits / items * math.log(2)))
    return num_bits, k


def _check_type(t):
    if isinstance(t, (T.BooleanType, T.DecimalType)) or t.is_nested:
        raise UnsupportedTypeError(f"the bloom-filter index does not support {t.to_paimon_string()}")
    return kind_of(t)


class BloomFilterIndex:
    """Writer (``add``/``add_column``/``to_bytes``) and reader (``from_bytes`` + queries)."""

    TYPE = "bloom-filter"

    def __init__(self, data_type: T.DataType, options: dict | None = None, *, num_bits=None, k=None,
                 bits=None):
        options = dict(options or {})
        for key in options:
            if key not in OPTIONS:
                raise InvalidArgumentError(f"unknown bloom-filter option {key!r} (known: {', '.join(OPTIONS)})")
        self.type = data_type
        self.kind = _check_type(data_type)
        if num_bits is None:
            try:
                items = int(options.get("items", DEFAULT_ITEMS))
                fpp = float(options.get("fpp", DEFAULT_FPP))
            except (TypeError, ValueError) as e:
                raise InvalidArgumentError(f"bad bloom-filter option: {e}") from None
            num_bits, k = bloom_params(items, fpp)
        self.num_bits = int(num_bits)
        self.k = int(k)
        self.bits = bits if bits is not None else np.zeros(self.num_bits // 8, dtype=np.uint8)

    # -- writing -------------------------------------------------------------
    def add_hashes(self, hashes) -> None:
        h = np.ascontiguousarray(hashes, dtype=np.int64)
        _speedups.kernel("hashing").bloom_set(h, self.k, self.num_bits, self.bits)

    def add_column(self, column) -> None:
        """Add every non-null value of a :class:`~paimon_engine.batch.Column`."""
        keys, valid = column_keys(column, self.type)
        if self.kind == "bytes":
            if not valid.all():
                keys = [k for k in keys if k is not None]
        else:
            keys = keys[valid]
        self.add_hashes(hash_keys(keys, self.kind))

    def add(self, value) -> None:
        """Add one Python value (``None`` is ignored)."""
        if value is not None:
            self.add_hashes(hash_keys([literal_key(value, self.type)], self.kind))

    def to_bytes(self) -> bytes:
        return struct.pack(">i", self.k) + self.bits.tobytes()

    # -- reading -------------------------------------------------------------
    @classmethod
    def from_bytes(cls, data, data_type: T.DataType, path=None, offset=0) -> "BloomFilterIndex":
        data = bytes(data)
        if len(data) < 5:
            raise CorruptFileError(f"bloom filter of {len(data)} bytes", path=path, offset=offset)
        k = struct.unpack_from(">i", data, 0)[0]
        if not 1 <= k <= 255:
            raise CorruptFileError(f"bloom filter with {k} hash functions", path=path, offset=offset)
        bits = np.frombuffer(data, dtype=np.uint8, offset=4).copy()
        return cls(data_type, num_bits=len(bits) * 8, k=k, bits=bits)

    def test_hashes(self, hashes) -> np.ndarray:
        """Bool array: may each hash be present."""
        h = np.ascontiguousarray(hashes, dtype=np.int64)
        out = np.empty(h.shape[0], dtype=np.uint8)
        _speedups.kernel("hashing").bloom_test(h, self.k, self.num_bits, self.bits, out)
        return out.view(np.bool_)

    def test_keys(self, keys) -> np.ndarray:
        return self.test_hashes(hash_keys(keys, self.kind))

    def might_contain(self, values) -> np.ndarray:
        """Vectorized membership of Python values (a list) or a NumPy array of keys."""
        if isinstance(values, np.ndarray) and self.kind != "bytes" and values.dtype.kind in "iu":
            return self.test_hashes(hash_keys(values, self.kind))
        return self.test_keys([literal_key(v, self.type) for v in values])

    def test(self, value) -> bool:
        return bool(self.might_contain([value])[0])

    # -- predicates ----------------------------------------------------------
    def eq(self, value):
        if value is None:
            return SKIP
        return REMAIN if self.test(value) else SKIP

    def isin(self, values):
        vals = [v for v in values if v is not None]
        if not vals:
            return SKIP
        return REMAIN if self.might_contain(vals).any() else SKIP

    def is_null(self):
        return REMAIN

    def is_not_null(self):
        return REMAIN

    def ne(self, value):
        return REMAIN

    def not_in(self, values):
        return REMAIN
