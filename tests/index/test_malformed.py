"""Damaged index and deletion-vector bytes raise CorruptFileError, never crash or hang."""
import struct

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.batch import Column
from paimon_engine.errors import CorruptFileError
from paimon_engine.index import (BitmapIndex, BloomFilterIndex, BsiIndex, DeletionVector, DeletionVectorMeta,
                                 FileIndexReader, FileIndexWriter, read_deletion_vector,
                                 scan_deletion_vector_index, write_deletion_vector_index)
from paimon_engine.index import roaring
from tests.conftest import java_vectors


def golden(name):
    return bytes.fromhex(next(v[1] for v in java_vectors() if v[0] == name))


def _bitmap_bytes(version=2, block="16kb"):
    w = BitmapIndex(T.IntType(), {"version": str(version), "index-block-size": block})
    w.add_values([1, 2, None, 1, 3, None, 2, 2, 5] * 20 + list(range(100, 160)))
    return w.to_bytes()


def _bsi_bytes():
    w = BsiIndex(T.BigIntType())
    w.add_values([5, -3, None, 1000, -70000, 0] * 10)
    return w.to_bytes()


def _exercise_bitmap(data):
    r = BitmapIndex.from_bytes(data, T.IntType())
    for v in (1, 2, 3, 5, 120, 7):
        r.eq(v)
    r.is_null()
    r.not_in([1, 2])


def _exercise_bsi(data):
    r = BsiIndex.from_bytes(data, T.BigIntType())
    r.lt(4)
    r.eq(-3)


def _exercise_container(data):
    r = FileIndexReader(data)
    for c in r.columns():
        for t in r.index_types(c):
            r.index_bytes(c, t)


def _exercise_dv(data):
    scan_deletion_vector_index(data)


def _exercise_roaring(data):
    roaring.deserialize(data)


CASES = {
    "bitmap_v2": (lambda: _bitmap_bytes(2, "64"), _exercise_bitmap),
    "bitmap_v1": (lambda: _bitmap_bytes(1), _exercise_bitmap),
    "bsi": (_bsi_bytes, _exercise_bsi),
    "container": (lambda: golden("fileindex_container"), _exercise_container),
    "roaring": (lambda: golden("roaring") if False else roaring.serialize(__import__("pyroaring").BitMap(
        list(range(0, 5000)) + list(range(70000, 70100, 3)) + [1 << 20])), _exercise_roaring),
}


@pytest.mark.parametrize("name", list(CASES))
def test_truncation(name):
    make, use = CASES[name]
    data = make()
    use(data)  # intact bytes work
    for cut in sorted(set(range(0, len(data), max(1, len(data) // 60))) | {len(data) - 1}):
        try:
            use(data[:cut])
        except CorruptFileError:
            continue


@pytest.mark.parametrize("name", list(CASES))
def test_bit_flips(name):
    make, use = CASES[name]
    data = make()
    rng = np.random.default_rng(11)
    for _ in range(300):
        b = bytearray(data)
        i = int(rng.integers(0, len(b)))
        b[i] ^= 1 << int(rng.integers(0, 8))
        try:
            use(bytes(b))
        except CorruptFileError:
            pass


@pytest.mark.parametrize("name", list(CASES))
def test_truncation_raises(name):
    make, use = CASES[name]
    data = make()
    with pytest.raises(CorruptFileError):
        use(data[: len(data) // 2] if name != "bitmap_v2" else data[:20])


def test_container_bad_magic_version_offsets():
    data = golden("fileindex_container")
    with pytest.raises(CorruptFileError, match="magic"):
        FileIndexReader(b"\x01" + data[1:])
    with pytest.raises(CorruptFileError, match="version"):
        FileIndexReader(data[:8] + struct.pack(">i", 2) + data[12:])
    with pytest.raises(CorruptFileError, match="head length"):
        FileIndexReader(data[:12] + struct.pack(">i", 10 ** 6) + data[16:])
    bad = bytearray(data)
    pos = data.index(b"bsi") + 3
    struct.pack_into(">i", bad, pos, 10 ** 6)
    with pytest.raises(CorruptFileError, match="outside"):
        FileIndexReader(bytes(bad))
    bad = bytearray(data)
    struct.pack_into(">i", bad, 16, 10 ** 8)  # huge column count
    with pytest.raises(CorruptFileError, match="column count"):
        FileIndexReader(bytes(bad))


def test_container_roundtrip_names_and_empty():
    w = FileIndexWriter()
    w.add("naïve\x00col", "bitmap", b"")
    w.add("😀", "future-index", b"\x09\x08")
    data = w.to_bytes()
    assert b"\xc0\x80" in data and b"\xed\xa0\xbd\xed\xb8\x80" in data  # modified UTF-8
    r = FileIndexReader(data)
    assert r.columns() == ["naïve\x00col", "😀"]
    assert r.index_range("naïve\x00col", "bitmap") == (-1, 0)
    assert r.index_bytes("naïve\x00col", "bitmap") == b""
    assert r.index_bytes("😀", "future-index") == b"\x09\x08"
    assert r.indexes_for("😀", T.IntType()) == []  # unknown types are skipped


def test_bitmap_bad_version_and_counts():
    data = bytearray(_bitmap_bytes())
    with pytest.raises(CorruptFileError, match="version"):
        BitmapIndex.from_bytes(b"\x07" + bytes(data[1:]), T.IntType())
    bad = bytearray(data)
    struct.pack_into(">i", bad, 5, 2 ** 31 - 1)
    with pytest.raises(CorruptFileError):
        BitmapIndex.from_bytes(bytes(bad), T.IntType())
    bad = bytearray(data)
    struct.pack_into(">i", bad, 1, -4)
    with pytest.raises(CorruptFileError):
        BitmapIndex.from_bytes(bytes(bad), T.IntType())


def test_bloom_malformed():
    with pytest.raises(CorruptFileError):
        BloomFilterIndex.from_bytes(b"\x00\x00", T.IntType())
    with pytest.raises(CorruptFileError):
        BloomFilterIndex.from_bytes(b"\x00\x00\x00\x00\xff", T.IntType())
    with pytest.raises(CorruptFileError):
        BloomFilterIndex.from_bytes(b"\x7f\x00\x00\x00\xff", T.IntType())


def test_roaring_huge_counts():
    with pytest.raises(CorruptFileError):
        roaring.deserialize(struct.pack("<Ii", 12346, 2 ** 30))
    with pytest.raises(CorruptFileError):
        roaring.deserialize(b"\x00\x00\x00\x00")


# -- deletion vectors ------------------------------------------------------------

def test_dv_bad_crc_version_length(golden_dir):
    data = (golden_dir / "dvindex-32").read_bytes()
    bad = bytearray(data)
    bad[20] ^= 0x10
    with pytest.raises(CorruptFileError):
        read_deletion_vector(bytes(bad), DeletionVectorMeta(1, 24, 2))
    bad = bytearray(data)
    bad[-1] ^= 1
    with pytest.raises(CorruptFileError, match="CRC"):
        read_deletion_vector(bytes(bad), DeletionVectorMeta(33, 22, 1))
    with pytest.raises(CorruptFileError, match="version"):
        read_deletion_vector(b"\x02" + data[1:], DeletionVectorMeta(1, 24, 2))
    with pytest.raises(CorruptFileError, match="recorded length"):
        read_deletion_vector(data, DeletionVectorMeta(1, 25, 2))
    with pytest.raises(CorruptFileError):
        read_deletion_vector(data, DeletionVectorMeta(2, 24, 2))
    with pytest.raises(CorruptFileError):
        read_deletion_vector(data, DeletionVectorMeta(1, 24, 3))
    for cut in range(len(data)):
        if cut in (1, 33):  # the version byte alone, or exactly the first entry: well-formed
            assert len(scan_deletion_vector_index(data[:cut])) == (cut == 33)
            continue
        with pytest.raises(CorruptFileError):
            scan_deletion_vector_index(data[:cut])
    bad = bytearray(data)
    struct.pack_into(">i", bad, 1, 2 ** 31 - 1)
    with pytest.raises(CorruptFileError):
        scan_deletion_vector_index(bytes(bad))


def test_dv_64bit_roundtrip_and_checks():
    dv = DeletionVector([0, 5, (1 << 32) + 7, (3 << 32) + 1], bit64=True)
    data, metas = write_deletion_vector_index({"f": dv, "g": DeletionVector([9])})
    entry = data[1:]
    assert struct.unpack_from("<i", entry, 4)[0] == 1681511377
    assert struct.unpack_from("<q", entry, 8)[0] == 4  # dense keys 0..3
    assert metas["f"].length == struct.unpack_from(">i", entry, 0)[0] + 8
    back = read_deletion_vector(data, metas["f"])
    assert back == dv and back.is_64bit
    assert list(read_deletion_vector(data, metas["g"]).bitmap) == [9]
    assert [n for _, n, _ in scan_deletion_vector_index(data)] == [metas["f"].length, metas["g"].length]
    # duplicate high key, with a valid CRC
    import zlib
    from pyroaring import BitMap
    payload = struct.pack("<iq", 1681511377, 2) + struct.pack("<i", 0) + roaring.serialize(BitMap([1])) + \
        struct.pack("<i", 0) + roaring.serialize(BitMap([2]))
    blob = b"\x01" + struct.pack(">i", len(payload)) + payload + struct.pack(">I", zlib.crc32(payload))
    with pytest.raises(CorruptFileError, match="duplicate"):
        scan_deletion_vector_index(blob)
    # sparse keys are accepted
    payload = struct.pack("<iq", 1681511377, 1) + struct.pack("<i", 2) + roaring.serialize(BitMap([1]))
    blob = b"\x01" + struct.pack(">i", len(payload)) + payload + struct.pack(">I", zlib.crc32(payload))
    (_, _, got), = scan_deletion_vector_index(blob)
    assert list(got.bitmap) == [(2 << 32) + 1]


def test_dv_selection_and_mask():
    dv = DeletionVector([0, 3, 4, 99])
    sel = dv.to_selection(10)
    assert list(sel) == [1, 2, 5, 6, 7, 8, 9]
    assert dv.keep_mask(2, 6).tolist() == [True, False, False, True]
    assert dv.keep_mask(50, 50).tolist() == []
    assert dv.keep_mask(90, 100).sum() == 9
    dv64 = DeletionVector([1, (1 << 32) + 2], bit64=True)
    assert list(dv64.to_selection(4)) == [0, 2, 3]
    assert dv64.keep_mask((1 << 32), (1 << 32) + 4).tolist() == [True, True, False, True]
    dv.merge(DeletionVector([5]))
    assert 5 in dv and dv.cardinality == 5


def test_dv_read_masks_from_its_bytes():
    """A 32-bit vector read from an index file answers keep_mask and cardinality from its validated bytes (no
    bitmap built), the same as the vector it was written from; its bitmap is built on first use."""
    rng = np.random.default_rng(8)
    for positions in ([], [7], rng.integers(0, 5_000_000, 40_000), np.arange(100_000, 190_000),
                      np.concatenate([np.arange(0, 70_000, 2), [(1 << 31) - 1]])):
        written = DeletionVector(np.unique(np.asarray(positions, dtype=np.int64)))
        data, metas = write_deletion_vector_index({"f": written})
        dv = read_deletion_vector(data, metas["f"])
        assert dv._bitmap is None and not dv.is_64bit
        assert dv.cardinality == len(dv) == written.cardinality
        for lo, hi in [(0, 1_000_000), (65_530, 200_000), (4_999_000, 5_000_100), (0, 0), (1 << 32, (1 << 32) + 5)]:
            assert (dv.keep_mask(lo, hi) == written.keep_mask(lo, hi)).all()
        assert dv._bitmap is None
        assert dv.serialize() == written.serialize() and dv == written
        assert dv._bitmap is not None
        dv.merge(DeletionVector([3]))
        assert 3 in dv and dv.cardinality == len(written.bitmap | DeletionVector([3]).bitmap)


def test_dv_contents_checked_under_a_valid_crc():
    """Container contents that disagree with their header raise at read, naming the entry's byte, even with a
    CRC that matches."""
    import zlib
    good = DeletionVector([1, 2, 3]).serialize()   # size, magic, bitmap (values 16 bytes in), CRC
    payload = bytearray(good[4:-4])
    struct.pack_into("<HHH", payload, 4 + 16, 3, 2, 1)
    entry = good[:4] + bytes(payload) + struct.pack(">I", zlib.crc32(bytes(payload)))
    with pytest.raises(CorruptFileError, match="contents") as exc:
        read_deletion_vector(b"\x01" + entry, DeletionVectorMeta(1, len(payload), 3))
    assert exc.value.offset == 1 + 4 + 4 + 16


def test_dv_read_from_a_mutable_buffer_keeps_its_own_bytes():
    written = DeletionVector(np.arange(10, 5000, 7))
    data, metas = write_deletion_vector_index({"f": written})
    buf = bytearray(data)
    dv = read_deletion_vector(buf, metas["f"])
    buf[:] = bytes(len(buf))
    assert (dv.keep_mask(0, 6000) == written.keep_mask(0, 6000)).all() and dv == written


def test_dv_read_from_bytes_checks_start_pickles_and_builds_once(monkeypatch):
    import copy
    import pickle
    import threading

    from paimon_engine.errors import InvalidArgumentError
    written = DeletionVector([1, 2, 3])
    data, metas = write_deletion_vector_index({"f": written})
    dv = read_deletion_vector(data, metas["f"])
    with pytest.raises(InvalidArgumentError):
        dv.keep_mask(-2, 4)
    with pytest.raises(InvalidArgumentError):
        written.keep_mask(-2, 4)
    for back in (pickle.loads(pickle.dumps(dv)), copy.deepcopy(read_deletion_vector(data, metas["f"]))):
        assert back == written
    # two threads building the bitmap at once: both deletes land in the one bitmap kept
    dv = read_deletion_vector(data, metas["f"])
    real = roaring.deserialize
    both = threading.Barrier(2)

    def slow(*a, **k):
        both.wait(timeout=10)
        return real(*a, **k)
    monkeypatch.setattr(roaring, "deserialize", slow)
    threads = [threading.Thread(target=dv.delete, args=(p,)) for p in (10, 20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(dv.bitmap) == [1, 2, 3, 10, 20]


def test_dv_runs_that_touch_are_refused_at_read():
    """A run container whose runs touch (CRoaring refuses it when building the bitmap) is refused while reading."""
    import zlib
    bitmap = struct.pack("<IBHHHHHHH", 12347, 1, 0, 9, 2, 10, 4, 15, 4)
    payload = struct.pack(">i", 1581511376) + bitmap
    entry = struct.pack(">i", len(payload)) + payload + struct.pack(">I", zlib.crc32(payload))
    with pytest.raises(CorruptFileError, match="contents"):
        read_deletion_vector(b"\x01" + entry, DeletionVectorMeta(1, len(payload), 10))
