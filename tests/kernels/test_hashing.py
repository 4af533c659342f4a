"""hashing kernels: compiled and pure-Python twin give the same results."""
import numpy as np
import pytest

from paimon_engine import _speedups
from tests.kernels.impls import implementations


@pytest.mark.parametrize("impl", implementations("hashing"))
def test_long_hash_matches_twin(impl):
    twin = _speedups.twin("hashing")
    rng = np.random.default_rng(0)
    v = np.concatenate([rng.integers(-(1 << 63), (1 << 63) - 1, 5000, dtype=np.int64),
                        np.array([0, -1, 1, -(1 << 63), (1 << 63) - 1], dtype=np.int64)])
    a, b = np.empty_like(v), np.empty_like(v)
    assert impl.long_hash(v, a) == len(v)
    assert twin.long_hash(v, b) == len(v)
    assert (a == b).all()


@pytest.mark.parametrize("impl", implementations("hashing"))
@pytest.mark.parametrize("k,num_bits", [(1, 8), (3, 480), (7, 9592), (13, 4096)])
def test_bloom_set_test_match_twin(impl, k, num_bits):
    twin = _speedups.twin("hashing")
    rng = np.random.default_rng(k)
    h = rng.integers(-(1 << 63), (1 << 63) - 1, 300, dtype=np.int64)
    bits_a = np.zeros(num_bits // 8, dtype=np.uint8)
    bits_b = np.zeros(num_bits // 8, dtype=np.uint8)
    assert impl.bloom_set(h, k, num_bits, bits_a) == len(h)
    assert twin.bloom_set(h, k, num_bits, bits_b) == len(h)
    assert (bits_a == bits_b).all()
    probe = np.concatenate([h, rng.integers(-(1 << 63), (1 << 63) - 1, 300, dtype=np.int64)])
    out_a = np.empty(len(probe), dtype=np.uint8)
    out_b = np.empty(len(probe), dtype=np.uint8)
    ca = impl.bloom_test(probe, k, num_bits, bits_a, out_a)
    cb = twin.bloom_test(probe, k, num_bits, bits_a, out_b)
    assert ca == cb == int(out_a.sum()) and (out_a == out_b).all()
    assert out_a[: len(h)].all()  # no false negatives


@pytest.mark.parametrize("impl", implementations("hashing"))
def test_bad_buffers(impl):
    h = np.arange(10, dtype=np.int64)
    assert impl.bloom_set(h, 3, 800, np.zeros(10, dtype=np.uint8)) == -4  # 80 bits < 800
    assert impl.bloom_set(h, 0, 80, np.zeros(10, dtype=np.uint8)) == -4
    assert impl.bloom_test(h, 3, 80, np.zeros(10, dtype=np.uint8), np.zeros(5, dtype=np.uint8)) == -4
    assert impl.bloom_set(h[:0], 3, 80, np.zeros(10, dtype=np.uint8)) == 0


# -- CRC-32 -------------------------------------------------------------------------

def _crc_cases():
    rng = np.random.default_rng(11)
    sizes = list(range(0, 130)) + [255, 256, 257, 1000, 4096, 4111, 65536 + 7, 200_003]
    return [(rng.integers(0, 256, n, dtype=np.uint8).tobytes(), int(rng.integers(0, 1 << 32))) for n in sizes]


@pytest.mark.parametrize("impl", implementations("hashing"))
def test_crc32_matches_zlib(impl):
    import zlib
    before = impl.vector_paths()
    try:
        for vector, wide in ((True, True), (True, False), (False, False)):
            impl.vector_paths(vector, wide)
            for data, start in _crc_cases():
                assert impl.crc32(data) == zlib.crc32(data)
                assert impl.crc32(data, start) == zlib.crc32(data, start)
                # any alignment, a memoryview in place, a bytearray
                view = memoryview(data)[3:]
                assert impl.crc32(view, start) == zlib.crc32(view, start)
                assert impl.crc32(bytearray(data)) == zlib.crc32(data)
            # all-zero and all-one bytes, and a CRC carried across pieces cut anywhere
            for data in (bytes(1000), b"\xff" * 1000):
                assert impl.crc32(data) == zlib.crc32(data)
            data = _crc_cases()[-1][0]
            for cut in (0, 1, 15, 16, 63, 64, 65, 4097):
                assert impl.crc32(data[cut:], impl.crc32(data[:cut])) == zlib.crc32(data)
    finally:
        impl.vector_paths(before, True)


@pytest.mark.parametrize("impl", implementations("hashing"))
def test_crc32_takes_what_zlib_takes(impl):
    """Any contiguous buffer (an Arrow buffer of signed bytes, an int64 array, a memoryview) and any start value,
    taken modulo 2**32."""
    import zlib

    import pyarrow as pa
    for data in (b"abc", pa.py_buffer(b"xyz" * 300), np.arange(100), memoryview(b"q" * 1000)[3:]):
        for start in (0, 5, -1, 2 ** 32 + 5):
            assert impl.crc32(data, start) == zlib.crc32(data, start)


def test_crc32_vector_path_live():
    from tests.kernels.impls import PCLMUL, check_vector_paths_live
    check_vector_paths_live([p.values[0] for p in implementations("hashing")], PCLMUL)
