"""Golden vectors from Paimon Java, reproduced byte for byte and decoded."""
import struct

import numpy as np
import pyarrow as pa
import pytest
from pyroaring import BitMap

from paimon_engine import types as T
from paimon_engine.batch import Column
from paimon_engine.index import (BitmapIndex, BloomFilterIndex, DeletionVector, DeletionVectorMeta,
                                 FileIndexReader, FileIndexWriter, bloom_params, read_deletion_vector,
                                 scan_deletion_vector_index, write_deletion_vector_index)
from paimon_engine.index import roaring
from paimon_engine.index.hashing import long_hash, xx64
from paimon_engine.index.values import literal_key
from tests.conftest import java_vectors
from tests.kernels.impls import implementations


def vectors(name):
    return [v[1:] for v in java_vectors() if v[0] == name]


def one(name):
    (v,) = vectors(name)
    return v


@pytest.mark.parametrize("impl", implementations("hashing"))
def test_longhash(impl):
    rows = vectors("longhash")
    assert len(rows) == 11
    xs = np.array([int(a) for a, _ in rows], dtype=np.int64)
    out = np.empty(len(xs), dtype=np.int64)
    assert impl.long_hash(xs, out) == len(xs)
    assert out.tolist() == [int(h) for _, h in rows]
    assert impl.long_hash(xs, np.empty(1, dtype=np.int64)) == -4


def test_longhash_wrapper():
    rows = vectors("longhash")
    assert long_hash([int(a) for a, _ in rows]).tolist() == [int(h) for _, h in rows]


def test_xx64():
    rows = vectors("xx64")
    assert len(rows) == 5
    for hx, h in rows:
        assert xx64(bytes.fromhex(hx)) == int(h)


def test_float_double_bits():
    f = one("floatbits")
    assert literal_key(float("nan"), T.FloatType()) == int(f[1])
    assert literal_key(1.5, T.FloatType()) == int(f[3])
    assert literal_key(-0.0, T.FloatType()) == int(f[5])
    d = one("doublebits")
    assert literal_key(3.14, T.DoubleType()) == int(d[1])
    assert literal_key(float("nan"), T.DoubleType()) == int(d[3])
    # column path: canonical NaN from any NaN payload
    from paimon_engine.index.values import canonical_float_bits, canonical_double_bits
    weird = np.array([0x7FC00001], dtype=np.int32).view(np.float32)
    assert canonical_float_bits(weird).tolist() == [int(f[1])]
    assert canonical_double_bits(np.array([np.nan, 3.14])).tolist() == [int(d[3]), int(d[1])]


def test_bloom_params():
    rows = vectors("bloomparams")
    assert len(rows) == 5
    for items, fpp, bits, k in rows:
        assert bloom_params(int(items), float(fpp)) == (int(bits[5:]), int(k[2:]))


def _int_bloom():
    idx = BloomFilterIndex(T.IntType(), {"items": "100", "fpp": "0.1"})
    idx.add_column(Column.from_arrow(pa.array(list(range(50)), type=pa.int32())))
    return idx


@pytest.mark.parametrize("impl", implementations("hashing"))
def test_bloom_int_bytes(impl, monkeypatch):
    from paimon_engine import _speedups
    monkeypatch.setattr(_speedups, "kernel", lambda name: impl)
    assert _int_bloom().to_bytes().hex() == one("bloom_int_0_49")[0]


@pytest.mark.parametrize("impl", implementations("hashing"))
def test_bloom_int_answers(impl, monkeypatch):
    from paimon_engine import _speedups
    monkeypatch.setattr(_speedups, "kernel", lambda name: impl)
    idx = BloomFilterIndex.from_bytes(bytes.fromhex(one("bloom_int_0_49")[0]), T.IntType())
    t = one("bloom_int_test")
    for value, answer in zip(t[0::2], t[1::2]):
        assert idx.test(int(value)) == (answer == "true")
    assert idx.might_contain(list(range(50))).all()


def test_roaring():
    sets = {"empty": BitMap(), "2_3": BitMap([2, 3]), "range0_10000": BitMap(range(10000))}
    rows = vectors("roaring")
    assert len(rows) == 3
    for name, hx in rows:
        data = bytes.fromhex(hx)
        assert roaring.serialize(sets[name]) == data
        bm, end = roaring.deserialize(data + b"xx")
        assert bm == sets[name] and end == len(data)


def test_container_bytes_and_read():
    w = FileIndexWriter()
    w.add("c1", "bloom-filter", bytes.fromhex("010203"))
    w.add("c1", "bitmap", bytes.fromhex("0405"))
    w.add("c2", "bsi", bytes.fromhex("06"))
    golden = bytes.fromhex(one("fileindex_container")[0])
    assert w.to_bytes() == golden
    r = FileIndexReader(golden)
    assert r.columns() == ["c1", "c2"]
    assert r.index_types("c1") == ["bloom-filter", "bitmap"]
    assert r.index_bytes("c1", "bloom-filter") == b"\x01\x02\x03"
    assert r.index_bytes("c1", "bitmap") == b"\x04\x05"
    assert r.index_bytes("c2", "bsi") == b"\x06"


BITMAP_VALUES = [1, 2, None, 1, 3, None, 2, 2, 5]


def test_bitmap_v2_bytes():
    idx = BitmapIndex(T.IntType())
    idx.add_column(Column.from_arrow(pa.array(BITMAP_VALUES, type=pa.int32())))
    assert idx.to_bytes().hex() == one("bitmap_v2_int")[0]
    idx2 = BitmapIndex(T.IntType())
    idx2.add_values(BITMAP_VALUES)
    assert idx2.to_bytes().hex() == one("bitmap_v2_int")[0]


def test_bitmap_v2_read():
    r = BitmapIndex.from_bytes(bytes.fromhex(one("bitmap_v2_int")[0]), T.IntType())
    assert r.version == 2 and r.row_count == 9
    for v in (1, 2, 3, 5, 4):
        expect = [i for i, x in enumerate(BITMAP_VALUES) if x == v]
        assert list(r.eq(v).bitmap) == expect
        assert list(r.ne(v).bitmap) == [i for i in range(9) if i not in expect]
    assert list(r.is_null().bitmap) == [2, 5]
    assert list(r.is_not_null().bitmap) == [0, 1, 3, 4, 6, 7, 8]
    assert list(r.isin([1, 5]).bitmap) == [0, 3, 8]
    assert list(r.not_in([1, 5]).bitmap) == [1, 2, 4, 5, 6, 7]


DV32 = "dvindex-32"


def test_dvindex_32_read(golden_dir):
    data = (golden_dir / DV32).read_bytes()
    a = read_deletion_vector(data, DeletionVectorMeta(1, 24, 2))
    b = read_deletion_vector(data, DeletionVectorMeta(33, 22, 1))
    assert list(a.bitmap) == [2, 3] and list(b.bitmap) == [1]
    walked = scan_deletion_vector_index(data)
    assert [(o, n, list(dv.bitmap)) for o, n, dv in walked] == [(1, 24, [2, 3]), (33, 22, [1])]


def test_dvindex_32_write(golden_dir):
    data = (golden_dir / DV32).read_bytes()
    out, metas = write_deletion_vector_index({"a": DeletionVector([2, 3]), "b": DeletionVector([1])})
    assert out == data
    assert metas == {"a": DeletionVectorMeta(1, 24, 2), "b": DeletionVectorMeta(33, 22, 1)}


def test_bitmap_bodies_follow_java_hashmap_order():
    # the Java writer fills a java.util.HashMap<Integer, ...> with computeIfAbsent, which puts a new key at the
    # head of its bucket: 100, 17, 1 iterate 1, 17 (bucket 1, latest first), 100 (bucket 4)
    idx = BitmapIndex(T.IntType())
    idx.add_values([100, 17, 1, 100, 17, 1])
    data = idx.to_bytes()
    r = BitmapIndex.from_bytes(data, T.IntType())
    offs = {k: v for i in range(len(r.block_firsts)) for k, v in r._block(i).items()}
    assert list(offs) == [1, 17, 100]  # v2 index entries are sorted
    assert sorted(offs, key=lambda k: offs[k][0]) == [1, 17, 100]  # bodies in HashMap order
    # v1: the header lists entries in HashMap order too
    v1 = BitmapIndex(T.IntType(), {"version": "1"})
    v1.add_values([100, 17, 1, 100, 17, 1])
    assert list(BitmapIndex.from_bytes(v1.to_bytes(), T.IntType()).entries) == [1, 17, 100]
    # 14 keys: computeIfAbsent resizes to 32 buckets before the 14th (size 13 > 12); a split keeps each
    # bucket's order, so bucket 8 holds 104, 72, 8, 40 (prepended at 16 buckets), the rest one to a bucket
    keys = [40, 8, 72, 3] + list(range(100, 110))
    idx = BitmapIndex(T.BigIntType(), {"version": "1"})
    idx.add_values(keys + keys)
    got = list(BitmapIndex.from_bytes(idx.to_bytes(), T.BigIntType()).entries)
    assert got == [3, 100, 101, 102, 103, 104, 72, 8, 40, 105, 106, 107, 108, 109]


def test_single_null_records_its_bitmap_length():
    idx = BitmapIndex(T.IntType())
    idx.add_values([1, None, 1])
    data = idx.to_bytes()
    null_offset, null_length = struct.unpack_from(">ii", data, 10)
    assert null_offset == -2 and null_length == len(roaring.serialize(BitMap([1])))
    assert list(BitmapIndex.from_bytes(data, T.IntType()).is_null().bitmap) == [1]
