"""A user script written for pyiceberg 0.12. It is run twice by test_compat.py: once as is, once with its
imports pointed at paimon_engine (the ``LIB`` placeholder below); nothing else changes."""
import sys

import pyarrow as pa

from LIB.catalog import load_catalog
from LIB.partitioning import PartitionField, PartitionSpec
from LIB.schema import Schema
from LIB.transforms import BucketTransform, DayTransform, IdentityTransform
from LIB.types import (BinaryType, BooleanType, DateType, DecimalType, DoubleType, FixedType, FloatType,
                       IntegerType, ListType, LongType, MapType, NestedField, StringType, StructType, TimestampType,
                       TimestamptzType, TimeType, UUIDType)
from LIB.expressions import (AlwaysTrue, And, EqualTo, GreaterThan, GreaterThanOrEqual, In, IsNull, LessThan,
                             LessThanOrEqual, Not, NotEqualTo, NotIn, NotNull, Or, StartsWith, NotStartsWith)

uri, warehouse, ns = sys.argv[1], sys.argv[2], sys.argv[3]
out = []


def show(label, value):
    if isinstance(value, pa.Table):
        value = sorted(tuple(r.values()) for r in value.to_pylist())
    out.append(f"{label}: {value!r}")


catalog = load_catalog("compat", type="sql", uri=uri, warehouse=warehouse)
catalog.create_namespace(ns)
catalog.create_namespace_if_not_exists(ns)
show("namespaces", (ns,) in catalog.list_namespaces())
schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                    pa.field("score", pa.float64())])
t = catalog.create_table(f"{ns}.people", schema=schema, properties={"owner": "me"})
catalog.create_table_if_not_exists(f"{ns}.people", schema=schema)
show("exists", (catalog.table_exists(f"{ns}.people"), catalog.table_exists(f"{ns}.nope")))
show("tables", sorted(i[-1] for i in catalog.list_tables(ns)))
show("name", t.name()[-1])
show("owner", t.properties.get("owner"))
show("location", t.location().endswith("people"))
show("no snapshot", t.current_snapshot())

data = pa.table({"id": pa.array(range(20), pa.int64()), "name": [None if i % 7 == 0 else f"n{i}" for i in range(20)],
                 "score": [float(i) / 2 for i in range(20)]}, schema=schema)
t.append(data)
first = t.current_snapshot().snapshot_id
show("all", t.scan().to_arrow())
show("pandas rows", len(t.scan().to_pandas()))
for label, f in [("eq", EqualTo("id", 3)), ("ne", NotEqualTo("id", 3)), ("gt", GreaterThan("id", 15)),
                 ("ge", GreaterThanOrEqual("id", 15)), ("lt", LessThan("id", 2)), ("le", LessThanOrEqual("id", 2)),
                 ("in", In("id", {1, 2, 30})), ("notin", NotIn("id", {1, 2})), ("null", IsNull("name")),
                 ("notnull", NotNull("name")), ("sw", StartsWith("name", "n1")),
                 ("nsw", NotStartsWith("name", "n1")), ("and", And(GreaterThan("id", 3), LessThan("id", 6))),
                 ("or", Or(EqualTo("id", 1), EqualTo("id", 19))), ("not", Not(LessThan("id", 18))),
                 ("true", AlwaysTrue()), ("str", "id > 5 and name = 'n9' or id = 0")]:
    show(label, t.scan(row_filter=f, selected_fields=("id",)).to_arrow())
show("limit", t.scan(limit=5).to_arrow().num_rows)
show("count", t.scan(row_filter=GreaterThan("id", 4)).count())
show("chained", t.scan().filter(GreaterThan("id", 10)).filter(LessThan("id", 13)).select("id", "name").to_arrow())
show("files", len(t.scan().plan_files()))
tasks = list(t.scan().plan_files())
show("task files", sorted((task.file.record_count, task.file.file_path.endswith(".parquet"), len(task.delete_files))
                          for task in tasks))
show("batches", sum(b.num_rows for b in t.scan(selected_fields=("id",)).to_arrow_batch_reader()))
show("polars", t.scan(row_filter=LessThan("id", 3)).to_polars().shape)
con = t.scan().to_duckdb("people")
show("duckdb", con.execute("select count(*), sum(id) from people").fetchall())

t.delete(delete_filter=LessThan("id", 3))
show("after delete", t.scan(selected_fields=("id",)).to_arrow())
t.overwrite(pa.table({"id": pa.array([100], pa.int64()), "name": ["x"], "score": [1.0]}, schema=schema),
            overwrite_filter=GreaterThanOrEqual("id", 18))
show("after overwrite", t.scan(selected_fields=("id", "name")).to_arrow())
res = t.upsert(pa.table({"id": pa.array([3, 4, 200], pa.int64()), "name": ["n3", "changed", "new"],
                         "score": [1.5, 2.0, 0.0]}, schema=schema), join_cols=["id"])
show("upsert", (res.rows_updated, res.rows_inserted))
show("after upsert", t.scan(row_filter=In("id", {3, 4, 200})).to_arrow())
show("time travel", t.scan(snapshot_id=first).count())
show("snapshot by id", t.snapshot_by_id(first).snapshot_id == first)
show("history", len(t.history()) == len(t.snapshots()))
t.manage_snapshots().create_tag(first, "v1").commit()
show("tag", t.snapshot_by_name("v1").snapshot_id == first)
show("tag scan", t.scan().use_ref("v1").count())
show("schema", [f.name for f in t.schema().fields])
show("schemas", sorted(t.schemas()))
show("spec", len(t.spec().fields))
show("specs", sorted(t.specs()))
for name in ("snapshots", "refs", "history", "manifests", "files", "data_files", "delete_files", "entries",
             "partitions"):
    meta = getattr(t.inspect, name)()
    show(f"inspect {name} schema", [(f.name, str(f.type)) for f in meta.schema])
    if name != "delete_files":           # pyiceberg rewrites data files where we write delete files
        show(f"inspect {name} rows", meta.num_rows > 0)
# pyiceberg writes more snapshots per overwrite/upsert and rewrites where we write delete files: compare what
# both must agree on
show("inspect refs", sorted((r["name"], r["type"]) for r in t.inspect.refs().to_pylist()))
snap_rows = t.inspect.snapshots().to_pylist()
show("inspect snapshots", (len(snap_rows) == len(t.snapshots()), snap_rows[0]["operation"],
                           dict(snap_rows[0]["summary"])["added-records"]))
show("inspect history", len(t.inspect.history()) == len(t.history()))
show("inspect current ancestor", t.inspect.history().to_pylist()[-1]["is_current_ancestor"])
show("inspect first files", sorted(r["record_count"] for r in t.inspect.files(first).to_pylist()))
show("inspect first entries", [(r["status"], r["data_file"]["record_count"]) for r in t.inspect.entries(first).to_pylist()])
show("inspect first metrics", [r["readable_metrics"]["id"]["upper_bound"] for r in t.inspect.data_files(first).to_pylist()])
live = sum(r["record_count"] for r in t.inspect.data_files().to_pylist())
show("inspect live", live >= t.scan().count())
show("inspect partitions", sum(r["record_count"] for r in t.inspect.partitions().to_pylist()) == live)
t2 = catalog.load_table(f"{ns}.people")
show("reload", t2.scan().count() == t.scan().count())
show("refresh", t.refresh().current_snapshot().snapshot_id == t2.current_snapshot().snapshot_id)

# transactions: one metadata version for several operations
n_before = len(t.snapshots())
with t.transaction() as tx:
    tx.append(pa.table({"id": pa.array([300, 301], pa.int64()), "name": ["t1", "t2"], "score": [0.0, 0.0]},
                       schema=schema))
    tx.delete(delete_filter=EqualTo("id", 300))
    tx.set_properties(stage="tx", other="1")
    tx.remove_properties("other")
    with tx.update_schema() as u:
        u.add_column("level", IntegerType())
show("tx rows", t.scan(row_filter=GreaterThanOrEqual("id", 300), selected_fields=("id", "name")).to_arrow())
show("tx props", (t.properties.get("stage"), "other" in t.properties))
show("tx schema", [f.name for f in t.schema().fields])
show("tx snapshots", len(t.snapshots()) > n_before)
show("tx reload", catalog.load_table(f"{ns}.people").scan().count() == t.scan().count())
try:
    with t.transaction() as tx:
        tx.append(pa.table({"id": pa.array([400], pa.int64()), "name": ["x"], "score": [0.0], "level": [1]},
                           schema=t.schema().as_arrow() if hasattr(t.schema(), "as_arrow") else None))
        raise KeyError("stop")
except KeyError:
    pass
show("tx aborted", t.scan(row_filter=EqualTo("id", 400)).count())

# schema and spec evolution as context managers
with t.update_schema() as u:
    u.rename_column("level", "lvl")
    u.update_column("level", LongType())     # names refer to the schema the update started from
with t.update_schema() as u:
    u.delete_column("lvl")
show("evolved", [(f.name, f.required) for f in t.schema().fields])
with t.update_schema() as u:
    u.union_by_name(pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("note", pa.string())]))
show("union", [f.name for f in t.schema().fields])
with t.update_spec() as u:
    u.add_identity("name")
    u.add_field("id", BucketTransform(4), "id_b")
show("spec fields", [(f.name, str(f.transform)) for f in t.spec().fields])
with t.update_spec() as u:
    u.rename_field("id_b", "shard")
show("spec renamed", [f.name for f in t.spec().fields])
with t.update_spec() as u:
    u.remove_field("shard")
show("spec removed", [f.name for f in t.spec().fields])
t.append(pa.table({"id": pa.array([500], pa.int64()), "name": ["p"], "score": [1.0], "note": ["z"]},
                  schema=pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                                    pa.field("score", pa.float64()), pa.field("note", pa.string())])))
show("after evolution", t.scan(row_filter=EqualTo("id", 500), selected_fields=("id", "name", "note")).to_arrow())

# a table declared with pyiceberg's type, schema and partition classes
typed = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType()),
               NestedField(3, "ts", TimestamptzType()), NestedField(4, "amount", DecimalType(10, 2)),
               NestedField(5, "tags", ListType(6, StringType(), element_required=False)),
               NestedField(7, "attrs", MapType(8, StringType(), 9, IntegerType(), value_required=False)),
               NestedField(10, "loc", StructType(NestedField(11, "lat", DoubleType()),
                                                 NestedField(12, "lon", FloatType()))),
               NestedField(13, "ok", BooleanType()), NestedField(14, "day", DateType()),
               NestedField(15, "t", TimeType()), NestedField(16, "raw", BinaryType()),
               NestedField(17, "fx", FixedType(4)), NestedField(18, "u", UUIDType()),
               NestedField(19, "lts", TimestampType()), identifier_field_ids=[1])
spec = PartitionSpec(PartitionField(source_id=3, field_id=1000, transform=DayTransform(), name="ts_day"),
                     PartitionField(source_id=2, field_id=1001, transform=IdentityTransform(), name="name"))
tt = catalog.create_table(f"{ns}.typed", schema=typed, partition_spec=spec)
show("typed fields", [(f.name, f.required, f.doc) for f in tt.schema().fields])
kinds = [LongType, StringType, TimestamptzType, DecimalType, ListType, MapType, StructType, BooleanType, DateType,
         TimeType, BinaryType, FixedType, UUIDType, TimestampType]
show("typed types", [isinstance(f.field_type, k) for f, k in zip(tt.schema().fields, kinds)])
show("typed mismatch", [isinstance(f.field_type, k) for f, k in zip(tt.schema().fields, kinds[1:] + kinds[:1])])
show("typed identifier", list(tt.schema().identifier_field_ids))
show("typed spec", [(f.name, str(f.transform)) for f in tt.spec().fields])
import datetime
tt.append(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"],
                    "ts": pa.array([datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc),
                                    datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone.utc)],
                                   pa.timestamp("us", tz="UTC"))},
                   schema=pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                                     pa.field("ts", pa.timestamp("us", tz="UTC"))])))
show("typed rows", tt.scan(selected_fields=("id", "name")).to_arrow())
show("typed partitions", sorted(str(r["partition"]) for r in tt.inspect.partitions().to_pylist()))
catalog.rename_table(f"{ns}.people", f"{ns}.persons")
show("renamed", sorted(i[-1] for i in catalog.list_tables(ns)))
catalog.drop_table(f"{ns}.persons")
show("dropped", catalog.table_exists(f"{ns}.persons"))
for kw in ({"bogus": 1},):
    try:
        t.scan(**kw)
        show("unknown kw", "accepted")
    except TypeError:
        show("unknown kw", "TypeError")
print("\n".join(out))
