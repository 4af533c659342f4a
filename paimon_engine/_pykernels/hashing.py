"""Hash and bloom-filter kernels (pure-Python twin of ``_kernels/hashing.pyx``).

* ``long_hash(values, out)``: Paimon's 64-bit integer hash (Thomas Wang) of every
  int64 in ``values`` into ``out`` (int64). Returns the count, -4 if ``out`` is short.
* ``bloom_set(hashes, k, num_bits, bits)``: sets the ``k`` probe bits of every 64-bit
  hash in the little-endian bit array ``bits``. Returns the count or -4.
* ``bloom_test(hashes, k, num_bits, bits, out)``: ``out[i] = 1`` when every probe bit
  of ``hashes[i]`` is set. Returns how many hashes may be present, or -4.

Probe scheme (Java ``BloomFilter64``): ``h1 = (int) hash``, ``h2 = (int) (hash >>> 32)``;
for ``i`` in 1..k: ``c = h1 + i * h2`` (int32 wrap), ``c = ~c`` if negative, bit ``c % num_bits``.

* ``crc32(data, value=0)``: ``zlib.crc32`` (the CRC-32 of deletion vectors and Puffin blobs); the compiled
  kernel folds with carry-less multiplication where the processor has it.
* ``vector_paths(enabled=None, wide=None)``: whether such a path is taken (always False here).
"""
import zlib

import numpy as np

_BAD = -4


def long_hash(values, out):
    v = np.asarray(values, dtype=np.int64)
    n = v.shape[0]
    if out.shape[0] < n:
        return _BAD
    with np.errstate(over="ignore"):
        k = v.view(np.uint64).copy()
        k = ~k + (k << np.uint64(21))
        k ^= (k.view(np.int64) >> 24).view(np.uint64)
        k = k + (k << np.uint64(3)) + (k << np.uint64(8))
        k ^= (k.view(np.int64) >> 14).view(np.uint64)
        k = k + (k << np.uint64(2)) + (k << np.uint64(4))
        k ^= (k.view(np.int64) >> 28).view(np.uint64)
        k = k + (k << np.uint64(31))
    out[:n] = k.view(np.int64)
    return n


def _positions(hashes, k, num_bits):
    h = np.asarray(hashes, dtype=np.int64)
    h1 = (h & 0xFFFFFFFF).astype(np.uint32).view(np.int32).astype(np.int64)
    h2 = ((h.view(np.uint64) >> np.uint64(32)).astype(np.uint32)).view(np.int32).astype(np.int64)
    cols = []
    for i in range(1, k + 1):
        c = h1 + i * h2
        c = ((c + (1 << 31)) % (1 << 32)) - (1 << 31)  # int32 wrap
        c = np.where(c < 0, ~c, c)
        cols.append(c % num_bits)
    if not cols:
        return np.zeros((h.shape[0], 0), dtype=np.int64)
    return np.stack(cols, axis=1)


def bloom_set(hashes, k, num_bits, bits):
    n = len(hashes)
    if k < 1 or num_bits < 1 or bits.shape[0] * 8 < num_bits:
        return _BAD
    if n == 0:
        return 0
    pos = _positions(hashes, k, num_bits).ravel()
    np.bitwise_or.at(bits, pos >> 3, (1 << (pos & 7)).astype(np.uint8))
    return n


def bloom_test(hashes, k, num_bits, bits, out):
    n = len(hashes)
    if k < 1 or num_bits < 1 or bits.shape[0] * 8 < num_bits or out.shape[0] < n:
        return _BAD
    if n == 0:
        return 0
    pos = _positions(hashes, k, num_bits)
    hit = ((np.asarray(bits)[pos >> 3] >> (pos & 7)) & 1).astype(bool).all(axis=1)
    out[:n] = hit
    return int(hit.sum())


def crc32(data, value=0):
    return zlib.crc32(data, value)


def vector_paths(enabled=None, wide=None):
    return False
