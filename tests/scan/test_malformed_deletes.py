"""Malformed delete files: deletion vectors and Parquet position deletes fail as CorruptFileError."""

import struct
import zlib

import pyarrow as pa
import pyroaring
import pytest

from paimon_engine import types as T
from paimon_engine.errors import CorruptFileError
from paimon_engine.scan.delete_index import DeleteFile, POSITION
from paimon_engine.scan.reader import read_deletion_vector
from paimon_engine.table.schema import Schema

from .builder import MiniTable, deletion_vector_blob

SCHEMA = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "s", T.STRING())]))


def data(n):
    return pa.table({"id": pa.array(range(n), pa.int64()), "s": [f"s{i}" for i in range(n)]})


def _reframe(vec: bytes) -> bytes:
    body = b"\xd1\xd3\x39\x64" + vec
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


@pytest.mark.parametrize("position", [2 ** 63, 2 ** 64 - 1, (2 ** 63) + 5])
def test_deletion_vector_position_beyond_int64(position):
    blob = deletion_vector_blob([1, position])
    with pytest.raises(CorruptFileError) as ei:
        read_deletion_vector(blob, "dv.puffin", 4)
    # the offset of the second bitmap's key: blob start 4, length and magic, bitmap count, key 0 and its bitmap
    key_at = 4 + 8 + 8 + 4 + len(pyroaring.BitMap([1]).serialize())
    assert ei.value.path == "dv.puffin" and ei.value.offset == key_at and "2**63" in str(ei.value)
    assert read_deletion_vector(deletion_vector_blob([1, 2 ** 63 - 1])).tolist() == [1, 2 ** 63 - 1]


def test_deletion_vector_cardinality_is_checked_before_expansion():
    import pyroaring
    # one run container: 65536 positions in a few bytes
    bm = pyroaring.BitMap64(range(65536))
    bm.run_optimize()
    blob = _reframe(bm.serialize())
    assert len(blob) < 64
    with pytest.raises(CorruptFileError, match="records 3"):
        read_deletion_vector(blob, "dv.puffin", 0, cardinality=3)
    assert len(read_deletion_vector(blob, "dv.puffin", 0, cardinality=65536)) == 65536


def test_deletion_vector_beyond_int64_through_a_scan(tmp_path):
    mt = MiniTable(tmp_path, SCHEMA)
    (df,) = mt.append(data(20))
    blob = deletion_vector_blob([3, 2 ** 63 + 1])
    puffin = tmp_path / "dv.puffin"
    puffin.write_bytes(b"PFA1" + blob + b"footer")
    scan = mt.scan()
    (task,) = scan.plan_files()
    task.deletes = [DeleteFile(str(puffin), POSITION, "puffin", 5, 0, (), 2, 100, df.file_path, (), 4, len(blob))]
    with pytest.raises(CorruptFileError) as ei:
        scan.to_arrow(tasks=[task])
    assert ei.value.path == str(puffin) and ei.value.offset == 4 + 8 + 8 + 4 + len(pyroaring.BitMap([3]).serialize())


def test_parquet_delete_file_with_a_non_utf8_column_name(tmp_path):
    mt = MiniTable(tmp_path, SCHEMA)
    (df,) = mt.append(data(20))
    d = mt.write_position_deletes(df.file_path, [3])
    mt.commit([d], operation="delete")
    assert [r["id"] for r in mt.scan().to_arrow().to_pylist()] == [i for i in range(20) if i != 3]
    raw = open(d.file_path, "rb").read()
    assert raw.count(b"file_path") >= 1
    open(d.file_path, "wb").write(raw.replace(b"file_path", b"file_pa\xff\xfe"))
    with pytest.raises(CorruptFileError) as ei:
        mt.scan().to_arrow()
    assert ei.value.path == d.file_path and ei.value.offset is not None
