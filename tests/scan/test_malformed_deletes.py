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
from paimon_engine.spec.schema import Schema

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


def _rewrite_footer(path, change):
    """Replace the Thrift footer of the Parquet file at ``path`` with ``change(footer)``."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<I", raw[-8:-4])
    footer = change(raw[-8 - n:-8])
    open(path, "wb").write(raw[:-8 - n] + footer + struct.pack("<I", len(footer)) + b"PAR1")


def _once(old, new):
    def change(footer):
        assert footer.count(old) == 1, footer.count(old)
        return footer.replace(old, new)
    return change


def _all(old, new):
    def change(footer):
        assert footer.count(old) >= 1
        return footer.replace(old, new)
    return change


# ColumnChunk.meta_data (field 3, a struct) starts with its physical type (field 1, i32 zigzag: INT64 = 2 -> 0x04,
# BYTE_ARRAY = 6 -> 0x0c) and its encodings list (field 2); statistics hold each min/max as length + plain bytes
@pytest.mark.parametrize("change, words", [
    (_once(b"\x1c\x15\x04\x19", b"\x1c\x15\x7e\x19"), "'pos' has chunk type UNKNOWN, schema type INT64"),
    (_once(b"\x1c\x15\x0c\x19", b"\x1c\x15\x04\x19"), "'file_path' has chunk type INT64, schema type BYTE_ARRAY"),
])
def test_parquet_delete_file_whose_chunks_do_not_match_its_schema(tmp_path, change, words):
    mt = MiniTable(tmp_path, SCHEMA)
    (df,) = mt.append(data(20))
    d = mt.write_position_deletes(df.file_path, [3])
    mt.commit([d], operation="delete")
    _rewrite_footer(d.file_path, change)
    with pytest.raises(CorruptFileError, match="column chunk") as ei:
        mt.scan().to_arrow()
    assert ei.value.path == d.file_path and words in str(ei.value)


def test_parquet_delete_file_with_bad_statistics_is_read_without_them(tmp_path):
    # statistics of the wrong width (pyarrow ends the process when asked for them): a position delete file is read
    # without its statistics, so its rows still apply
    mt = MiniTable(tmp_path, SCHEMA)
    (df,) = mt.append(data(20))
    d = mt.write_position_deletes(df.file_path, [3])
    mt.commit([d], operation="delete")
    _rewrite_footer(d.file_path, _all(b"\x08" + struct.pack("<q", 3), b"\x04" + struct.pack("<i", 3)))
    assert [r["id"] for r in mt.scan().to_arrow().to_pylist()] == [i for i in range(20) if i != 3]


def test_data_file_statistics_are_checked_before_pruning(tmp_path):
    # three row groups (50, 50 and 20 rows): a filter on id prunes the first two by their statistics
    mt = MiniTable(tmp_path, SCHEMA)
    (df,) = mt.append(data(120))
    assert len(mt.scan(filter="id > 115").to_arrow()) == 4
    _rewrite_footer(df.file_path, _all(b"\x08" + struct.pack("<q", 49), b"\x02" + struct.pack("<h", 49)))
    with pytest.raises(CorruptFileError, match="2 bytes for INT64") as ei:
        mt.scan(filter="id > 115").to_arrow()
    assert ei.value.path == df.file_path


@pytest.mark.parametrize("table, words", [
    (pa.table({"file_path": pa.array([b"x"], pa.binary()), "pos": pa.array([3], pa.int64())}), "file_path: binary"),
    (pa.table({"file_path": pa.array(["x"]), "pos": pa.array(["3"])}), "pos: string"),
    (pa.table({"file_path": pa.array(["x"]), "pos": pa.array([2 ** 64 - 1], pa.uint64())}), "cannot read"),
])
def test_parquet_position_delete_columns_of_the_wrong_type(tmp_path, table, words):
    import pyarrow.parquet as pq
    mt = MiniTable(tmp_path, SCHEMA)
    (df,) = mt.append(data(20))
    d = mt.write_position_deletes(df.file_path, [3])
    mt.commit([d], operation="delete")
    fields = [pa.field(f.name, f.type, metadata={b"PARQUET:field_id": fid})
              for f, fid in zip(table.schema, (b"2147483546", b"2147483545"))]
    pq.write_table(pa.Table.from_arrays(table.columns, schema=pa.schema(fields)), d.file_path)
    with pytest.raises(CorruptFileError, match=words) as ei:
        mt.scan().to_arrow()
    assert ei.value.path == d.file_path


def test_parquet_position_delete_path_that_is_not_utf8(tmp_path):
    # a string column is not checked for UTF-8 by the Parquet reader: the paths are, where they become str
    import pyarrow.parquet as pq
    mt = MiniTable(tmp_path, SCHEMA)
    (df,) = mt.append(data(20))
    d = mt.write_position_deletes(df.file_path, [3, 4])
    mt.commit([d], operation="delete")
    other = df.file_path[:-9] + "X" + df.file_path[-8:]     # a second path, so the statistics shortcut is not taken
    tbl = pq.read_table(d.file_path)
    pq.write_table(pa.Table.from_arrays([pa.array([df.file_path, other]), tbl.column("pos")], schema=tbl.schema),
                   d.file_path, compression="NONE", use_dictionary=False, write_statistics=False)
    raw = open(d.file_path, "rb").read()
    assert raw.count(other.encode()) == 1
    open(d.file_path, "wb").write(raw.replace(other.encode(), other.encode().replace(b"X", b"\xff")))
    assert pq.ParquetFile(d.file_path).metadata.num_rows == 2
    with pytest.raises(CorruptFileError, match="(?i)utf-?8") as ei:
        mt.scan().to_arrow()
    assert ei.value.path == d.file_path
