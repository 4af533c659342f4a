import datetime
import pickle

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_engine import types as T
from paimon_engine.errors import CorruptFileError, InvalidArgumentError, NotFoundError, SchemaError
from paimon_engine.expressions import col
from paimon_engine.scan.delete_index import DeleteFile, POSITION
from paimon_engine.scan.planner import TableScan
from paimon_engine.scan.reader import TaskReader, read_deletion_vector
from paimon_engine.catalog import FileSystemCatalog, SqlCatalog
from paimon_engine.spec.schema import Schema

from .builder import MiniTable, deletion_vector_blob


def rows(tbl, key="id"):
    return sorted(tbl.to_pylist(), key=lambda r: r[key])


def data(n=100, start=0):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "k": pa.array([i % 4 for i in range(start, start + n)], pa.int32()),
                     "s": [f"s{i:04d}" for i in range(start, start + n)]})


@pytest.fixture
def catalog(tmp_path):
    return FileSystemCatalog(str(tmp_path / "wh"))


def test_table_scan_after_merge_on_read_writes(catalog):
    t = catalog.create_table("db.t", data().schema)
    t.append(data(100))
    t.append(data(50, 100))
    t.delete("id < 10")                                   # position deletes
    t.delete("s = 's0120'", mode="equality", equality_columns=["s"])
    t.append(data(5, 200))
    t.delete("id >= 140 and id < 145")
    model = rows(pa.concat_tables([data(150), data(5, 200)]))
    want = [r for r in model if not (r["id"] < 10 or r["s"] == "s0120" or 140 <= r["id"] < 145)]
    got = rows(t.scan().to_arrow())
    assert got == want and len(got) == 150 - 10 - 1 + 5 - 5
    assert len(t.delete_files()) >= 3
    assert t.scan().count() == len(want)
    assert rows(t.scan(filter="k = 2 and id > 50").to_arrow()) == [r for r in want if r["k"] == 2 and r["id"] > 50]
    assert t.scan(filter=col("k") == 2).count() == sum(1 for r in want if r["k"] == 2)


def test_partition_and_metrics_pruning(catalog):
    t = catalog.create_table("db.t", data().schema, [("k", "identity")])
    for i in range(5):
        t.append(data(20, i * 20))
    assert len(t.scan().plan_files()) == 20
    assert len(t.scan(filter="k = 1").plan_files()) == 5          # partition pruning
    tasks = t.scan(filter="id >= 40 and id < 60").plan_files()     # metrics pruning
    assert len(tasks) == 4
    assert all(repr(x.residual) == "true" for x in tasks)          # bounds prove every row matches
    tasks = t.scan(filter="id >= 45 and id < 60").plan_files()
    assert len(tasks) == 4 and {repr(x.residual) for x in tasks} >= {"id >= 45"}
    assert t.scan(filter="id >= 45 and id < 60").count() == 15
    assert t.scan(filter="id > 1000").plan_files() == []
    assert t.scan(filter="k = 9").plan_files() == []


def test_bucket_truncate_and_day_partitions(tmp_path):
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    base = datetime.datetime(2024, 1, 1)
    tbl = pa.table({"id": pa.array(range(60), pa.int64()),
                    "ts": pa.array([base + datetime.timedelta(hours=7 * i) for i in range(60)], pa.timestamp("us")),
                    "s": [f"name{i % 7}" for i in range(60)]})
    t = cat.create_table("db.t", tbl.schema, [("id", "bucket[4]"), ("ts", "day"), ("s", "truncate[5]")])
    t.append(tbl)
    all_rows = rows(t.scan().to_arrow())
    assert all_rows == rows(tbl)
    for f, pred in [("id = 7", lambda r: r["id"] == 7),
                    ("id in (3, 30)", lambda r: r["id"] in (3, 30)),
                    ("ts >= '2024-01-05T00:00:00' and ts < '2024-01-06T00:00:00'",
                     lambda r: datetime.datetime(2024, 1, 5) <= r["ts"] < datetime.datetime(2024, 1, 6)),
                    ("ts < '2024-01-02T00:00:00'", lambda r: r["ts"] < datetime.datetime(2024, 1, 2)),
                    ("s like 'name3%'", lambda r: r["s"].startswith("name3"))]:
        scan = t.scan(filter=f)
        assert rows(scan.to_arrow()) == [r for r in all_rows if pred(r)], f
        assert len(scan.plan_files()) < len(t.scan().plan_files()), f


def test_projection_metadata_columns_and_schema_evolution(catalog):
    t = catalog.create_table("db.t", data().schema)
    t.append(data(10))
    t.update_schema().add_column("extra", T.BigIntType()).rename_column("s", "name").commit()
    t.append(pa.table({"id": pa.array([100], pa.int64()), "k": pa.array([1], pa.int32()),
                       "name": ["new"], "extra": pa.array([7], pa.int64())}))
    got = rows(t.scan(columns=["id", "name", "extra", "_file", "_pos"]).to_arrow())
    assert got[0]["name"] == "s0000" and got[0]["extra"] is None and got[0]["_pos"] == 0
    assert got[-1] == {"id": 100, "name": "new", "extra": 7, "_file": got[-1]["_file"], "_pos": 0}
    assert got[3]["_pos"] == 3 and got[3]["_file"].endswith(".parquet")
    assert t.scan(columns=["extra"]).to_arrow().column_names == ["extra"]
    with pytest.raises(SchemaError):
        t.scan(columns=["nope"])
    with pytest.raises(SchemaError):
        t.scan(filter="nope = 1")


def test_time_travel_refs_and_incremental(catalog):
    t = catalog.create_table("db.t", data().schema)
    t.append(data(10))
    s1 = t.current_snapshot()
    t.append(data(10, 10))
    s2 = t.current_snapshot()
    t.delete("id < 5")
    t.append(data(3, 20))
    s4 = t.current_snapshot()
    assert t.scan(snapshot_id=s1.snapshot_id).count() == 10
    assert t.scan(snapshot_id=s2.snapshot_id).count() == 20
    assert t.scan().count() == 18
    assert t.scan(as_of=s2.timestamp_ms).count() == 20
    t.create_tag("v1", s1.snapshot_id)
    assert rows(t.scan(ref="v1").to_arrow()) == rows(data(10))
    inc = t.scan().between(s1.snapshot_id, s4.snapshot_id)
    assert sorted(r["id"] for r in inc.to_arrow().to_pylist()) == list(range(10, 23))
    assert sorted(r["id"] for r in t.scan().between(None, s2.snapshot_id).to_arrow().to_pylist()) == list(range(20))
    with pytest.raises(NotFoundError):
        t.scan(snapshot_id=12345)
    with pytest.raises(InvalidArgumentError):
        t.scan(snapshot_id=s1.snapshot_id, ref="main")
    with pytest.raises(InvalidArgumentError):
        t.scan().between(s4.snapshot_id, s1.snapshot_id)


def test_outputs_batches_and_tasks(catalog):
    t = catalog.create_table("db.t", data().schema)
    t.append(data(1000))
    t.delete("id % 10 = 3") if False else t.delete(col("id").isin(list(range(3, 1000, 10))))
    scan = t.scan(filter="id < 500")
    ref = rows(scan.to_arrow())
    assert sum(b.num_rows for b in scan.to_batches(batch_size=64)) == len(ref)
    assert max(b.num_rows for b in scan.to_batches(batch_size=64)) <= 64
    df = scan.to_pandas()
    assert sorted(df["id"].tolist()) == [r["id"] for r in ref]
    arrays = scan.to_numpy()
    assert isinstance(arrays["id"], np.ndarray) and len(arrays["id"]) == len(ref)
    tasks = pickle.loads(pickle.dumps(scan.plan_files()))
    assert rows(scan.to_arrow(tasks=tasks)) == ref
    # splitting at row-group offsets and combining keeps the rows
    assert scan.plan_tasks(target_size=1 << 20)


def test_split_tasks_read_the_same_rows(tmp_path):
    schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "k", T.IntType()),
                               T.DataField(3, "s", T.STRING())]))
    mt = MiniTable(tmp_path, schema)
    (df,) = mt.append(data(1000))
    mt.commit([mt.write_position_deletes(df.file_path, [0, 60, 999])], operation="delete")
    scan = mt.scan(columns=["id", "_pos"])
    whole = rows(scan.to_arrow())
    from paimon_engine.scan.tasks import split_tasks
    parts = split_tasks(scan.plan_files(), target_size=2000)
    assert len(parts) > 1
    got = rows(scan.to_arrow(tasks=parts))
    assert got == whole and len(got) == 997
    assert all(r["id"] == r["_pos"] for r in got)
    batched = sorted(r["id"] for p in parts for b in scan._reader().read_task(p, 100) for r in b.to_pylist())
    assert batched == [r["id"] for r in whole]


@pytest.mark.parametrize("write", [
    {"row_group_size": 7, "column_encoding": {"pos": "DELTA_BINARY_PACKED"}, "use_dictionary": ["file_path"]},
    {"row_group_size": 1000, "use_dictionary": False},
    {"row_group_size": 5, "data_page_version": "2.0"},
])
def test_one_position_delete_file_for_several_data_files(tmp_path, write):
    """A position delete file naming several data files (and one the table does not hold), its paths in other
    dictionaries from row group to row group, or PLAIN, its positions delta-encoded or not: each data file loses
    exactly its own rows."""
    schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "k", T.IntType()),
                               T.DataField(3, "s", T.STRING())]))
    mt = MiniTable(tmp_path, schema)
    files = [mt.append(data(300, start=1000 * i))[0] for i in range(3)]
    gone = {files[0].file_path: [0, 5, 299], files[1].file_path: list(range(0, 300, 7)),
            files[2].file_path: [150], str(tmp_path / "elsewhere.parquet"): [1, 2]}
    pairs = sorted((p, q) for p, qs in gone.items() for q in qs)
    mt.commit([mt.write_position_delete_rows(pairs, **write)], operation="delete")
    want = [1000 * i + q for i, f in enumerate(files) for q in range(300) if q not in gone[f.file_path]]
    assert [r["id"] for r in rows(mt.scan().to_arrow())] == want
    assert [r["id"] for r in rows(mt.scan(columns=["id", "_pos"]).to_arrow())] == want


@pytest.mark.parametrize("fmt", ["parquet", "row"])
def test_file_scoped_position_deletes_read_pos_alone(tmp_path, fmt, monkeypatch):
    """A position delete file whose manifest entry names its referenced_data_file deletes from that file only
    (the spec's meaning): its pos column alone is read, file_path is not."""
    from paimon_engine.scan import reader as R
    schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "k", T.IntType()),
                               T.DataField(3, "s", T.STRING())]))
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema, properties={"format-version": "2", "write.format.default": fmt})
    t.append(data(300))
    t.delete(col("id").isin([0, 7, 299]))
    reads = []
    real = R._ParquetFile.read if fmt == "parquet" else R._RowFile.read

    def spy(self, names, *a, **kw):
        reads.append((self.path, list(names)))
        return real(self, names, *a, **kw)
    monkeypatch.setattr(R._ParquetFile if fmt == "parquet" else R._RowFile, "read", spy)
    got = [r["id"] for r in rows(t.scan().to_arrow())]
    assert got == [i for i in range(300) if i not in (0, 7, 299)]
    deletes = [names for path, names in reads if "delete" in path]
    assert deletes == [["pos"]], reads


def test_deletion_vectors(tmp_path):
    schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "k", T.IntType()),
                               T.DataField(3, "s", T.STRING())]))
    mt = MiniTable(tmp_path, schema)
    (df,) = mt.append(data(50))
    blob = deletion_vector_blob([1, 2, 40])
    puffin = tmp_path / "dv.puffin"
    puffin.write_bytes(b"PFA1" + blob + b"footer")
    assert read_deletion_vector(blob).tolist() == [1, 2, 40]
    scan = mt.scan()
    (task,) = scan.plan_files()
    task.deletes = [DeleteFile(str(puffin), POSITION, "puffin", 5, 0, (), 3, 100, df.file_path, (), 4, len(blob))]
    got = [r["id"] for r in scan.to_arrow(tasks=[task]).to_pylist()]
    assert got == [i for i in range(50) if i not in (1, 2, 40)]
    # malformed blobs and ranges
    for bad in (blob[:-1], blob[:4] + b"XXXX" + blob[8:], blob[:-4] + b"\0\0\0\0", b"\0" * 5,
                blob[:8] + b"\xff" * 8 + blob[16:]):
        with pytest.raises(CorruptFileError):
            read_deletion_vector(bad, "x")
    task.deletes[0].content_offset = 10_000
    with pytest.raises(CorruptFileError, match="outside"):
        scan.to_arrow(tasks=[task])


def test_corrupt_and_missing_files(tmp_path):
    schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "k", T.IntType()),
                               T.DataField(3, "s", T.STRING())]))
    mt = MiniTable(tmp_path, schema)
    (df,) = mt.append(data(50))
    d = mt.write_position_deletes(df.file_path, [3])
    mt.commit([d], operation="delete")
    raw = open(d.file_path, "rb").read()
    open(d.file_path, "wb").write(raw[: len(raw) // 2])
    with pytest.raises(CorruptFileError) as ei:
        mt.scan().to_arrow()
    assert d.file_path in str(ei.value)
    open(df.file_path, "wb").write(b"PAR1garbage")
    with pytest.raises(CorruptFileError):
        mt.scan().to_arrow()
    import os
    os.remove(df.file_path)
    with pytest.raises(NotFoundError):
        mt.scan().to_arrow()


def test_pyiceberg_written_tables_read_identically(tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog as PyCatalog
    pc = PyCatalog("default", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=f"file://{tmp_path}/wh")
    pc.create_namespace("db")
    pt = pc.create_table("db.t", schema=data().schema)
    pt.append(data(100))
    pt.delete("id < 10")                       # copy-on-write
    pt.append(data(5, 300))
    with pt.update_schema() as u:
        u.add_column("extra", __import__("pyiceberg.types", fromlist=["LongType"]).LongType())
    pt = pc.load_table("db.t")
    pt.append(pa.table({"id": pa.array([500], pa.int64()), "k": pa.array([2], pa.int32()), "s": ["x"],
                        "extra": pa.array([9], pa.int64())}))
    ours = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=str(tmp_path / "wh")).load_table("db.t")
    pt = pc.load_table("db.t")
    assert rows(ours.scan().to_arrow()) == rows(pt.scan().to_arrow())
    assert rows(ours.scan(filter="k = 2 and id > 50").to_arrow()) == \
        rows(pt.scan(row_filter="k == 2 and id > 50").to_arrow())
    for snap in pt.metadata.snapshots:
        assert ours.scan(snapshot_id=snap.snapshot_id).count() == len(pt.scan(snapshot_id=snap.snapshot_id).to_arrow())
    # merge-on-read deletes written here are read the same by pyiceberg
    ours.delete("k = 1")
    ours.delete("id = 40")
    pt = pc.load_table("db.t")
    assert rows(ours.scan().to_arrow()) == rows(pt.scan().to_arrow())
    assert len(ours.delete_files()) >= 2


def test_equality_deletes_on_dropped_and_promoted_columns(tmp_path):
    schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "k", T.IntType()),
                               T.DataField(3, "s", T.STRING())]))
    mt = MiniTable(tmp_path, schema)
    mt.append(data(20))
    mt.commit([mt.write_equality_deletes([2], [(1,), (None,)])], operation="delete")
    mt.commit([mt.write_equality_deletes([3], [("s0004",)])], operation="delete")
    want = [r["id"] for r in rows(data(20)) if r["k"] != 1 and r["s"] != "s0004"]
    assert [r["id"] for r in rows(mt.scan().to_arrow())] == want
    # promote k to long, then drop k and s: the deletes still apply by field id
    mt.set_schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "k", T.BigIntType()),
                             T.DataField(3, "s", T.STRING())]))
    assert [r["id"] for r in rows(mt.scan().to_arrow())] == want
    mt.set_schema(T.RowType([T.DataField(1, "id", T.BigIntType())]))
    got = mt.scan().to_arrow()
    assert got.column_names == ["id"] and sorted(got.column("id").to_pylist()) == want
    assert mt.scan().count() == len(want)


def test_scan_package_exports():
    import paimon_engine.scan as scan_pkg
    assert scan_pkg.TableScan is TableScan
    with pytest.raises(AttributeError):
        scan_pkg.nope


def test_tags_read_with_their_schema_branches_with_the_current_one(catalog):
    t = catalog.create_table("db.t", data().schema)
    t.append(data(5))
    s1 = t.current_snapshot().snapshot_id
    t.create_tag("old", s1)
    t.create_branch("b1", s1)
    t.update_schema().add_column("extra", T.BigIntType()).commit()
    assert t.scan(ref="old").to_arrow().column_names == ["id", "k", "s"]
    assert t.scan(ref="b1").to_arrow().column_names == ["id", "k", "s", "extra"]
    with pytest.raises(NotFoundError):
        t.scan(ref="missing")


def test_bad_delete_file_contents(tmp_path):
    schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "k", T.IntType()),
                               T.DataField(3, "s", T.STRING())]))
    mt = MiniTable(tmp_path, schema)
    (df,) = mt.append(data(30))
    # positions outside the file (and negative ones) delete nothing; duplicates count once
    d = mt.write_position_deletes(df.file_path, [-5, 2, 2, 29, 30, 10**12])
    mt.commit([d], operation="delete")
    assert sorted(r["id"] for r in mt.scan().to_arrow().to_pylist()) == [i for i in range(30) if i not in (2, 29)]
    assert mt.scan().count() == 28
    # a position delete file without file_path/pos columns
    pq.write_table(pa.table({"x": [1]}), d.file_path)
    with pytest.raises(CorruptFileError, match="file_path"):
        mt.scan().to_arrow()
    # null positions
    pq.write_table(pa.table({"file_path": [df.file_path, df.file_path], "pos": pa.array([1, None], pa.int64())}),
                   d.file_path)
    with pytest.raises(CorruptFileError, match="null"):
        mt.scan().to_arrow()


def test_tasks_with_residuals_and_deletes_pickle_and_read_in_another_reader(catalog):
    t = catalog.create_table("db.t", data().schema)
    t.append(data(100))
    t.delete("id < 5")
    scan = t.scan(filter="id >= 3 and s != 's0050'", columns=["id"])
    tasks = scan.plan_files()
    assert any(repr(x.residual) != "true" for x in tasks) and any(x.deletes for x in tasks)
    shipped = pickle.loads(pickle.dumps(tasks))
    reader = TaskReader(t.io, scan.row_type, scan.projected, (), scan._all_fields)
    got = sorted(r["id"] for x in shipped for b in reader.read_task(x) for r in b.to_pylist())
    assert got == [i for i in range(5, 100) if i != 50]
    remote = pickle.loads(pickle.dumps(scan.task_reader()))
    got = sorted(r["id"] for x in shipped for b in remote.read_task(x) for r in b.to_pylist())
    assert got == [i for i in range(5, 100) if i != 50]


def test_row_group_pruning_inside_files_keeps_positions(tmp_path):
    schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "k", T.IntType()),
                               T.DataField(3, "s", T.STRING())]))
    mt = MiniTable(tmp_path, schema)
    (df,) = mt.append(data(1000))           # row groups of 50 rows
    mt.commit([mt.write_position_deletes(df.file_path, [0, 120, 121, 730, 999])], operation="delete")
    scan = mt.scan(filter="(id >= 110 and id < 130) or (id >= 720 and id < 740) or s = 's0999'",
                   columns=["id", "_pos"])
    (task,) = scan.plan_files()
    assert repr(task.residual) != "true"
    reader = scan.task_reader()
    from paimon_engine.scan.reader import _ParquetFile
    pf = _ParquetFile(mt.io, df.file_path)
    assert pf.pf.metadata.num_row_groups == 20
    may = [reader._row_group_may_match(pf, i, task.residual) for i in range(20)]
    assert may.count(True) == 3 and may[2] and may[14] and may[19]
    want = [i for i in list(range(110, 130)) + list(range(720, 740)) if i not in (120, 121, 730)]
    got = rows(scan.to_arrow())
    assert [r["id"] for r in got] == want and all(r["id"] == r["_pos"] for r in got)
    assert sorted(r["id"] for b in scan.to_batches(batch_size=7) for r in b.to_pylist()) == want
    assert scan.count() == len(want)


def test_bad_bounds_in_a_manifest_name_the_manifest(tmp_path):
    schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "k", T.IntType()),
                               T.DataField(3, "s", T.STRING())]))
    mt = MiniTable(tmp_path, schema)
    df = mt.write_data_file(data(10))
    df.lower_bounds[1] = b"\x01\x02\x03"       # 3 bytes cannot be a long
    mt.commit([df])
    assert mt.scan().count() == 10               # no filter: bounds are not even decoded
    with pytest.raises(CorruptFileError, match="bad column bounds") as ei:
        mt.scan(filter="id > 3").plan_files()
    assert ".avro" in str(ei.value)


def test_row_format_tables(catalog):
    t = catalog.create_table("db.rows", data().schema, properties={"write.format.default": "row"})
    t.append(data(300))
    assert {d.data_file.file_format for d in t.data_files()} == {"ROW"}
    t.delete("id >= 10 and id < 20")                                   # position deletes (row files)
    t.delete("s = 's0250'", mode="equality", equality_columns=["s"])   # equality deletes (row files)
    want = [r for r in rows(data(300)) if not (10 <= r["id"] < 20 or r["s"] == "s0250")]
    assert {d.data_file.file_format for d in t.delete_files()} == {"ROW"}
    assert rows(t.scan().to_arrow()) == want
    got = rows(t.scan(columns=["id", "_pos"], filter="id < 40").to_arrow())
    assert [r["id"] for r in got] == [r["id"] for r in want if r["id"] < 40]
    assert all(r["id"] == r["_pos"] for r in got)
    assert t.scan().count() == len(want)
    assert sum(b.num_rows for b in t.scan().to_batches(batch_size=64)) == len(want)
    assert rows(t.scan().to_arrow()) == rows(t.to_arrow())            # the table layer's reference reader


def test_late_materialization_reads_other_columns_only_where_the_filter_passes(tmp_path, monkeypatch):
    """A residual on a column whose row-group statistics cannot prune (a double): its column is read first, and
    the other columns only for the rows that pass (with the deletes folded in). The rows are those of the plain
    path (full read, then the filter), with deletes, projections, nulls and strings."""
    from paimon_engine.scan import reader as rmod
    schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "v", T.DoubleType()),
                               T.DataField(3, "s", T.STRING()), T.DataField(4, "w", T.IntType())]))
    mt = MiniTable(tmp_path, schema)
    n = 1000
    tbl = pa.table({"id": pa.array(range(n), pa.int64()),
                    "v": pa.array([None if i % 7 == 0 else i * 0.5 for i in range(n)], pa.float64()),
                    "s": pa.array([None if i % 11 == 0 else f"s{i % 13}" for i in range(n)]),
                    "w": pa.array([i % 5 for i in range(n)], pa.int32())})
    (df,) = mt.append(tbl)                  # row groups of 50 rows
    mt.commit([mt.write_position_deletes(df.file_path, [0, 201, 202, 215, 730, 999])], operation="delete")
    deleted = {0, 201, 202, 215, 730, 999}
    reads = []
    orig = rmod._ParquetFile.read

    def spy(self, names, row_groups=None, dict_names=(), selection=None):
        if self.path == df.file_path:         # the data file (not the position-delete file)
            reads.append((tuple(names), None if row_groups is None else tuple(row_groups), selection))
        return orig(self, names, row_groups, dict_names, selection)
    monkeypatch.setattr(rmod._ParquetFile, "read", spy)
    cases = [
        ("v >= 100.0 and v < 110.0", None, lambda r: r["v"] is not None and 100 <= r["v"] < 110),
        ("v >= 100.0 and v < 110.0 or v > 496.0", ["id", "s"],
         lambda r: r["v"] is not None and (100 <= r["v"] < 110 or r["v"] > 496)),
        ("v < 5.0 and s = 's3'", ["s", "id"], lambda r: r["v"] is not None and r["v"] < 5 and r["s"] == "s3"),
        ("v is null and w = 2", ["id", "w"], lambda r: r["v"] is None and r["w"] == 2),
        ("v > 1000.0", ["id"], lambda r: False),
    ]
    full = [r for r in tbl.to_pylist() if r["id"] not in deleted]
    for expr, columns, pred in cases:
        reads.clear()
        scan = mt.scan(filter=expr, columns=columns) if columns else mt.scan(filter=expr)
        got = rows(scan.to_arrow())
        keep = columns or ["id", "v", "s", "w"]
        want = sorted(({c: r[c] for c in keep} for r in full if pred(r)), key=lambda r: r["id"])
        assert got == want, expr
        passing = {r["id"] for r in full if pred(r)}
        others = [(rg, sel) for names, rg, sel in reads if set(names) - {"v", "s", "w"}]
        assert all(sel is not None for _, sel in others), expr
        # the other columns are decoded for the passing rows only (row groups of 50 rows)
        decoded = {int(x) + (rg[0] * 50 if rg else 0) for rg, sel in others for x in sel}
        assert decoded == passing, (expr, sorted(decoded)[:10], sorted(passing)[:10])
        if expr == "v >= 100.0 and v < 110.0":
            assert decoded and decoded <= set(range(200, 220))    # one row group of the 20
        # the batch path (no late materialization) agrees
        assert sorted((r for b in scan.to_batches(batch_size=64) for r in b.to_pylist()),
                      key=lambda r: r["id"]) == want



@pytest.mark.parametrize("filt,pred", [
    ("k = 3", lambda k, i: k == 3), ("k > 5", lambda k, i: k is not None and k > 5),
    ("k in (1, 2)", lambda k, i: k in (1, 2)), ("k = 3 or k = 7", lambda k, i: k in (3, 7)),
    ("k = 3 and id >= 40", lambda k, i: k == 3 and i >= 40), ("k is null", lambda k, i: k is None),
    ("k != 3", lambda k, i: k is not None and k != 3), ("not (k < 8)", lambda k, i: k is not None and k >= 8),
    ("id < 25", lambda k, i: i < 25)])
def test_pruning_memos_give_the_files_a_full_evaluation_gives(catalog, filt, pred):
    # manifests repeat partition summaries (one k per commit) and entries repeat partition tuples: the planner
    # remembers answers per distinct summary and tuple; the kept files must be exactly the matching ones
    sch = pa.schema([("id", pa.int64()), ("k", pa.int32())])
    t = catalog.create_table("db.memo", sch, [("k", "identity"), ("id", "bucket[3]")])
    for i in range(24):
        ks = [None, None] if i == 23 else ([i % 10] * 2 if i < 12 else [i % 10, (i + 1) % 10])
        t.append(pa.table({"id": pa.array([2 * i, 2 * i + 1], pa.int64()), "k": pa.array(ks, pa.int32())}))
    reader = t.scan().task_reader()
    by_file = {task.path: pa.Table.from_batches(list(reader.read_task(task))).to_pylist()
               for task in t.scan().plan_files()}
    needed = sorted(p for p, rs in by_file.items() if any(pred(r["k"], r["id"]) for r in rs))
    got = sorted(task.path for task in t.scan(filter=filt).plan_files())
    assert got == sorted(task.path for task in t.scan(filter=filt).plan_files())
    assert set(needed) <= set(got)
    if "id" not in filt:          # identity on k decides these exactly
        assert got == needed
    want = sorted(r["id"] for rs in by_file.values() for r in rs if pred(r["k"], r["id"]))
    assert sorted(t.scan(filter=filt).to_arrow().column("id").to_pylist()) == want


def test_deletes_decoded_into_kept_rows_match_the_model(catalog, monkeypatch):
    """Position deletes (alone, then with equality deletes and a filter) are applied while the Parquet pages are
    decoded (keep flags, with the equality keys read first); rows, `_pos` and nulls are those of the model."""
    from paimon_engine.scan import parquet_columns as PC
    n = 4000
    rng = np.random.default_rng(3)
    v = rng.random(n)
    nulls = rng.random(n) < 0.1
    t = catalog.create_table("db.kept", pa.schema([("id", pa.int64()), ("k", pa.int32()), ("v", pa.float64()),
                                                   ("s", pa.string())]))
    src = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                    "k": pa.array((np.arange(n) % 7).astype(np.int32)),
                    "v": pa.array(v, mask=nulls), "s": pa.array([f"s{i % 50}" for i in range(n)])})
    t.append(src.slice(0, n // 2))
    t.append(src.slice(n // 2))
    model = {r["id"]: r for r in src.to_pylist()}
    gone = set(rng.choice(n, 200, replace=False).tolist())
    t.delete(col("id").isin(sorted(gone)))
    flags = []
    real = PC.read_column_chunk

    def spy(*a, **kw):
        flags.append((a[6] if len(a) > 6 else kw.get("keep")) is not None)
        return real(*a, **kw)
    monkeypatch.setattr(PC, "read_column_chunk", spy)

    def check(scan, keep=lambda r: True):
        got = rows(scan.to_arrow())
        want = [r for i, r in sorted(model.items()) if i not in gone and keep(r)]
        assert [{c: r[c] for c in ("id", "k", "v", "s")} for r in got] == want
        if got and "_pos" in got[0]:
            assert all(r["_pos"] == r["id"] % (n // 2) for r in got)
    check(t.scan(columns=["id", "k", "v", "s", "_pos"]))
    assert flags.count(True) == 8           # 2 data files x 4 columns (the delete files are read whole)
    del flags[:]
    eq = set(rng.choice(n, 150, replace=False).tolist())
    t.delete(col("id").isin(sorted(eq)), mode="equality", equality_columns=["id"])
    t.delete("s = 's7'", mode="equality", equality_columns=["s"])
    gone |= eq | {i for i in range(n) if i % 50 == 7}
    check(t.scan(columns=["id", "k", "v", "s", "_pos"]))
    assert any(flags)
    check(t.scan(filter="k < 6"), lambda r: r["k"] < 6)
    check(t.scan(filter="k = 3"), lambda r: r["k"] == 3)            # few rows pass: taken, not flagged
    check(t.scan(columns=["id", "k", "v", "s"], filter=col("v") > 0.5),
          lambda r: r["v"] is not None and r["v"] > 0.5)


def test_a_first_read_in_a_process_does_not_import_pandas(tmp_path):
    # pyarrow converts Python values through its pandas shim, which imports pandas on its first use (a fifth of
    # a second), and pyarrow.compute takes about 40 ms to import: reads with deletes or with filters on number
    # columns need neither and do not load them. Each case reads in a fresh interpreter and checks its rows.
    import subprocess
    import sys
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    for name in ("plain", "posdel", "eqdel"):
        t = cat.create_table(f"db.{name}", data().schema)
        t.append(data(100))
        t.append(data(100, 100))
    cat.load_table("db.posdel").delete("id < 10")
    cat.load_table("db.eqdel").delete("id < 10", mode="equality", equality_columns=["id"])
    cases = [("plain", None, 200), ("posdel", None, 190), ("eqdel", None, 190), ("plain", "k < 1", 50),
             ("plain", "id < 20", 20), ("plain", "id >= 20 and k != 3", 135)]
    for name, flt, count in cases:
        code = (f"import sys\n"
                f"from paimon_engine.catalog import FileSystemCatalog\n"
                f"t = FileSystemCatalog({str(tmp_path / 'wh')!r}).load_table('db.{name}')\n"
                f"out = t.scan(filter={flt!r}).to_arrow()\n"
                f"ids = sorted(out.column('id').to_pylist())\n"
                f"print(len(ids), ids[0], 'pandas' in sys.modules, 'pyarrow.compute' in sys.modules)\n")
        got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
        first = {"posdel": 10, "eqdel": 10}.get(name, 0) if not flt or flt.startswith("id") else 0
        if flt and flt.startswith("id >="):
            first = 20
        assert got == [str(count), str(first), "False", "False"], (name, flt, got)


@pytest.mark.parametrize("column", [
    pa.array(range(-10, 30), pa.int64()).slice(3, 30),
    pa.array(range(40), pa.int8()),
    pa.array([i * 0.5 for i in range(40)], pa.float32()).slice(1),
    pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=i) for i in range(40)]),
    pa.array(range(40), pa.timestamp("us")),
    pa.array([None if i % 7 == 0 else i for i in range(40)], pa.int32()),
    pa.array([f"s{i}" for i in range(40)]),
    pa.chunked_array([pa.array(range(20), pa.uint16()), pa.array(range(20, 40), pa.uint16())]),
    pa.array([i % 2 == 0 for i in range(40)]),
])
def test_late_materialization_takes_the_rows_arrow_takes(column):
    from paimon_engine.scan.reader import _take
    n = len(column)
    for rows in (np.array([], np.int64), np.array([0], np.int64), np.arange(0, n, 3, dtype=np.int64),
                 np.array([n - 1], np.int64)):
        got = _take(column, rows)
        want = (column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column).take(pa.array(rows))
        assert got.type == want.type and got.equals(want)
    if not column.null_count and pa.types.is_primitive(column.type) and not pa.types.is_boolean(column.type):
        with pytest.raises(IndexError):
            _take(column, np.array([0, n], np.int64))


def test_a_filter_on_a_dictionary_encoded_string_column_is_evaluated_per_dictionary_value(tmp_path, monkeypatch):
    """A residual reading one string column whose pages are all dictionary-encoded is evaluated once per
    dictionary value (each row group has its own dictionary) and looked up per row by index: the rows are those
    of the row-by-row evaluation, with nulls, NOT, IN, LIKE, ranges and position deletes. Residuals reading
    two columns, a column that is also an equality-delete key and a column whose pages fall back to PLAIN take
    the row-by-row evaluation, with the same rows."""
    from paimon_engine.scan import reader as rmod
    schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "s", T.STRING()),
                               T.DataField(3, "w", T.IntType())]))
    mt = MiniTable(tmp_path, schema)
    n = 1000
    tbl = pa.table({"id": pa.array(range(n), pa.int64()),
                    "s": pa.array([None if i % 11 == 0 else f"s{i % 13}" for i in range(n)]),
                    "w": pa.array([i % 5 for i in range(n)], pa.int32())})
    (df,) = mt.append(tbl)                  # row groups of 50 rows, each with its dictionary
    deleted = {0, 3, 201, 202, 215, 730, 999}
    mt.commit([mt.write_position_deletes(df.file_path, sorted(deleted))], operation="delete")
    full = [r for r in tbl.to_pylist() if r["id"] not in deleted]
    calls = []
    real = rmod.dictionary_mask

    def spy(*a, **kw):
        calls.append(a[1])
        return real(*a, **kw)
    monkeypatch.setattr(rmod, "dictionary_mask", spy)
    row_by_row = rmod.TaskReader._dictionary_filter

    def read(expr, columns, per_value=True):
        monkeypatch.setattr(rmod.TaskReader, "_dictionary_filter", row_by_row if per_value else
                            (lambda *a: frozenset()))
        return rows(mt.scan(filter=expr, columns=columns).to_arrow())

    s = lambda r: r["s"]   # noqa: E731
    cases = [
        ("s = 's3'", lambda r: s(r) == "s3"),
        ("s <> 's3'", lambda r: s(r) is not None and s(r) != "s3"),
        ("s in ('s1', 's12', 'zz')", lambda r: s(r) in ("s1", "s12")),
        ("s not in ('s1', 's2')", lambda r: s(r) is not None and s(r) not in ("s1", "s2")),
        ("s is null", lambda r: s(r) is None),
        ("s is not null", lambda r: s(r) is not None),
        ("not (s = 's4' or s = 's5')", lambda r: s(r) is not None and s(r) not in ("s4", "s5")),
        ("s < 's2'", lambda r: s(r) is not None and s(r) < "s2"),
        ("s like 's1%'", lambda r: s(r) is not None and s(r).startswith("s1")),
        ("s = 's3' or s is null", lambda r: s(r) in ("s3", None)),
        ("s = 'none of them'", lambda r: False),
    ]
    for expr, pred in cases:
        for columns in (["id", "w"], ["id", "s", "w"]):
            calls.clear()
            got = read(expr, columns)
            want = [{c: r[c] for c in columns} for r in full if pred(r)]
            assert got == want, (expr, columns)
            if want:                                      # (else the statistics may prune every row group)
                assert calls and set(calls) == {"s"}, expr    # evaluated per dictionary value
            assert read(expr, columns, per_value=False) == got, expr
    # two columns in the residual: row by row
    calls.clear()
    assert read("s = 's3' and w = 2", ["id"]) == [{"id": r["id"]} for r in full if r["s"] == "s3" and r["w"] == 2]
    assert not calls
    # an equality-delete key: row by row, the deleted keys gone
    mt.commit([mt.write_equality_deletes([2], [("s7",)])], operation="delete")
    calls.clear()
    assert read("s in ('s7', 's8')", ["id", "s"]) == [{"id": r["id"], "s": r["s"]} for r in full if r["s"] == "s8"]
    assert not calls


def test_a_filter_on_a_dictionary_encoded_binary_column_is_evaluated_per_dictionary_value(tmp_path, monkeypatch):
    """A binary column whose pages are all dictionary-encoded takes the per-value path too, and its kept rows'
    values are made plain like a string column's (not gathered as fixed-width values), nulls included."""
    from paimon_engine.expressions import col
    from paimon_engine.scan import reader as rmod
    schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "b", T.BYTES())]))
    mt = MiniTable(tmp_path, schema)
    n = 1000
    tbl = pa.table({"id": pa.array(range(n), pa.int64()),
                    "b": pa.array([None if i % 11 == 0 else b"v%d" % (i % 13) for i in range(n)], pa.binary())})
    mt.append(tbl)
    calls = []
    real = rmod.dictionary_mask
    monkeypatch.setattr(rmod, "dictionary_mask", lambda *a, **kw: calls.append(a[1]) or real(*a, **kw))
    full = tbl.to_pylist()
    cases = [(col("b") == b"v3", lambda v: v == b"v3"),
             (col("b").isin([b"v1", b"v12", b"zz"]), lambda v: v in (b"v1", b"v12")),
             (col("b").is_null() | (col("b") == b"v5"), lambda v: v in (None, b"v5"))]
    for expr, pred in cases:
        for columns in (["id"], ["id", "b"]):
            calls.clear()
            got = rows(mt.scan(filter=expr, columns=columns).to_arrow())
            assert got == [{c: r[c] for c in columns} for r in full if pred(r["b"])], (expr, columns)
            assert calls and set(calls) == {"b"}


def test_a_string_column_whose_pages_fall_back_to_plain_is_filtered_row_by_row(tmp_path, monkeypatch):
    """A string column whose dictionary grows past the writer's limit (its later pages PLAIN) is read as values
    and the filter evaluated on every row; a second file of the same table, all dictionary-encoded, is
    evaluated per dictionary value. Both give the rows of the filter."""
    from paimon_engine.scan import reader as rmod
    from paimon_engine.scan.parquet_pages import all_data_pages_dictionary_encoded
    schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType()), T.DataField(2, "s", T.STRING())]))
    mt = MiniTable(tmp_path, schema)
    calls = []
    real = rmod.dictionary_mask
    monkeypatch.setattr(rmod, "dictionary_mask", lambda *a, **kw: calls.append(a[1]) or real(*a, **kw))
    write = pq.write_table
    monkeypatch.setattr(pq, "write_table", lambda *a, **kw: write(*a, **dict(kw, dictionary_pagesize_limit=128,
                                                                            write_batch_size=10)))
    plain = pa.table({"id": pa.array(range(300), pa.int64()), "s": [f"value-{i * 7919 % 300:05d}" for i in range(300)]})
    (df,) = mt.append(plain)
    md = pq.ParquetFile(df.file_path).metadata
    with open(df.file_path, "rb") as f:
        raw = f.read()
    read_at = lambda size, at: raw[at:at + size]   # noqa: E731
    for g in range(md.num_row_groups):                               # the fallback happened in every row group
        c = md.row_group(g).column(1)
        assert not all_data_pages_dictionary_encoded(read_at, c.dictionary_page_offset,
                                                     c.dictionary_page_offset + c.total_compressed_size)
    got = rows(mt.scan(filter="s < 'value-00050'", columns=["id"]).to_arrow())
    assert got == [{"id": r["id"]} for r in plain.to_pylist() if r["s"] < "value-00050"]
    assert not calls
    monkeypatch.setattr(pq, "write_table", write)
    small = pa.table({"id": pa.array(range(300, 600), pa.int64()), "s": [f"value-{i % 7:05d}" for i in range(300)]})
    mt.append(small)
    both = plain.to_pylist() + small.to_pylist()
    got = rows(mt.scan(filter="s < 'value-00003'", columns=["id"]).to_arrow())
    assert got == [{"id": r["id"]} for r in sorted(both, key=lambda r: r["id"]) if r["s"] < "value-00003"]
    assert calls == ["s"] * len(calls) and calls       # the second file only


def test_a_filter_on_a_dictionary_encoded_number_or_date_column_is_evaluated_per_dictionary_value(tmp_path,
                                                                                                   monkeypatch):
    """The same for int, long, double and date columns whose pages are all dictionary-encoded: the column is read
    as dictionary indices of its stored values, the filter evaluated per dictionary value, and the kept rows'
    values decoded by Arrow; a file written before the int column was promoted to long is read with its int
    dictionary promoted. The rows are those of the row-by-row evaluation."""
    import datetime as dt
    from paimon_engine.scan import reader as rmod
    fields = [T.DataField(1, "id", T.BigIntType()), T.DataField(2, "w", T.IntType()),
              T.DataField(3, "x", T.DoubleType()), T.DataField(4, "d", T.DateType())]
    mt = MiniTable(tmp_path, Schema(T.RowType(fields)))
    n = 600
    day = dt.date(2024, 1, 1)

    def make(lo, hi):
        return pa.table({"id": pa.array(range(lo, hi), pa.int64()),
                         "w": pa.array([None if i % 9 == 0 else i % 7 for i in range(lo, hi)], pa.int32()),
                         "x": pa.array([(i % 5) * 0.5 for i in range(lo, hi)], pa.float64()),
                         "d": pa.array([day + dt.timedelta(days=i % 4) for i in range(lo, hi)], pa.date32())})
    (df,) = mt.append(make(0, n))
    mt.commit([mt.write_position_deletes(df.file_path, [1, 2, 300, 599])], operation="delete")
    # w: int -> long; the next file stores longs
    mt.set_schema(T.RowType([fields[0], T.DataField(2, "w", T.BigIntType()), fields[2], fields[3]]))
    mt.append(make(n, 2 * n).cast(pa.schema([("id", pa.int64()), ("w", pa.int64()), ("x", pa.float64()),
                                             ("d", pa.date32())])))
    full = [r for r in make(0, 2 * n).to_pylist() if r["id"] not in (1, 2, 300, 599)]
    calls = []
    real = rmod.dictionary_mask
    monkeypatch.setattr(rmod, "dictionary_mask", lambda *a, **kw: calls.append(a[1]) or real(*a, **kw))
    row_by_row = rmod.TaskReader._dictionary_filter
    w = lambda r: r["w"]   # noqa: E731
    cases = [
        ("w < 2", "w", lambda r: w(r) is not None and w(r) < 2),
        ("w in (1, 3, 99)", "w", lambda r: w(r) in (1, 3)),
        ("w is null", "w", lambda r: w(r) is None),
        ("not (w = 2 or w = 5)", "w", lambda r: w(r) is not None and w(r) not in (2, 5)),
        ("x >= 1.5", "x", lambda r: r["x"] >= 1.5),
        ("d = date '2024-01-03'", "d", lambda r: r["d"] == dt.date(2024, 1, 3)),
    ]
    for expr, column, pred in cases:
        for columns in (["id"], ["id", "w", "x", "d"]):
            calls.clear()
            monkeypatch.setattr(rmod.TaskReader, "_dictionary_filter", row_by_row)
            scan = mt.scan(filter=expr, columns=columns)
            got = rows(scan.to_arrow())
            want = [{c: r[c] for c in columns} for r in full if pred(r)]
            assert got == want, (expr, columns)
            assert calls.count(column) == 2 and set(calls) == {column}, (expr, calls)   # both files
            if "w" in columns:
                assert scan.to_arrow().schema.field("w").type == pa.int64()
            monkeypatch.setattr(rmod.TaskReader, "_dictionary_filter", lambda *a: frozenset())
            assert rows(mt.scan(filter=expr, columns=columns).to_arrow()) == got, expr


def test_dictionary_rows_gathers_fixed_width_values_from_each_chunks_dictionary():
    """The kept rows of a fixed-width column read as dictionary indices: chunks with dictionaries of their own,
    null rows (whose index slots hold anything) kept null, rows given as numbers or as flags; an index outside
    its dictionary is refused, naming the file."""
    from paimon_engine.scan.reader import _dictionary_rows

    def chunk(values, dictionary, typ):
        idx = np.array([dictionary.index(v) if v is not None else 1 << 28 for v in values], np.int32)
        valid = np.array([v is not None for v in values], np.bool_)
        bits = pa.py_buffer(np.packbits(valid, bitorder="little")) if not valid.all() else None
        indices = pa.Array.from_buffers(pa.int32(), len(values), [bits, pa.py_buffer(idx)],
                                        null_count=int((~valid).sum()))
        return pa.DictionaryArray.from_arrays(indices, pa.array(dictionary, typ), safe=False)
    for typ, a, b in ((pa.int32(), [5, 7, 9], [-1, 5]), (pa.float64(), [0.5, 2.5], [1e300, -0.0]),
                      (pa.date32(), [datetime.date(2020, 1, 1), datetime.date(2021, 5, 6)],
                       [datetime.date(1999, 9, 9)])):
        first = [a[0], None, a[-1], a[0], None, a[1]]
        second = [b[0], b[-1], None, b[0]]
        column = pa.chunked_array([chunk(first, a, typ), chunk(second, b, typ)],
                                  type=pa.dictionary(pa.int32(), typ))
        every = first + second
        rows = np.array([0, 1, 2, 5, 6, 8, 9], np.int64)
        got = _dictionary_rows(column, rows)
        assert got.type == typ and got.to_pylist() == [every[i] for i in rows]
        keep = np.zeros(len(every), np.bool_)
        keep[[1, 3, 7]] = True
        assert _dictionary_rows(column, keep=keep).to_pylist() == [every[1], every[3], every[7]]
        assert _dictionary_rows(column, np.zeros(0, np.int64)).to_pylist() == []
    bad = pa.DictionaryArray.from_arrays(pa.array([0, 3], pa.int32()), pa.array([1, 2, 3], pa.int64()), safe=False)
    with pytest.raises(CorruptFileError, match="outside the dictionary of 3 values") as exc:
        _dictionary_rows(bad, np.array([0, 1], np.int64), path="data/x.parquet")
    assert exc.value.path == "data/x.parquet"
