"""paimon_engine.iceberg_types: pyiceberg's names build this library's types, schemas and specs."""
import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.catalog import load_catalog
from paimon_engine.errors import InvalidArgumentError, SchemaError
from paimon_engine.iceberg_types import (BinaryType, BucketTransform, DecimalType, FixedType, IntegerType,
                                         ListType, LongType, MapType, NestedField, PartitionField, PartitionSpec,
                                         Schema, SortField, SortOrder, StringType, StructType, TimestampNanoType,
                                         TimestampType, TimestamptzType, UUIDType)
from paimon_engine.spec.schema import Schema as OurSchema


def test_constructors_build_our_types():
    assert isinstance(LongType(), T.BigIntType) and isinstance(IntegerType(), T.IntType)
    assert isinstance(StringType(), T.VarCharType)
    assert isinstance(BinaryType(), T.VarBinaryType)
    fx = FixedType(4)
    assert isinstance(fx, T.BinaryType) and fx.length == 4
    d = DecimalType(10, 2)
    assert (d.precision, d.scale) == (10, 2)
    assert isinstance(TimestamptzType(), T.LocalZonedTimestampType) and TimestamptzType().precision == 6
    assert isinstance(UUIDType(), T.UuidType)
    # isinstance recognises our types under pyiceberg's names, and tells micro from nano timestamps
    assert isinstance(T.BigIntType(), LongType) and not isinstance(T.IntType(), LongType)
    assert isinstance(T.TimestampType(6), TimestampType) and not isinstance(T.TimestampType(9), TimestampType)
    assert isinstance(TimestampNanoType(), T.TimestampType) and TimestampNanoType().precision == 9


def test_nested_and_schema():
    lst = ListType(2, StringType(), element_required=False)
    assert lst.element_id == 2 and lst.element.nullable
    m = MapType(3, StringType(), 4, IntegerType(), value_required=True)
    assert (m.key_id, m.value_id, m.key.nullable, m.value.nullable) == (3, 4, False, False)
    f = NestedField(1, "id", LongType(), required=True, doc="key")
    assert (f.field_id, f.name, f.required, f.doc) == (1, "id", True, "key")
    s = Schema(f, NestedField(5, "loc", StructType(NestedField(6, "lat", IntegerType()))),
               identifier_field_ids=[1])
    assert isinstance(s, OurSchema) and s.identifier_field_ids == (1,)
    assert s.find_field("loc.lat").id == 6
    with pytest.raises(SchemaError):
        Schema("id")
    with pytest.raises(SchemaError):
        NestedField(1, "x", "long")


def test_create_table_with_pyiceberg_shaped_schema_spec_and_order(tmp_path):
    cat = load_catalog("x", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path))
    cat.create_namespace("ns")
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "city", StringType()))
    spec = PartitionSpec(PartitionField(source_id=1, field_id=1000, transform=BucketTransform(4), name="id_b"),
                         PartitionField(2, 1001, "identity", "city"))
    order = SortOrder(SortField(source_id=1))
    t = cat.create_table("ns.t", schema=schema, partition_spec=spec, sort_order=order)
    assert [(f.name, str(f.transform)) for f in t.spec().fields] == [("id_b", "bucket[4]"), ("city", "identity")]
    assert [f.source_id for f in t.sort_order().fields] == [1]
    t.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "city": ["a", "b", None]}))
    assert t.scan(row_filter="city = 'b'").to_arrow().to_pylist() == [{"id": 2, "city": "b"}]
    assert t.inspect.partitions().num_rows == 3
    with pytest.raises(InvalidArgumentError):
        PartitionSpec(("id", "identity"))
