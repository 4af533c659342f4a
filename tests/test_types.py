import pyarrow as pa
import pytest

from paimon_engine.errors import SchemaError, UnsupportedTypeError
from paimon_engine.types import (
    ArrayType, BigIntType, BinaryType, DataField, DecimalType, IntType, LocalZonedTimestampType, MapType,
    MultisetType, RowType, STRING, TimeType, TimestampType, VarCharType, from_arrow, from_iceberg,
    parse_paimon_type, schema_from_arrow,
)

ROUNDTRIP = [
    "BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "STRING", "BYTES", "CHAR(5)",
    "VARCHAR(10)", "BINARY(4)", "VARBINARY(9)", "DECIMAL(10, 2)", "DECIMAL(38, 10)", "DATE", "TIME(0)",
    "TIME(3)", "TIMESTAMP(3)", "TIMESTAMP(9)", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "VARIANT",
    "ARRAY<INT>", "MAP<STRING NOT NULL, INT>", "MULTISET<STRING>", "INT NOT NULL",
    "ROW<`x` INT, `y` STRING NOT NULL>", "ARRAY<ROW<`a` MAP<INT NOT NULL, ARRAY<DOUBLE>>>>",
]


@pytest.mark.parametrize("text", ROUNDTRIP)
def test_paimon_strings_roundtrip(text):
    assert parse_paimon_type(text).to_paimon_string() == text


def test_java_golden_schema_strings_parse(golden_dir):
    import json
    schema = json.loads((golden_dir / "java_small.row.json").read_text())["schema"]
    for f in schema:
        parse_paimon_type(f["type"])
    assert parse_paimon_type("ROW<x: INT, y: STRING>") == RowType.of(("x", IntType()), ("y", STRING()))


def test_parser_details():
    assert parse_paimon_type("MAP<STRING NOT NULL, INT>") == MapType(STRING(False), IntType())
    assert parse_paimon_type("integer") == IntType()
    assert parse_paimon_type("TIMESTAMP_LTZ(3)") == LocalZonedTimestampType(3)
    assert parse_paimon_type("TIMESTAMP") == TimestampType(6)
    t = parse_paimon_type("ROW<`a``b` INT 'it''s', c STRING>")
    assert t.fields[0].name == "a`b" and t.fields[0].description == "it's"
    assert parse_paimon_type(t.to_paimon_string()) == t


@pytest.mark.parametrize("bad", ["", "MAP<INT>", "ARRAY<INT", "DECIMAL(40, 2)", "DECIMAL(5, 6)", "INT NOT",
                                 "ROW<a INT, a INT>", "CHAR(0)", "TIMESTAMP(10)", "FOO", "INT INT", "ARRAY<>"])
def test_parser_rejects(bad):
    with pytest.raises((SchemaError, UnsupportedTypeError)):
        parse_paimon_type(bad)


def test_iceberg_roundtrip():
    schema = {"type": "struct", "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "data", "required": False, "type": "string"},
        {"id": 3, "name": "d", "required": False, "type": "decimal(9, 2)"},
        {"id": 4, "name": "f", "required": False, "type": "fixed[16]"},
        {"id": 5, "name": "ts", "required": False, "type": "timestamptz"},
        {"id": 6, "name": "l", "required": False,
         "type": {"type": "list", "element-id": 7, "element-required": True, "element": "int"}},
        {"id": 8, "name": "m", "required": False,
         "type": {"type": "map", "key-id": 9, "key": "string", "value-id": 10, "value-required": False,
                  "value": {"type": "struct", "fields": [
                      {"id": 11, "name": "x", "required": False, "type": "uuid"}]}}},
    ]}
    t = from_iceberg(schema)
    assert t.field("id").required and t.field("data").nullable
    assert t.field("f").type == BinaryType(16, nullable=True)
    assert t.field("l").type.element_id == 7
    assert t.to_iceberg() == schema
    with pytest.raises(UnsupportedTypeError):
        from_iceberg("nope")
    with pytest.raises(SchemaError):
        from_iceberg({"type": "list", "element": "int"})


def test_arrow_mapping_roundtrip():
    t = parse_paimon_type("ROW<a BIGINT NOT NULL, b STRING, c DECIMAL(20, 3), d TIMESTAMP(9), "
                          "e TIMESTAMP(3) WITH LOCAL TIME ZONE, f ARRAY<INT>, g MAP<STRING NOT NULL, DOUBLE>, "
                          "h ROW<x TIME(3), y DATE>, i BOOLEAN, j BYTES>")
    arrow_schema = t.to_arrow_schema()
    assert arrow_schema.field("a").nullable is False
    assert arrow_schema.field("d").type == pa.timestamp("ns")
    assert arrow_schema.field("e").type == pa.timestamp("ms", tz="UTC")
    back = schema_from_arrow(arrow_schema)
    assert back.equals_ignore_nullable(t)
    assert [f.id for f in back.fields] == [f.id for f in t.fields]
    assert from_arrow(pa.large_string()) == STRING()
    assert from_arrow(pa.time64("us")) == TimeType(6)
    assert from_arrow(pa.decimal128(5, 1)) == DecimalType(5, 1)
    assert MultisetType(STRING()).to_arrow() == pa.map_(pa.string(), pa.field("value", pa.int32(), nullable=False))


def test_type_equality_and_copy():
    assert VarCharType(10) != VarCharType(11)
    assert IntType().copy(False) == IntType(False)
    assert hash(ArrayType(IntType())) == hash(ArrayType(IntType()))
    assert DecimalType(5, 2).copy(False).precision == 5
    with pytest.raises(SchemaError):
        DataField(1, "x", "INT")
    row = RowType([DataField(5, "a", BigIntType())])
    assert row.field_by_id(5).name == "a" and row.field_by_id(6) is None
    with pytest.raises(SchemaError, match="no field"):
        row.index("zz")
