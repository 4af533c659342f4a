# Hash and bloom-filter kernels; see paimon_engine/_pykernels/hashing.py for the contract.
cimport cython
from libc.stdint cimport int64_t, uint64_t, int32_t, uint32_t, uint8_t


cdef inline int64_t _long_hash(int64_t key) noexcept nogil:
    cdef uint64_t k = <uint64_t> key
    k = (~k) + (k << 21)
    k = k ^ <uint64_t> ((<int64_t> k) >> 24)
    k = k + (k << 3) + (k << 8)
    k = k ^ <uint64_t> ((<int64_t> k) >> 14)
    k = k + (k << 2) + (k << 4)
    k = k ^ <uint64_t> ((<int64_t> k) >> 28)
    k = k + (k << 31)
    return <int64_t> k


@cython.boundscheck(False)
@cython.wraparound(False)
def long_hash(const int64_t[::1] values, int64_t[::1] out):
    cdef Py_ssize_t i, n = values.shape[0]
    if out.shape[0] < n:
        return -4
    with nogil:
        for i in range(n):
            out[i] = _long_hash(values[i])
    return n


cdef inline int64_t _probe(int64_t h, int i, int64_t num_bits) noexcept nogil:
    cdef int32_t h1 = <int32_t> h
    cdef int32_t h2 = <int32_t> (<uint64_t> h >> 32)
    cdef int32_t c = <int32_t> (<uint32_t> h1 + <uint32_t> i * <uint32_t> h2)
    if c < 0:
        c = ~c
    return c % num_bits


@cython.boundscheck(False)
@cython.wraparound(False)
def bloom_set(const int64_t[::1] hashes, int k, int64_t num_bits, uint8_t[::1] bits):
    cdef Py_ssize_t j, n = hashes.shape[0]
    cdef int i
    cdef int64_t p
    if k < 1 or num_bits < 1 or bits.shape[0] * 8 < num_bits:
        return -4
    with nogil:
        for j in range(n):
            for i in range(1, k + 1):
                p = _probe(hashes[j], i, num_bits)
                bits[p >> 3] |= <uint8_t> (1 << (p & 7))
    return n


@cython.boundscheck(False)
@cython.wraparound(False)
def bloom_test(const int64_t[::1] hashes, int k, int64_t num_bits, const uint8_t[::1] bits,
               uint8_t[::1] out):
    cdef Py_ssize_t j, n = hashes.shape[0], hits = 0
    cdef int i
    cdef int64_t p
    cdef uint8_t ok
    if k < 1 or num_bits < 1 or bits.shape[0] * 8 < num_bits or out.shape[0] < n:
        return -4
    with nogil:
        for j in range(n):
            ok = 1
            for i in range(1, k + 1):
                p = _probe(hashes[j], i, num_bits)
                if not (bits[p >> 3] >> (p & 7)) & 1:
                    ok = 0
                    break
            out[j] = ok
            hits += ok
    return hits
