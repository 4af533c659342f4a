"""Decoding Variant values (the Parquet Variant binary encoding): every primitive type from hand-built bytes,
short strings, objects, arrays, nesting, and malformed bytes -> CorruptFileError naming column, row and offset."""
import datetime
import decimal
import json
import struct
import uuid

import pyarrow as pa
import pytest

from paimon_engine.errors import CorruptFileError
from paimon_engine.formats import variant as V

EMPTY_META = b"\x01\x00\x00"          # version 1, offset size 1, no keys: dictionary_size 0, one offset 0


def meta(*keys, offset_size=1, sorted_strings=True):
    """Metadata bytes for ``keys`` (hand-built: header, dictionary size, offsets, UTF-8 strings)."""
    header = 1 | (0x10 if sorted_strings else 0) | ((offset_size - 1) << 6)
    raw = [k.encode() for k in keys]
    offs, at = [0], 0
    for r in raw:
        at += len(r)
        offs.append(at)
    def le(v):
        return v.to_bytes(offset_size, "little")
    return bytes([header]) + le(len(keys)) + b"".join(le(o) for o in offs) + b"".join(raw)


def prim(tid, payload=b""):
    return bytes([tid << 2]) + payload


def short(s):
    b = s.encode()
    return bytes([(len(b) << 2) | 1]) + b


def obj(fields, off_size=1, id_size=1, large=False):
    """``fields``: [(key id, value bytes)] already in key order."""
    header = 2 | (((off_size - 1) | ((id_size - 1) << 2) | (int(large) << 4)) << 2)
    n = len(fields)
    ids = b"".join(k.to_bytes(id_size, "little") for k, _ in fields)
    offs, at = [], 0
    for _, v in fields:
        offs.append(at)
        at += len(v)
    offs.append(at)
    return bytes([header]) + n.to_bytes(4 if large else 1, "little") + ids + \
        b"".join(o.to_bytes(off_size, "little") for o in offs) + b"".join(v for _, v in fields)


def arr(values, off_size=1, large=False):
    header = 3 | (((off_size - 1) | (int(large) << 2)) << 2)
    offs, at = [], 0
    for v in values:
        offs.append(at)
        at += len(v)
    offs.append(at)
    return bytes([header]) + len(values).to_bytes(4 if large else 1, "little") + \
        b"".join(o.to_bytes(off_size, "little") for o in offs) + b"".join(values)


U = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")


@pytest.mark.parametrize("value, want, want_json", [
    (prim(0), None, "null"),
    (prim(1), True, "true"),
    (prim(2), False, "false"),
    (prim(3, b"\xfe"), -2, "-2"),
    (prim(4, struct.pack("<h", -300)), -300, "-300"),
    (prim(5, struct.pack("<i", 70000)), 70000, "70000"),
    (prim(6, struct.pack("<q", -(2 ** 40))), -(2 ** 40), str(-(2 ** 40))),
    (prim(7, struct.pack("<d", 1.25)), 1.25, "1.25"),
    (prim(8, b"\x02" + struct.pack("<i", -1234)), decimal.Decimal("-12.34"), "-12.34"),
    (prim(9, b"\x03" + struct.pack("<q", 123456789012)), decimal.Decimal("123456789.012"), "123456789.012"),
    (prim(10, b"\x00" + (10 ** 20).to_bytes(16, "little", signed=True)), decimal.Decimal(10 ** 20), "100000000000000000000"),
    (prim(11, struct.pack("<i", 19000)), datetime.date(2022, 1, 8), '"2022-01-08"'),
    (prim(12, struct.pack("<q", 1_500_000)),
     datetime.datetime(1970, 1, 1, 0, 0, 1, 500000, tzinfo=datetime.timezone.utc),
     '"1970-01-01T00:00:01.500000+00:00"'),
    (prim(13, struct.pack("<q", -1)), datetime.datetime(1969, 12, 31, 23, 59, 59, 999999),
     '"1969-12-31T23:59:59.999999"'),
    (prim(14, struct.pack("<f", 0.5)), 0.5, "0.5"),
    (prim(15, struct.pack("<I", 3) + b"\x00\xff\x10"), b"\x00\xff\x10", '"AP8Q"'),
    (prim(16, struct.pack("<I", 5) + "héé".encode()), "héé", '"héé"'),
    (prim(17, struct.pack("<q", 3_723_000_001)), datetime.time(1, 2, 3, 1), '"01:02:03.000001"'),
    (prim(20, U.bytes), U, f'"{U}"'),
    (short(""), "", '""'),
    (short("a" * 63), "a" * 63, json.dumps("a" * 63)),
])
def test_every_primitive_type(value, want, want_json):
    got = V.decode(EMPTY_META, value)
    assert got == want and type(got) is type(want)
    assert V.to_json(EMPTY_META, value) == want_json
    json.loads(want_json)                     # valid JSON text


def test_nanosecond_timestamps_keep_their_nanoseconds():
    ns = 1_510_871_468_123_456_789
    utc = V.decode(EMPTY_META, prim(18, struct.pack("<q", ns)))
    ntz = V.decode(EMPTY_META, prim(19, struct.pack("<q", ns)))
    # what pyarrow gives for timestamp[ns] values
    assert utc == pa.scalar(ns, pa.timestamp("ns", tz="UTC")).as_py()
    assert ntz == pa.scalar(ns, pa.timestamp("ns")).as_py()
    assert V.to_json(EMPTY_META, prim(18, struct.pack("<q", ns))) == '"2017-11-16T22:31:08.123456789+00:00"'
    assert V.to_json(EMPTY_META, prim(19, struct.pack("<q", ns))) == '"2017-11-16T22:31:08.123456789"'


def test_objects_arrays_and_nesting():
    m = meta("a", "b", "list", "zz")
    inner = obj([(0, prim(3, b"\x01"))])                                    # {"a": 1}
    value = obj([(0, short("x")), (1, prim(1)), (2, arr([prim(0), short("y"), inner, arr([])])), (3, obj([]))])
    want = {"a": "x", "b": True, "list": [None, "y", {"a": 1}, []], "zz": {}}
    assert V.decode(m, value) == want
    assert json.loads(V.to_json(m, value)) == want
    # values may be stored in any order (offsets need not increase); keys come out in the object's key order
    a, b = prim(5, struct.pack("<i", 7)), short("second")
    out_of_order = bytes([2, 2, 0, 1, len(b), 0, len(a) + len(b)]) + b + a
    assert V.decode(meta("a", "b"), out_of_order) == {"a": 7, "b": "second"}
    # wide forms: 2-byte offsets and ids, 4-byte counts, 2-byte metadata offsets, unsorted dictionary
    m2 = meta("k", "j", offset_size=2, sorted_strings=False)
    wide = obj([(1, short("J")), (0, arr([prim(2)] * 300, off_size=2, large=True))], off_size=2, id_size=2,
               large=True)
    assert V.decode(m2, wide) == {"j": "J", "k": [False] * 300}
    # a big array of strings: 3-byte offsets
    many = arr([prim(16, struct.pack("<I", 300) + b"s" * 300)] * 300, off_size=3, large=True)
    assert V.decode(EMPTY_META, many) == ["s" * 300] * 300


def test_arrow_columns_to_python_and_json():
    m = meta("a")
    col = pa.array([{"metadata": m, "value": obj([(0, prim(5, struct.pack("<i", 1)))])}, None,
                    {"metadata": EMPTY_META, "value": prim(0)}, {"metadata": EMPTY_META, "value": short("t")}],
                   pa.struct([pa.field("metadata", pa.binary(), nullable=False),
                              pa.field("value", pa.binary(), nullable=False)]))
    assert V.to_pylist(col) == [{"a": 1}, None, None, "t"]
    assert V.to_json_array(pa.chunked_array([col])).to_pylist() == ['{"a":1}', None, "null", '"t"']
    V.validate_array(col)


@pytest.mark.parametrize("metadata, value, message, offset", [
    (b"", prim(0), "empty metadata", 0),
    (b"\x02\x00\x00", prim(0), "unsupported version 2", 0),
    (b"\x01\x05\x00", prim(0), "dictionary of 5 strings does not fit", 1),
    (b"\x01\x01\x00\x03ab", prim(0), "dictionary bytes end at 7, the metadata has 6 bytes", 3),
    (b"\x01\x01\x00\x01\xff", prim(0), "dictionary string 0 is not UTF-8", 4),
    (EMPTY_META, b"", "value runs past its end", 0),
    (EMPTY_META, prim(6, b"\x00" * 7), "int64 of 8 bytes runs past its end", 0),
    (EMPTY_META, prim(21), "unknown primitive type 21", 0),
    (EMPTY_META, prim(8, b"\x27" + b"\x00" * 4), "decimal scale 39 is above 38", 1),
    (EMPTY_META, prim(16, struct.pack("<I", 10) + b"abc"), "string of 10 bytes runs past its end", 1),
    (EMPTY_META, bytes([(5 << 2) | 1]) + b"abc", "short string of 5 bytes", 0),
    (EMPTY_META, bytes([(1 << 2) | 1, 0xFF]), "string is not UTF-8", 1),
    (EMPTY_META, prim(0) + b"\x00", "1 bytes after the value", 1),
    (EMPTY_META, obj([(0, prim(0))]), "field id 0 is not in the metadata dictionary", 2),
    (meta("a", "b"), obj([(1, prim(0)), (0, prim(0))]), "out of order or repeated", 3),
    (meta("a"), obj([(0, prim(0)), (0, prim(0))]), "out of order or repeated", 3),
    (EMPTY_META, bytes([3, 200]), "200 elements do not fit", 1),
    (EMPTY_META, bytes([3 | (1 << 4), 255, 255, 255, 255]), "elements do not fit", 1),
    (EMPTY_META, bytes([3, 1, 0, 9, 0]), "array elements end at 13", 3),
    (EMPTY_META, bytes([3, 2, 1, 0, 2, 0, 0]), "element offset 1 is out of order", 2),
    (EMPTY_META, bytes([3, 2, 0, 5, 1, 0]), "element offset 5 is beyond the array's 1 element bytes", 3),
    (meta("a"), bytes([2, 1, 0, 5, 1, 0]), "field offset 5 is outside", 3),
    (EMPTY_META, prim(11, struct.pack("<i", 10 ** 9)), "outside years 1..9999", 0),
    (EMPTY_META, prim(17, struct.pack("<q", -5)), "outside a day", 0),
])
def test_malformed_variants_are_corrupt_with_their_offset(metadata, value, message, offset):
    with pytest.raises(CorruptFileError, match=message) as ei:
        V.decode(metadata, value, column="payload", row=4, path="data.parquet")
    e = ei.value
    assert (e.field, e.row, e.path, e.offset) == ("payload", 4, "data.parquet", offset)
    assert "payload" in str(e) and "row 4" in str(e)


def test_deep_nesting_is_refused_not_a_recursion_error():
    value = prim(0)
    for _ in range(V.MAX_DEPTH + 1):
        value = arr([value], off_size=2)
    with pytest.raises(CorruptFileError, match="nesting deeper than"):
        V.decode(EMPTY_META, value)


def test_a_bad_row_of_an_arrow_column_names_column_and_row():
    col = pa.array([{"metadata": EMPTY_META, "value": prim(0)}, {"metadata": EMPTY_META, "value": prim(6)}],
                   pa.struct([("metadata", pa.binary()), ("value", pa.binary())]))
    with pytest.raises(CorruptFileError, match="int64") as ei:
        V.to_pylist(col, column="v")
    assert (ei.value.field, ei.value.row) == ("v", 1)
    with pytest.raises(CorruptFileError, match="struct<metadata, value>"):
        V.to_pylist(pa.array([b"x"]))


# -- variant columns in table scans ---------------------------------------------------------------------------

def _variant_table(tmp_path, rows):
    """A v3 table with a ``payload variant`` column and one Parquet data file holding ``rows`` ((id, metadata,
    value) or (id, None) for a null variant), written the way Iceberg writes an unshredded variant: a group of
    the binaries ``metadata`` and ``value`` with the column's field id."""
    import pyarrow.parquet as pq

    from paimon_engine import types as T
    from paimon_engine.catalog import SqlCatalog
    from paimon_engine.spec.manifest import DataFile
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", pa.schema([pa.field("id", pa.int64())]), format_version=3)
    with t.update_schema() as u:
        u.add_column("payload", T.VariantType())
    fid = t.schema().find_field("payload").id
    vtype = pa.struct([pa.field("metadata", pa.binary(), nullable=False),
                       pa.field("value", pa.binary(), nullable=False)])
    schema = pa.schema([pa.field("id", pa.int64(), metadata={b"PARQUET:field_id": b"1"}),
                        pa.field("payload", vtype, metadata={b"PARQUET:field_id": str(fid).encode()})])
    data = pa.table({"id": pa.array([r[0] for r in rows], pa.int64()),
                     "payload": pa.array([None if r[1] is None else {"metadata": r[1], "value": r[2]}
                                          for r in rows], vtype)}, schema=schema)
    path = tmp_path / "wh" / "db" / "t" / "data" / "variants.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, str(path))
    t.row_delta().add_data_file(DataFile(f"file://{path}", "PARQUET", (), len(rows), path.stat().st_size)).commit()
    return t, str(path)


def test_a_table_scan_reads_variant_columns(tmp_path):
    m = meta("name", "tags")
    doc = obj([(0, short("ada")), (1, arr([short("x"), prim(5, struct.pack("<i", 2))]))])
    t, _ = _variant_table(tmp_path, [(1, m, doc), (2, None), (3, EMPTY_META, prim(0)),
                                     (4, EMPTY_META, prim(11, struct.pack("<i", 1)))])
    got = t.scan(columns=["id", "payload"]).to_arrow().sort_by("id")
    assert got.schema.field("payload").type == pa.struct([pa.field("metadata", pa.binary(), nullable=False),
                                                          pa.field("value", pa.binary(), nullable=False)])
    assert got.column("payload").to_pylist()[0] == {"metadata": m, "value": doc}
    assert V.to_pylist(got.column("payload")) == [{"name": "ada", "tags": ["x", 2]}, None, None,
                                                  datetime.date(1970, 1, 2)]
    assert V.to_json_array(got.column("payload")).to_pylist() == \
        ['{"name":"ada","tags":["x",2]}', None, "null", '"1970-01-02"']
    # deletes and filters on other columns work with it
    t.delete("id = 3")
    assert t.scan(filter="id > 1", columns=["id", "payload"]).to_arrow().sort_by("id").column(0).to_pylist() == \
        [2, 4]


def test_a_bad_variant_in_a_data_file_is_corrupt_naming_file_column_row_and_offset(tmp_path):
    t, _ = _variant_table(tmp_path, [(1, EMPTY_META, prim(0)), (2, EMPTY_META, prim(6, b"\x01\x02"))])
    with pytest.raises(CorruptFileError, match="int64 of 8 bytes") as ei:
        t.scan(columns=["id", "payload"]).to_arrow()
    e = ei.value
    assert (e.field, e.row, e.offset) == ("payload", 1, 0) and e.path.endswith("variants.parquet")
    assert "variants.parquet" in str(e) and "payload" in str(e)
    # the other columns stay readable
    assert t.scan(columns=["id"]).to_arrow().num_rows == 2
    # the row is the position in the file, also when reading in batches
    with pytest.raises(CorruptFileError) as ei:
        list(t.scan(columns=["payload"]).to_batches(batch_size=1))
    assert ei.value.row == 1


def test_a_variant_file_with_the_parquet_variant_annotation(tmp_path):
    """A file whose variant column carries the Parquet VARIANT logical type (as DuckDB and Iceberg Java write
    it): read when the installed pyarrow knows the annotation, else an UnsupportedTypeError naming the file (not a
    CorruptFileError: the file is valid)."""
    import duckdb
    import pyarrow.parquet as pq

    from paimon_engine.errors import UnsupportedTypeError
    from paimon_engine.spec.manifest import DataFile
    t, _ = _variant_table(tmp_path, [(1, EMPTY_META, prim(0))])
    path = tmp_path / "wh" / "db" / "t" / "data" / "annotated.parquet"
    con = duckdb.connect()
    try:
        con.sql(f"COPY (SELECT 7::BIGINT AS id, {{'name': 'ada'}}::VARIANT AS payload) TO '{path}' "
                f"(FORMAT parquet, FIELD_IDS {{id: 1, payload: {t.schema().find_field('payload').id}}})")
    except duckdb.Error as exc:                      # a DuckDB without VARIANT cannot make the file
        pytest.fail(f"duckdb {duckdb.__version__} cannot write a VARIANT column: {exc}")
    t.row_delta().add_data_file(DataFile(f"file://{path}", "PARQUET", (), 1, path.stat().st_size)).commit()
    try:
        pq.ParquetFile(str(path))
        readable = True
    except OSError:
        readable = False
    if readable:
        got = t.scan(filter="id = 7", columns=["payload"]).to_arrow().column(0)
        assert V.to_pylist(got) == [{"name": "ada"}]
    else:
        with pytest.raises(UnsupportedTypeError, match="annotated.parquet.*logical type") as ei:
            t.scan(columns=["id", "payload"]).to_arrow()
        assert not isinstance(ei.value, CorruptFileError)
