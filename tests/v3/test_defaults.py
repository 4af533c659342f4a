"""Column defaults (format version 3): ``initial-default`` fills a column a data file lacks, ``write-default``
fills a column a writer omits; both in Iceberg's JSON single-value form."""
import datetime
import decimal
import json

import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.errors import SchemaError
from paimon_engine.spec.conversions import default_array, default_from_json, default_to_json


def _catalog(tmp_path):
    from paimon_engine.catalog import SqlCatalog
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    return cat


def _ids(n, start=0):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})


def _by_id(t, col, **kw):
    got = t.scan(columns=["id", col], **kw).to_arrow().to_pydict()
    return dict(zip(got["id"], got[col]))


def test_initial_default_fills_old_files_and_write_default_fills_omitted_columns(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _ids(1).schema, format_version=3)
    t.append(_ids(3))
    with t.update_schema() as u:
        u.add_column("status", T.STRING(), default="new")
        u.add_column("day", T.DateType(), default=datetime.date(2024, 2, 29))
        u.add_column("price", T.DecimalType(9, 2), required=True, default=decimal.Decimal("1.50"))
    fields = {f["name"]: f for f in json.loads(t.io.read_bytes(t.metadata_location))["schemas"][-1]["fields"]}
    assert (fields["status"]["initial-default"], fields["status"]["write-default"]) == ("new", "new")
    assert fields["day"]["initial-default"] == "2024-02-29" and fields["price"]["write-default"] == "1.50"
    assert fields["price"]["required"] is True
    # rows written before the columns existed read their initial defaults
    assert _by_id(t, "status") == {0: "new", 1: "new", 2: "new"}
    assert set(_by_id(t, "day").values()) == {datetime.date(2024, 2, 29)}
    assert set(_by_id(t, "price").values()) == {decimal.Decimal("1.50")}
    # a writer omitting the columns stores their write defaults (the required one too)
    t.append(_ids(2, start=10))
    (new,) = [e.data_file for e in t.data_files() if e.data_file.record_count == 2]
    import pyarrow.parquet as pq
    stored = pq.read_table(new.file_path.removeprefix("file://"))
    assert stored.column("status").to_pylist() == ["new", "new"]
    assert stored.column("price").to_pylist() == [decimal.Decimal("1.50")] * 2
    # explicit values win; filters see defaults in files that lack the column
    t.append(pa.table({"id": pa.array([20], pa.int64()), "status": ["done"],
                       "price": pa.array([decimal.Decimal("9.99")], pa.decimal128(9, 2))}))
    assert _by_id(t, "status") == {0: "new", 1: "new", 2: "new", 10: "new", 11: "new", 20: "done"}
    assert sorted(t.scan(filter="status = 'new'", columns=["id"]).to_arrow().column(0).to_pylist()) == \
        [0, 1, 2, 10, 11]
    assert t.scan(filter="status = 'done'", columns=["id"]).to_arrow().column(0).to_pylist() == [20]
    # pyiceberg reads the schema with its defaults
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog
    theirs = PySqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    schema = theirs.load_table("db.t").schema()
    assert schema.find_field("status").initial_default == "new"


def test_defaults_need_format_version_3(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _ids(1).schema, format_version=2)
    with pytest.raises(SchemaError, match="format version 3"):
        with t.update_schema() as u:
            u.add_column("status", T.STRING(), default="new")
    assert t.schema().names == ["id"]
    with pytest.raises(SchemaError, match="give it a default"):
        with t.update_schema() as u:
            u.add_column("status", T.STRING(), required=True)


def test_a_default_the_type_cannot_hold_is_refused(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _ids(1).schema, format_version=3)
    with pytest.raises(SchemaError, match="'n'"):
        with t.update_schema() as u:
            u.add_column("n", T.IntType(), default="seven")
    assert t.schema().names == ["id"]


@pytest.mark.parametrize("dtype, value, json_value", [
    (T.BooleanType(), True, True),
    (T.BigIntType(), 7, 7),
    (T.DoubleType(), 1.5, 1.5),
    (T.DecimalType(9, 2), decimal.Decimal("14.2"), "14.20"),
    (T.DateType(), datetime.date(2017, 11, 16), "2017-11-16"),
    (T.TimeType(6), datetime.time(22, 31, 8, 123456), "22:31:08.123456"),
    (T.TimestampType(6), datetime.datetime(2017, 11, 16, 22, 31, 8, 123456), "2017-11-16T22:31:08.123456"),
    (T.LocalZonedTimestampType(6), datetime.datetime(2017, 11, 16, 22, 31, 8, 123456, tzinfo=datetime.timezone.utc),
     "2017-11-16T22:31:08.123456+00:00"),
    (T.TimestampType(9), 1510871468123456789, "2017-11-16T22:31:08.123456789"),
    (T.STRING(), "iceberg", "iceberg"),
    (T.UuidType(), "f79c3e09-677c-4bbd-a479-3f349cb785e7", "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    (T.BinaryType(2), b"\x01\xff", "01ff"),
    (T.BYTES(), b"\x00\x10", "0010"),
])
def test_json_single_value_forms(dtype, value, json_value):
    assert default_to_json(dtype, value) == json_value
    arr = default_array(T.DataField(1, "f", dtype), json_value, 2)
    assert len(arr) == 2 and arr.type == dtype.to_arrow() and arr.null_count == 0
    default_from_json(dtype, json_value)


def test_nested_defaults_and_bad_json_forms():
    st = T.RowType([T.DataField(5, "x", T.IntType()), T.DataField(6, "y", T.STRING())])
    assert default_array(T.DataField(4, "s", st), {"5": 1, "6": "a"}, 1).to_pylist() == [{"x": 1, "y": "a"}]
    lst = T.ArrayType(T.IntType())
    assert default_array(T.DataField(4, "l", lst), [1, 2], 1).to_pylist() == [[1, 2]]
    m = T.MapType(T.STRING(), T.IntType())
    assert default_array(T.DataField(4, "m", m), {"keys": ["a"], "values": [1]}, 1).to_pylist() == [[("a", 1)]]
    for dtype, bad in [(T.IntType(), "1"), (T.BooleanType(), 1), (T.DecimalType(9, 2), "1.5"), (T.DateType(), "2017-13-01"),
                       (T.LocalZonedTimestampType(6), "2017-11-16T22:31:08.123456"), (T.BinaryType(2), "01"),
                       (T.TimeType(6), "22:31:08.1234567"), (m, {"keys": ["a"]}), (T.BYTES(), "zz")]:
        with pytest.raises(SchemaError, match="'f'"):
            default_from_json(dtype, bad, "f")


def test_set_default_value_changes_the_write_default_alone(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _ids(1).schema, format_version=3)
    t.append(_ids(2))
    with t.update_schema() as u:
        u.add_column("status", T.STRING(), default="new")
    t.append(_ids(1, start=10))
    before = len(t.metadata.schemas)
    with t.update_schema() as u:
        u.set_default_value("status", "queued")
    assert len(t.metadata.schemas) == before + 1          # a new schema, not the old one reused
    fields = {f["name"]: f for f in json.loads(t.io.read_bytes(t.metadata_location))["schemas"][-1]["fields"]}
    assert (fields["status"]["initial-default"], fields["status"]["write-default"]) == ("new", "queued")
    t.append(_ids(1, start=20))
    # old rows keep the initial default; rows written before the change keep what was stored; new rows the new one
    assert _by_id(t, "status") == {0: "new", 1: "new", 10: "new", 20: "queued"}
    # dropping the write default of an optional column: omitted values are null from then on
    with t.update_schema() as u:
        u.set_default_value("status", None)
    fields = {f["name"]: f for f in json.loads(t.io.read_bytes(t.metadata_location))["schemas"][-1]["fields"]}
    assert "write-default" not in fields["status"] and fields["status"]["initial-default"] == "new"
    t.append(_ids(1, start=30))
    assert _by_id(t, "status")[30] is None
    # pyiceberg reads the new write default
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog
    theirs = PySqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    assert theirs.load_table("db.t").schema().find_field("status").write_default is None


def test_set_default_value_is_validated(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _ids(1).schema, format_version=3)
    with t.update_schema() as u:
        u.add_column("n", T.IntType(), required=True, default=1)
        u.add_column("s", T.RowType([T.DataField(0, "x", T.IntType())]))
    sid = t.metadata.current_schema_id
    with pytest.raises(SchemaError, match="'n'"):
        with t.update_schema() as u:
            u.set_default_value("n", "seven")                # the type cannot hold it
    with pytest.raises(SchemaError, match="required column 'n'"):
        with t.update_schema() as u:
            u.set_default_value("n", None)                   # a required column needs one
    with pytest.raises(SchemaError, match="no column 'missing'"):
        with t.update_schema() as u:
            u.set_default_value("missing", 1)
    assert t.metadata.current_schema_id == sid
    with t.update_schema() as u:
        u.set_default_value("s.x", 5)                        # a nested field
        u.set_default_value("n", 2)
    t.append(_ids(1))
    assert t.scan(columns=["n", "s"]).to_arrow().to_pylist() == [{"n": 2, "s": None}]
    assert t.schema().find_field("s.x").write_default == 5
    old = cat.create_table("db.old", _ids(1).schema, format_version=2)
    with old.update_schema() as u:
        u.add_column("k", T.IntType())
    with pytest.raises(SchemaError, match="format version 3"):
        with old.update_schema() as u:
            u.set_default_value("k", 3)
