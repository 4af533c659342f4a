"""``variant`` (format version 3): the type is parsed and kept in the schema; its values are read (see
test_variant_decoding.py) but not written or filtered on: an UnsupportedTypeError names the column."""
import json

import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.errors import UnsupportedTypeError
from paimon_engine.spec.schema import Schema


def _table(tmp_path):
    from paimon_engine.catalog import SqlCatalog
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", pa.schema([("id", pa.int64())]), format_version=3)
    t.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    with t.update_schema() as u:
        u.add_column("payload", T.VariantType())
        u.add_column("nested", T.RowType([T.DataField(100, "v", T.VariantType()), T.DataField(101, "n", T.IntType())]))
    return cat, t


def test_variant_type_parses_from_metadata():
    s = Schema.from_dict({"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "v", "required": False, "type": "variant"},
        {"id": 2, "name": "l", "required": False, "type": {"type": "list", "element-id": 3, "element": "variant",
                                                            "element-required": False}}]})
    assert isinstance(s.find_field("v").type, T.VariantType)
    assert s.to_dict()["fields"][0]["type"] == "variant"
    assert T.variant_paths(s.struct) == ["v", "l.element"]


def test_variant_columns_read_null_where_files_lack_them_and_writes_are_refused(tmp_path):
    cat, t = _table(tmp_path)
    fields = json.loads(t.io.read_bytes(t.metadata_location))["schemas"][-1]["fields"]
    assert [f["type"] if isinstance(f["type"], str) else f["type"]["type"] for f in fields] == \
        ["long", "variant", "struct"]
    assert t.scan(columns=["id"]).to_arrow().column(0).to_pylist() == [1, 2]
    got = t.to_arrow()
    assert got.schema.field("payload").type == T.VariantType().to_arrow()
    assert got.column("payload").to_pylist() == [None, None]
    with pytest.raises(UnsupportedTypeError, match="'payload'.*filters"):
        t.scan(filter="payload is null", columns=["id"]).to_arrow()
    with pytest.raises(UnsupportedTypeError, match="write column 'payload'.*not encoded"):
        t.append(pa.table({"id": pa.array([3], pa.int64())}))
    assert cat.load_table("db.t").scan(columns=["id"]).to_arrow().num_rows == 2


def test_variant_inside_lists_is_not_read_yet(tmp_path):
    _, t = _table(tmp_path)
    with t.update_schema() as u:
        u.add_column("many", T.ArrayType(T.VariantType()))
    with pytest.raises(UnsupportedTypeError, match="'many'.*inside lists and maps"):
        t.scan(columns=["id", "many"]).to_arrow()
    assert t.scan(columns=["id", "payload"]).to_arrow().num_rows == 2
