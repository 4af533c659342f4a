import datetime
import decimal

import pyarrow as pa

from paimon_engine import types as T
from paimon_engine.spec.schema import Schema

from .conftest import canon


def _data():
    return pa.table({
        "id": pa.array([1, 2, 3], pa.int64()),
        "point": pa.array([{"x": 1.0, "y": 2.0}, None, {"x": -1.0, "y": None}],
                          pa.struct([("x", pa.float64()), ("y", pa.float64())])),
        "tags": pa.array([["a", "b"], [], None], pa.list_(pa.string())),
        "attrs": pa.array([[("k", 1)], None, [("a", 2), ("b", 3)]], pa.map_(pa.string(), pa.int32())),
        "price": pa.array([decimal.Decimal("1.10"), None, decimal.Decimal("-3.25")], pa.decimal128(10, 2)),
        "t": pa.array([datetime.time(1, 2, 3), None, datetime.time(23, 59, 59, 999999)], pa.time64("us")),
        "raw": pa.array([b"\x00", None, b"\xff" * 40], pa.binary()),
        "flag": pa.array([True, None, False]),
    })


def test_nested_and_exotic_columns_round_trip_and_pyiceberg_reads(ours, theirs):
    ours.create_namespace("db")
    t = ours.create_table("db.nested", _data().schema, [("price", "truncate[100]"), ("flag", "identity")])
    schema = t.schema()
    # every nested element / key / value got an id
    ids = sorted(schema.by_id())
    assert ids == list(range(1, len(ids) + 1)) and t.metadata.last_column_id == ids[-1]
    assert schema.find_field("tags.element").id > 0 and schema.find_field("attrs.value").id > 0
    t.append(_data())
    with t.update_schema() as u:
        u.add_column("point.z", T.DoubleType())
    t.append(_data())
    got = t.to_arrow()
    assert got.num_rows == 6
    z = got.column("point").combine_chunks().field("z").to_pylist()
    assert z == [None] * 6
    pt = theirs.load_table("db.nested")
    theirs_rows = pt.scan().to_arrow()
    assert canon(theirs_rows, ["id", "tags", "price", "flag", "raw"]) == canon(got, ["id", "tags", "price", "flag",
                                                                                   "raw"])
    assert [f.field_id for f in pt.schema().fields] == [f.id for f in schema.fields]
    # metrics: bounds of the decimal and the binary column (truncated to 16 bytes)
    e = [e for e in t.data_files() if e.data_file.record_count and e.data_file.upper_bounds.get(schema.find_field("raw").id)]
    assert any(len(x.data_file.upper_bounds[schema.find_field("raw").id]) <= 16 for x in e)


def test_schema_from_arrow_assigns_fresh_ids():
    s = Schema.from_arrow(_data().schema)
    assert s.find_field("id").id == 1
    assert s.highest_field_id == len(s.by_id())


def test_nested_rename_reorder_drop_promote_read_by_id(tmp_path):
    from paimon_engine.catalog import FileSystemCatalog
    cat = FileSystemCatalog(str(tmp_path))
    data = pa.table({
        "id": pa.array([1, 2], pa.int64()),
        "s": pa.array([{"a": 1, "b": "x"}, None], pa.struct([("a", pa.int32()), ("b", pa.string())])),
        "l": pa.array([[{"v": 1.5}], None], pa.list_(pa.struct([("v", pa.float32())]))),
        "m": pa.array([[("k", {"w": 7})], None], pa.map_(pa.string(), pa.struct([("w", pa.int32())]))),
    })
    t = cat.create_table("db.t", data.schema)
    t.append(data)
    with t.update_schema() as u:
        u.rename_column("s.a", "alpha")
        u.move_first("s.b")
        u.update_column("s.alpha", T.BigIntType())
        u.add_column("s.c", T.STRING())
        u.update_column("l.element.v", T.DoubleType())
        u.rename_column("l.element.v", "value")
        u.delete_column("m.value.w")
        u.add_column("m.value.w2", T.IntType())
    out = t.to_arrow().sort_by("id").to_pylist()
    assert out[0]["s"] == {"b": "x", "alpha": 1, "c": None} and out[1]["s"] is None
    assert out[0]["l"] == [{"value": 1.5}] and out[1]["l"] is None
    assert out[0]["m"] == [("k", {"w2": None})]


def test_promoted_list_and_map_values_read_from_sliced_arrays():
    from paimon_engine.scan.reader import _conform
    arr = pa.array([[{"v": 1.5}], None, [{"v": 2.5}, {"v": 3.5}]], pa.list_(pa.struct([
        pa.field("v", pa.float32(), metadata={b"PARQUET:field_id": b"3"})])))
    target = T.ArrayType(T.RowType([T.DataField(3, "value", T.DoubleType())]), element_id=2)
    out = _conform(arr.slice(1), target, "l")
    assert out.to_pylist() == [None, [{"value": 2.5}, {"value": 3.5}]]
    m = pa.array([[("k", 1)], [("a", 2), ("b", 3)]], pa.map_(pa.string(), pa.int32()))
    mt = T.MapType(T.STRING(), T.BigIntType(), key_id=5, value_id=6)
    assert _conform(m.slice(1), mt, "m").to_pylist() == [[("a", 2), ("b", 3)]]
