"""The footer check the reader runs before pyarrow decodes column chunk statistics."""
import decimal
import io
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_engine.scan.parquet_footer import column_chunk_problem


def _file(table, **kw):
    buf = io.BytesIO()
    pq.write_table(table, buf, **kw)
    raw = buf.getvalue()
    (n,) = struct.unpack("<I", raw[-8:-4])
    schema = pq.ParquetFile(io.BytesIO(raw)).schema
    leaves = [(schema.column(j).physical_type, schema.column(j).length) for j in range(len(schema))]
    return raw[-8 - n:-8], leaves


TABLE = pa.table({
    "b": [True, False, None], "i8": pa.array([1, -2, 3], pa.int8()), "i": pa.array([1, 2, None], pa.int32()),
    "l": pa.array([5, 6, 7], pa.int64()), "f": pa.array([1.5, None, 2.5], pa.float32()), "d": [0.5, 1.5, -1.0],
    "s": ["a", "bb", None], "bin": [b"\x00", b"", b"zz"], "fx": pa.array([b"abcd", b"efgh", None], pa.binary(4)),
    "dec": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.50")], pa.decimal128(20, 2)),
    "ts": pa.array([0, 1, 2], pa.timestamp("us")), "dt": pa.array([0, 1, 2], pa.date32()),
    "lst": pa.array([[1, 2], [], None], pa.list_(pa.int64())), "st": [{"x": 1}, None, {"x": 3}],
})


@pytest.mark.parametrize("kw", [{}, {"row_group_size": 1}, {"write_statistics": False}, {"use_dictionary": False},
                                {"use_deprecated_int96_timestamps": True}])
def test_files_pyarrow_writes_pass(kw):
    footer, leaves = _file(TABLE, **kw)
    assert column_chunk_problem(footer, leaves) is None


def test_problems_are_named():
    footer, leaves = _file(pa.table({"s": ["a"], "n": pa.array([7], pa.int64())}))
    assert column_chunk_problem(footer, leaves[:1]).endswith("more column chunks than the schema has columns")
    assert column_chunk_problem(footer, leaves + [leaves[1]]) == "row group 0 has 2 column chunks for the schema's 3 " \
        "columns"
    swapped = [leaves[1], leaves[0]]
    assert "column 0: chunk type BYTE_ARRAY, schema type INT64" in column_chunk_problem(footer, swapped)
    short = footer.replace(b"\x08" + struct.pack("<q", 7), b"\x04" + struct.pack("<i", 7))
    assert "column 1: statistics" in column_chunk_problem(short, leaves)
    assert column_chunk_problem(footer[:len(footer) // 2], leaves) == "the footer's Thrift encoding cannot be walked"
