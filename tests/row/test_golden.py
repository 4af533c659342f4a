"""Java-written bytes are the contract: java_small.row and the java_empty vector."""
import datetime
import io

import pytest

from paimon_engine.formats.row import RowFileReader, RowFileWriter
from paimon_engine.types import IntType, RowType

from ..conftest import java_vectors
from .util import java_small


def _jsonish(v):
    """Our Python values in the JSON file's notation."""
    if isinstance(v, bytes):
        return {"hex": v.hex()}
    if type(v).__name__ == "Decimal":
        return {"decimal": str(v)}
    if type(v).__name__ == "Timestamp":  # pandas, nanosecond precision
        s = v.isoformat()
        return {"iso": s}
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return {"iso": v.isoformat()}
    if isinstance(v, list):
        return [_jsonish(x) for x in v]
    if isinstance(v, tuple):
        return [_jsonish(x) for x in v]
    if isinstance(v, dict):
        return {k: _jsonish(x) for k, x in v.items()}
    return v


def test_java_small_reads_to_the_json(golden_dir):
    schema, rows = java_small(golden_dir)
    r = RowFileReader(str(golden_dir / "java_small.row"), schema)
    assert r.num_rows == 3 and r.num_blocks == 1
    got = [_jsonish(row) for row in r.read_all().to_pylist()]
    assert got == rows
    # point lookups agree with the full read
    assert [_jsonish(r.get_row(i)) for i in (2, 0, 1)] == [rows[2], rows[0], rows[1]]


def test_java_small_projection_and_selection(golden_dir):
    from pyroaring import BitMap
    schema, rows = java_small(golden_dir)
    r = RowFileReader(str(golden_dir / "java_small.row"), schema)
    got = r.read_all(columns=["m", "s", "ts9"], selection=BitMap([0, 2])).to_pylist()
    assert [_jsonish(x) for x in got] == [{"m": rows[i]["m"], "s": rows[i]["s"], "ts9": rows[i]["ts9"]}
                                          for i in (0, 2)]


def test_java_small_survives_our_rewrite(golden_dir):
    schema, rows = java_small(golden_dir)
    table = RowFileReader(str(golden_dir / "java_small.row"), schema).to_arrow()
    buf = io.BytesIO()
    with RowFileWriter(buf, schema) as w:
        w.write(table)
    again = RowFileReader(io.BytesIO(buf.getvalue()), schema).read_all().to_pylist()
    assert [_jsonish(x) for x in again] == rows


def test_empty_file_matches_java():
    expected = bytes.fromhex(dict((v[0], v[1]) for v in java_vectors())["java_empty"])
    buf = io.BytesIO()
    md = RowFileWriter(buf, RowType.of(("a", IntType()))).close()
    assert buf.getvalue() == expected
    assert (md.row_count, md.file_size, md.block_count) == (0, 35, 0)
    r = RowFileReader(io.BytesIO(expected), RowType.of(("a", IntType())))
    assert r.num_rows == 0 and r.read_all().num_rows == 0 and r.to_arrow().num_rows == 0
