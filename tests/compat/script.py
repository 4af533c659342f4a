"""A user script written for pyiceberg 0.12. It is run twice by test_compat.py: once as is, once with its
imports pointed at paimon_engine (the ``LIB`` placeholder below); nothing else changes."""
import sys

import pyarrow as pa

from LIB.catalog import load_catalog
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
