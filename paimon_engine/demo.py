"""The quickstart tour behind ``paimon-engine demo``: shows what the engine can do, with timings."""

from __future__ import annotations

import time


def _step(title):
    print(f"\n== {title}")


def run(warehouse: str = "warehouse") -> int:
    import numpy as np
    import pyarrow as pa

    from . import _speedups, encoding
    from .batch import ColumnBatch
    from .types import parse_paimon_type

    print("paimon_engine quickstart")
    _step("kernels")
    for name, impl in _speedups.report().items():
        print(f"  {name:10s} {impl}")

    _step("varint codec (the .row block index encoding)")
    row_starts = np.cumsum(np.random.default_rng(1).integers(100, 200, size=100_000)).astype(np.int64)
    t0 = time.perf_counter()
    blob = encoding.encode_delta_varint(row_starts)
    back, _ = encoding.decode_delta_varint(blob, len(row_starts))
    dt = time.perf_counter() - t0
    assert np.array_equal(back, row_starts)
    print(f"  100,000 row starts -> {len(blob):,} bytes and back in {dt * 1000:.1f} ms")

    _step("types")
    t = parse_paimon_type("ROW<id BIGINT NOT NULL, tags MAP<STRING NOT NULL, INT>, ts TIMESTAMP(9)>")
    print(f"  {t.to_paimon_string()}")
    print(f"  as Arrow: {t.to_arrow()}")

    _step("column batches")
    table = pa.table({"id": pa.array(range(5), pa.int64()),
                      "name": pa.array(["a", None, "c", "d", "e"]),
                      "qty": pa.array([1, 2, None, 4, 5], pa.int32())})
    batch = ColumnBatch.from_arrow(table)
    print(f"  {batch}")
    print(batch.slice(1, 4).to_pandas().to_string(index=False))
    row_files(warehouse)
    tables(warehouse)
    scans(warehouse)
    row_table(warehouse)
    indexes()
    fory_rows()
    spark_read(warehouse)
    return 0


def fory_rows() -> None:
    """Apache Fory rows: a batch to rows and back in both layouts, a projection, and a row read in place."""
    import numpy as np
    import pyarrow as pa

    from .formats import fory

    _step("Fory rows (standard and compact layouts)")
    n = 1_000_000
    rng = np.random.default_rng(3)
    batch = pa.record_batch({
        "id": np.arange(n, dtype=np.int64),
        "price": rng.random(n) * 100,
        "name": pa.array([f"item-{i:07d}" for i in range(n)]),
        "qty": pa.array(rng.integers(0, 1000, n).astype(np.int32), mask=rng.random(n) < 0.1),
        "tags": pa.ListArray.from_arrays(np.arange(0, 3 * n + 1, 3, dtype=np.int32), rng.integers(0, 99, 3 * n)),
    })
    for layout in fory.LAYOUTS:
        t0 = time.perf_counter()
        buf, offsets = fory.encode_rows(batch, layout=layout)
        t1 = time.perf_counter()
        back = fory.decode_rows(buf, offsets, batch.schema, layout)
        t2 = time.perf_counter()
        assert back.equals(batch)
        print(f"  {layout:8s} {n:,} rows -> {len(buf) / 2**20:.1f} MiB in {(t1 - t0) * 1000:.0f} ms, "
              f"back to Arrow in {(t2 - t1) * 1000:.0f} ms")
    buf, offsets = fory.encode_rows(batch)
    t0 = time.perf_counter()
    prices = fory.decode_rows(buf, offsets, batch.schema, columns=["price"])
    print(f"  projection of 'price' from {n:,} rows: {(time.perf_counter() - t0) * 1000:.0f} ms "
          f"(sum {prices.column(0).to_numpy().sum():.0f})")
    view = fory.RowView(bytes(buf[offsets[42]:offsets[43]]), fory.ForySchema(batch.schema))
    print(f"  RowView of row 42: id={view.get_int64(0)} name={view['name']!r} tags={view['tags']}")


def tables(warehouse: str = "warehouse") -> None:
    """Iceberg-style tables: SQLite catalog, partitioned appends, merge-on-read deletes, time travel, and
    pyiceberg reading the same table when it is installed."""
    import datetime
    import os
    import shutil

    import pyarrow as pa

    from .expressions import col
    from .catalog.sql import SqlCatalog

    _step("tables (Iceberg metadata, SQLite catalog)")
    root = os.path.abspath(os.path.join(warehouse, "tables-demo"))
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    uri = f"sqlite:///{root}/catalog.db"
    cat = SqlCatalog("default", uri=uri, warehouse=root)
    cat.create_namespace("db")
    n = 100_000
    data = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "ts": pa.array([datetime.datetime(2024, 1, 1) + datetime.timedelta(minutes=7 * i) for i in range(n)],
                       pa.timestamp("us")),
        "qty": pa.array([i % 10 for i in range(n)], pa.int32()),
    })
    t = cat.create_table("db.orders", data.schema, [("ts", "month"), ("id", "bucket[4]")])
    t0 = time.perf_counter()
    t.append(data)
    print(f"  append {n:,} rows into {len(t.data_files())} files: {(time.perf_counter() - t0) * 1000:.0f} ms")
    t0 = time.perf_counter()
    t.delete(col("qty") == 3)
    s = t.current_snapshot().summary
    print(f"  delete qty = 3 (merge-on-read): {s['added-position-delete-files']} position-delete files, "
          f"{s['total-position-deletes']} rows, {(time.perf_counter() - t0) * 1000:.0f} ms")
    with t.update_schema() as u:
        from .types import STRING
        u.add_column("note", STRING())
    first = t.snapshots()[0].snapshot_id
    print(f"  rows now {t.to_arrow().num_rows:,}; at snapshot {first}: {t.to_arrow(snapshot_id=first).num_rows:,}")
    print(f"  snapshots: {[x.operation for x in t.snapshots()]}, schema: {t.schema().names}")
    try:
        from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog
    except ImportError:
        return
    pt = PyIcebergSqlCatalog("default", uri=uri, warehouse=f"file://{root}").load_table("db.orders")
    print(f"  pyiceberg reads the same table: {pt.scan().to_arrow().num_rows:,} rows")


def row_table(warehouse: str = "warehouse") -> None:
    """A partitioned table of 1M rows in ``.row`` files with bloom-filter and bitmap indexes: position and
    equality deletes, a point query answered by the indexes, a scan into pandas, time travel, and a summary."""
    import os

    import numpy as np
    import pyarrow as pa

    from .expressions import col
    from .catalog.sql import SqlCatalog

    _step("a .row table with file indexes (bloom filter on name, bitmap on k)")
    root = os.path.abspath(os.path.join(warehouse, "tables-demo"))
    os.makedirs(root, exist_ok=True)
    cat = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=root)
    if "db" not in [ns[0] if isinstance(ns, tuple) else ns for ns in cat.list_namespaces()]:
        cat.create_namespace("db")
    if cat.table_exists("db.events"):
        cat.drop_table("db.events")
    n = 1_000_000
    rng = np.random.default_rng(11)
    data = pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "k": pa.array(rng.integers(0, 100, n).astype(np.int32)),
        "name": pa.array([f"user-{i:07d}" for i in range(n)]),
        "amount": pa.array(rng.random(n) * 100),
    })
    props = {"write.format.default": "row", "write.delete.format.default": "row",
             "file-index.bloom-filter.columns": "name", "file-index.bloom-filter.items": "300000",
             "file-index.bitmap.columns": "k"}
    summary = []

    def step(what, fn):
        t0 = time.perf_counter()
        result = fn()
        summary.append((what, result, (time.perf_counter() - t0) * 1000))
        return result

    t = cat.create_table("db.events", data.schema, [("id", "bucket[4]")], properties=props)
    step("append 1,000,000 rows", lambda: (t.append(data), f"{len(t.data_files())} .row files + indexes")[1])
    first = t.current_snapshot().snapshot_id
    step("delete k = 3 (position deletes)",
         lambda: (t.delete(col("k") == 3), f"{t.current_snapshot().summary['total-position-deletes']} rows")[1])
    gone = rng.choice(n, 1000, replace=False)
    step("delete 1,000 ids (equality deletes)",
         lambda: (t.delete(col("id").isin(gone.tolist()), mode="equality", equality_columns=["id"]),
                  f"{t.current_snapshot().summary['total-equality-deletes']} keys")[1])
    target = f"user-{int(np.setdiff1d(np.arange(n), gone)[123_456]):07d}"

    def point():
        scan = t.scan(filter=col("name") == target)
        scan.plan_files()
        rows = scan.to_arrow().num_rows
        return f"{rows} row; {scan.files_skipped_by_index} of {len(t.data_files())} files skipped by the bloom filter"
    step(f"point query name = {target!r}", point)

    def bitmap():
        scan = t.scan(filter=col("k") == 42)
        tasks = scan.plan_files()
        picked = sum(len(x.selection) for x in tasks if x.selection is not None)
        return f"{scan.to_arrow().num_rows:,} rows; bitmap selected {picked:,} rows in {len(tasks)} files"
    step("k = 42 (bitmap index -> row selections)", bitmap)

    def pandas():
        frame = t.scan(filter=col("amount") > 99.0, columns=["id", "k", "amount"]).to_pandas()
        return f"{len(frame):,} rows, dtypes {', '.join(str(d) for d in frame.dtypes)}"
    step("scan amount > 99 into pandas", pandas)
    step("time travel to the first snapshot", lambda: f"{t.to_arrow(snapshot_id=first).num_rows:,} rows")
    step("current table", lambda: f"{t.scan().count():,} rows, snapshots {[s.operation for s in t.snapshots()]}")
    width = max(len(w) for w, _, _ in summary)
    print(f"  {'step':{width}s}  {'ms':>7s}  result")
    for what, result, ms in summary:
        print(f"  {what:{width}s}  {ms:7.0f}  {result}")


def scans(warehouse: str = "warehouse") -> None:
    """Scan planning with pruning and merge-on-read deletes applied, on the table ``tables()`` wrote."""
    import os

    from .expressions import col
    from .catalog.sql import SqlCatalog

    root = os.path.abspath(os.path.join(warehouse, "tables-demo"))
    if not os.path.exists(os.path.join(root, "catalog.db")):
        return
    _step("scans (pruned planning, deletes as keep-masks, Arrow/pandas/NumPy)")
    t = SqlCatalog("default", uri=f"sqlite:///{root}/catalog.db", warehouse=root).load_table("db.orders")
    t0 = time.perf_counter()
    all_tasks = t.scan().plan_files()
    plan_ms = (time.perf_counter() - t0) * 1000
    f = (col("ts") >= "2024-02-01") & (col("ts") < "2024-03-01") & (col("id") == 7000)
    tasks = t.scan(filter=f).plan_files()
    print(f"  plan: {len(all_tasks)} files in {plan_ms:.1f} ms; with a month + id filter: {len(tasks)} file(s), "
          f"{t.scan(filter=f).count()} row")
    t0 = time.perf_counter()
    tbl = t.scan(columns=["id", "qty", "_file", "_pos"]).to_arrow()
    print(f"  read {tbl.num_rows:,} rows (position deletes applied) in {(time.perf_counter() - t0) * 1000:.0f} ms; "
          f"count() from metadata and deletes: {t.scan().count():,}")
    arrays = t.scan(filter="qty > 7", columns=["id", "qty"]).to_numpy()
    print(f"  to_numpy with qty > 7: {len(arrays['id']):,} rows, dtype {arrays['id'].dtype}")


def row_files(warehouse: str = "warehouse") -> None:
    """Write a Paimon .row file, read it back, project, select and take rows."""
    import os

    import numpy as np
    import pyarrow as pa
    from pyroaring import BitMap

    from .formats.row import RowFileReader, RowFileWriter
    from .types import STRING, BigIntType, DoubleType, IntType, RowType

    _step("Paimon .row files")
    n = 200_000
    rng = np.random.default_rng(0)
    schema = RowType.of(("id", BigIntType()), ("price", DoubleType()), ("name", STRING()), ("qty", IntType()))
    table = pa.table({"id": np.arange(n, dtype=np.int64), "price": rng.random(n) * 100,
                      "name": pa.array([f"item-{i:07d}" for i in range(n)]),
                      "qty": pa.array(rng.integers(0, 50, n).astype(np.int32), mask=rng.random(n) < 0.1)})
    os.makedirs(warehouse, exist_ok=True)
    path = os.path.abspath(os.path.join(warehouse, "demo.row"))
    t0 = time.perf_counter()
    with RowFileWriter(path, schema) as w:
        w.write(table)
    md = w.metadata
    t1 = time.perf_counter()
    print(f"  wrote {md.row_count:,} rows in {md.block_count} blocks, {md.file_size:,} bytes, "
          f"in {(t1 - t0) * 1000:.1f} ms; qty nulls={md.null_counts[3]}, price in "
          f"[{md.lower_bounds[1]:.3f}, {md.upper_bounds[1]:.3f}]")
    r = RowFileReader(path, schema)
    t0 = time.perf_counter()
    back = r.to_arrow()
    t1 = time.perf_counter()
    assert back.column("id").equals(table.column("id")) and back.column("name").equals(table.column("name"))
    print(f"  read back to Arrow in {(t1 - t0) * 1000:.1f} ms")
    t0 = time.perf_counter()
    prices = r.to_arrow(columns=["price"])
    t1 = time.perf_counter()
    print(f"  projection of one column ({prices.num_rows:,} prices) in {(t1 - t0) * 1000:.1f} ms")
    sel = BitMap(range(1000, 1010))
    t0 = time.perf_counter()
    picked = r.read_all(columns=["id", "name"], selection=sel)
    t1 = time.perf_counter()
    print(f"  selection of {len(sel)} rows (one block decompressed) in {(t1 - t0) * 1000:.2f} ms")
    rows = rng.integers(0, n, 1000)
    t0 = time.perf_counter()
    taken = r.take(rows)
    t1 = time.perf_counter()
    assert taken.to_arrow().column(0).to_pylist() == rows.tolist()
    print(f"  take of 1,000 random rows in {(t1 - t0) * 1000:.1f} ms")
    t0 = time.perf_counter()
    one = r.get_row(123_456)
    t1 = time.perf_counter()
    print(f"  get_row(123456) = {one} in {(t1 - t0) * 1e6:.0f} us")
    print(picked.slice(0, 3).to_pandas().to_string(index=False))
def indexes() -> None:
    """File indexes (bitmap, BSI, bloom filter) answering a filter, and a deletion vector."""
    import numpy as np
    import pyarrow as pa

    from .batch import ColumnBatch
    from .expressions import col
    from .index import DeletionVector, FileIndexBuilder, FileIndexReader, evaluate_file_index

    _step("file indexes (bitmap v2, BSI, bloom filter) and deletion vectors")
    n = 1_000_000
    rng = np.random.default_rng(3)
    batch = ColumnBatch.from_arrow(pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                                             "k": pa.array(rng.integers(0, 10_000, n).astype(np.int32))}))
    t0 = time.perf_counter()
    b = FileIndexBuilder(batch.schema, {"file-index.bitmap.columns": "k", "file-index.bsi.columns": "id",
                                        "file-index.bloom-filter.columns": "id",
                                        "file-index.bloom-filter.id.items": str(n)})
    b.add(batch)
    blob = b.finish()
    build_ms = (time.perf_counter() - t0) * 1000
    reader = FileIndexReader(blob, schema=batch.schema)
    t0 = time.perf_counter()
    r = evaluate_file_index((col("k") == 42) & (col("id") < 500_000), reader)
    q_ms = (time.perf_counter() - t0) * 1000
    print(f"  indexes over {n:,} rows: {len(blob):,} bytes in {build_ms:.0f} ms; "
          f"k = 42 and id < 500000 -> {len(r.selection(n))} candidate rows in {q_ms:.1f} ms")
    dv = DeletionVector([1, 5, 7])
    print(f"  deletion vector {sorted(dv.bitmap)}: keep mask of rows 0..8 = {dv.keep_mask(0, 8).astype(int).tolist()}")
def spark_read(warehouse: str = "warehouse") -> None:
    """Read the demo table with Spark through the ``paimon_engine`` data source, when Java and pyspark exist."""
    import os
    import shutil
    import sys

    root = os.path.abspath(os.path.join(warehouse, "tables-demo"))
    if not os.path.exists(os.path.join(root, "catalog.db")):
        return
    _step("Spark (PySpark data source, planned once on the driver, read in the executors)")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        print("  skipped: no Java")
        return
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        print("  skipped: pyspark is not installed (pip install paimon_engine[spark])")
        return
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    t0 = time.perf_counter()
    spark = (SparkSession.builder.master("local[2]").appName("paimon_engine demo")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.sql.python.filterPushdown.enabled", "true").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    print(f"  local[2] session started in {time.perf_counter() - t0:.1f} s")
    try:
        def orders():
            return (spark.read.format("paimon_engine").option("catalog.uri", f"sqlite:///{root}/catalog.db")
                    .option("catalog.warehouse", root).load("db.orders"))
        t0 = time.perf_counter()
        n = orders().count()
        print(f"  count(): {n:,} rows in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        from .spark import read_table
        rows = (read_table(spark, "db.orders", row_filter="qty = 7 and id < 1000", uri=f"sqlite:///{root}/catalog.db",
                           warehouse=root).groupBy("qty").count().collect())
        print(f"  read_table(row_filter='qty = 7 and id < 1000') (the filter prunes the plan): "
              f"{rows[0]['count'] if rows else 0} rows in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        events = (spark.read.format("paimon_engine").option("catalog.uri", f"sqlite:///{root}/catalog.db")
                  .option("catalog.warehouse", root).load("db.events"))
        hits = events.filter("k = 42").count()
        print(f"  db.events (.row files, deletes applied) k = 42: {hits:,} rows in {time.perf_counter() - t0:.1f} s")
    finally:
        spark.stop()
