"""The ``deletion-vector-v1`` blob: layout, round trips, pyiceberg interop, malformed input, scans."""
import struct
import zlib

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st
from pyroaring import BitMap, BitMap64

from paimon_engine import types as T
from paimon_engine.errors import CorruptFileError, InvalidArgumentError
from paimon_engine.formats.puffin import PuffinReader, PuffinWriter
from paimon_engine.index.deletion_vector import DeletionVector
from paimon_engine.index.iceberg_deletion_vector import (DV_MAGIC, deletion_vector_blob, deletion_vector_cardinality,
                                                         deserialize_deletion_vector, serialize_deletion_vector)
from paimon_engine.scan.delete_index import POSITION, DeleteFile
from paimon_engine.spec.schema import Schema

from ..scan.builder import MiniTable


def _frame(vec: bytes) -> bytes:
    body = DV_MAGIC + vec
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def test_layout_field_by_field():
    positions = [0, 5, 6, 7, 1 << 20, (3 << 32) + 9]
    blob = serialize_deletion_vector(positions)
    (length,) = struct.unpack(">I", blob[:4])                      # big-endian length of magic + vector
    assert length == len(blob) - 8
    assert blob[4:8] == b"\xd1\xd3\x39\x64"
    (crc,) = struct.unpack(">I", blob[-4:])                        # big-endian CRC-32 of magic + vector
    assert crc == zlib.crc32(blob[4:-4])
    vec = blob[8:-4]
    assert struct.unpack_from("<Q", vec, 0)[0] == 2                # two 32-bit bitmaps, little-endian count
    assert struct.unpack_from("<I", vec, 8)[0] == 0                # key 0, little-endian
    low = BitMap([0, 5, 6, 7, 1 << 20])
    low.run_optimize()
    n0 = len(low.serialize())
    assert vec[12:12 + n0] == low.serialize()                      # portable Roaring32, run-optimized
    assert struct.unpack_from("<I", vec, 12 + n0)[0] == 3
    assert vec[16 + n0:] == BitMap([9]).serialize()
    # the 64-bit portable format is CRoaring's: identical to pyroaring's BitMap64 serialization
    b64 = BitMap64(positions)
    b64.run_optimize()
    assert vec == b64.serialize()
    assert deserialize_deletion_vector(blob).tolist() == positions
    assert serialize_deletion_vector([]) == _frame(b"\0" * 8)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 70000), st.integers(0, 2 ** 40), st.integers(0, 2 ** 63 - 1)),
                max_size=200))
def test_round_trip(positions):
    blob = serialize_deletion_vector(positions)
    want = sorted(set(positions))
    assert deserialize_deletion_vector(blob).tolist() == want
    assert deletion_vector_cardinality(blob) == len(want)
    assert deserialize_deletion_vector(blob, cardinality=len(want)).dtype == np.int64


def test_same_positions_as_paimon_deletion_vector():
    rng = np.random.default_rng(7)
    pos = np.unique(rng.integers(0, 1 << 21, 100_000))
    ours = deserialize_deletion_vector(serialize_deletion_vector(pos))
    paimon = DeletionVector(pos)
    assert np.array_equal(ours, pos) and len(paimon) == len(ours)
    assert np.array_equal(np.frombuffer(paimon.bitmap.to_array(), np.uint32).astype(np.int64), ours)


def test_blob_in_puffin_read_by_pyiceberg():
    from pyiceberg.table.puffin import PuffinFile
    from pyiceberg.table.deletion_vector import deletion_vectors_from_puffin_file
    w = PuffinWriter(created_by="paimon_engine")
    w.add(deletion_vector_blob([1, 2, 40, (1 << 32) + 1], "s3://b/data/a.parquet"))
    w.add(deletion_vector_blob(range(0, 1000, 3), "s3://b/data/b.parquet"))
    data = w.finish()
    r = PuffinReader(data)
    m = r.blobs[0]
    assert (m.type, m.fields, m.snapshot_id, m.sequence_number, m.compression_codec) == \
        ("deletion-vector-v1", [2147483545], -1, -1, None)
    assert m.properties == {"referenced-data-file": "s3://b/data/a.parquet", "cardinality": "4"}
    dvs = {dv.referenced_data_file: dv.to_vector().to_pylist() for dv in deletion_vectors_from_puffin_file(
        PuffinFile(data))}
    assert dvs == {"s3://b/data/a.parquet": [1, 2, 40, (1 << 32) + 1],
                   "s3://b/data/b.parquet": list(range(0, 1000, 3))}


def test_bad_arguments():
    for bad in ([-1], [2 ** 63], np.array([1.5])):
        with pytest.raises(InvalidArgumentError):
            serialize_deletion_vector(bad)


GOOD = serialize_deletion_vector([1, 2, 40])


@pytest.mark.parametrize("blob, offset, words", [
    (GOOD[:-1], 100, "length"),
    (b"\0" * 5, 100, "shorter"),
    (struct.pack(">I", 3) + GOOD[4:], 100, "length"),
    (GOOD[:4] + b"XXXX" + GOOD[8:], 104, "magic"),
    (GOOD[:-4] + b"\0\0\0\0", 100 + 4 + len(GOOD) - 8, "checksum"),
    (_frame(struct.pack("<Q", 1 << 40)), 108, "claims"),
    (_frame(struct.pack("<Q", 1) + b"\0" * 4), 108, "claims"),
    (_frame(struct.pack("<QI", 1, 0) + BitMap().serialize() + b"\1"), 108 + 8 + 4 + 8, "after the last"),
    (_frame(struct.pack("<QI", 2, 5) + BitMap([1]).serialize() + struct.pack("<I", 5) + BitMap([1]).serialize()),
     108 + 8 + 4 + len(BitMap([1]).serialize()), "out of order"),
    (_frame(struct.pack("<QI", 1, 1 << 31) + BitMap([1]).serialize()), 116, "2\\*\\*63"),
    (_frame(struct.pack("<QI", 1, 0) + BitMap([1, 2]).serialize()[:-2]), None, "truncated"),
    (_frame(struct.pack("<QI", 1, 0) + b"\x99\x99\x00\x00" + b"\0" * 8), 120, "cookie"),
])
def test_malformed(blob, offset, words):
    with pytest.raises(CorruptFileError, match=words) as ei:
        deserialize_deletion_vector(blob, "dv.puffin", 100)
    assert ei.value.path == "dv.puffin"
    if offset is not None:
        assert ei.value.offset == offset


def test_cardinality_and_record_count():
    with pytest.raises(CorruptFileError, match="records 2") as ei:
        deserialize_deletion_vector(GOOD, "dv.puffin", 4, cardinality=2)
    assert ei.value.offset == 12
    with pytest.raises(CorruptFileError, match="beyond the data file's 40 rows"):
        deserialize_deletion_vector(GOOD, "dv.puffin", 4, record_count=40)
    assert deserialize_deletion_vector(GOOD, record_count=41).tolist() == [1, 2, 40]
    # a few bytes of run containers cannot expand before the counts are checked
    big = serialize_deletion_vector(np.arange(1 << 20))
    assert len(big) < 300 and deletion_vector_cardinality(big) == 1 << 20
    with pytest.raises(CorruptFileError, match="records 3"):
        deserialize_deletion_vector(big, cardinality=3)


SCHEMA = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "s", T.STRING())]))


def _data(n):
    return pa.table({"id": pa.array(range(n), pa.int64()), "s": [f"s{i}" for i in range(n)]})


def test_scan_applies_dvs_from_a_real_puffin_file(tmp_path):
    mt = MiniTable(tmp_path, SCHEMA)
    (a,) = mt.append(_data(50))
    (b,) = mt.append(_data(30))
    w = PuffinWriter(created_by="paimon_engine")
    ma = w.add(deletion_vector_blob([0, 7, 49], a.file_path))
    mb = w.add(deletion_vector_blob(range(0, 30, 2), b.file_path))
    path = tmp_path / "dvs.puffin"
    path.write_bytes(w.finish())
    scan = mt.scan()
    tasks = scan.plan_files()
    for t in tasks:
        m, n = (ma, 3) if t.path == a.file_path else (mb, 15)
        t.deletes = [DeleteFile(str(path), POSITION, "puffin", 5, 0, (), n, path.stat().st_size, t.path, (),
                                m.offset, m.length)]
    rows = scan.to_arrow(tasks=tasks)
    ids = rows.column("id").to_pylist()
    assert len(ids) == 47 + 15
    assert sorted(ids) == sorted([i for i in range(50) if i not in (0, 7, 49)] + list(range(1, 30, 2)))


def test_scan_refuses_a_dv_beyond_the_file(tmp_path):
    mt = MiniTable(tmp_path, SCHEMA)
    (a,) = mt.append(_data(20))
    w = PuffinWriter()
    m = w.add(deletion_vector_blob([3, 20], a.file_path))
    path = tmp_path / "dv.puffin"
    path.write_bytes(w.finish())
    scan = mt.scan()
    (task,) = scan.plan_files()
    task.deletes = [DeleteFile(str(path), POSITION, "puffin", 5, 0, (), 2, 100, a.file_path, (), m.offset, m.length)]
    with pytest.raises(CorruptFileError, match="beyond the data file's 20 rows") as ei:
        scan.to_arrow(tasks=[task])
    assert ei.value.path == str(path)
