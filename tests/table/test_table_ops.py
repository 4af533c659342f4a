"""Table API: catalogs, evolution through commits, time travel, row deltas, rewrites, summaries."""
import datetime
import gzip
import time

import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.errors import AlreadyExistsError, InvalidArgumentError, NotFoundError, SchemaError
from paimon_engine.expressions import col
from paimon_engine.catalog import FileSystemCatalog, SqlCatalog, load_catalog

from .conftest import canon, sample


def test_sql_catalog_namespaces_and_tables(tmp_path):
    cat = load_catalog("sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("a", {"owner": "me"})
    cat.create_namespace("b")
    with pytest.raises(AlreadyExistsError):
        cat.create_namespace("a")
    assert cat.load_namespace_properties("a") == {"owner": "me"}
    assert cat.list_namespaces() == [("a",), ("b",)]
    with pytest.raises(NotFoundError):
        cat.create_table("zzz.t", sample().schema)
    t = cat.create_table("a.t", sample().schema)
    assert t.location == f"{tmp_path}/wh/a.db/t"
    assert t.metadata_location.split("/")[-1].startswith("00000-")
    t.append(sample(3))
    assert t.metadata_location.split("/")[-1].startswith("00001-")
    with pytest.raises(AlreadyExistsError):
        cat.create_table("a.t", sample().schema)
    assert cat.list_tables("a") == [("a", "t")]
    t2 = cat.rename_table("a.t", "b.t2")
    assert t2.to_arrow().num_rows == 3 and cat.list_tables("a") == []
    cat.drop_table("b.t2")
    with pytest.raises(NotFoundError):
        cat.load_table("b.t2")
    cat.drop_namespace("a")
    # two catalogs in one database are separate
    other = SqlCatalog("other", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh2"))
    assert other.list_namespaces() == []


def test_fs_catalog_layout(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", sample().schema)
    t.append(sample(4))
    assert cat.list_tables("ns") == [("ns", "t")]
    meta = tmp_path / "ns/t/metadata"
    assert sorted(p.name for p in meta.glob("v*.metadata.json")) == ["v1.metadata.json", "v2.metadata.json"]
    assert [p.name for p in meta.glob("snap-*-0-*.avro")]
    assert all(p.name.endswith(("-m0.avro",)) for p in meta.glob("*-m*.avro"))
    same = cat.load_table_at(f"file://{tmp_path}/ns/t")
    assert same.to_arrow().num_rows == 4
    # gzip-compressed metadata versions are read
    v3 = meta / "v3.metadata.json"
    v3.write_bytes(gzip.compress((meta / "v2.metadata.json").read_bytes()))
    assert cat.load_table("ns.t").metadata_location.endswith("v3.metadata.json")
    assert cat.load_table("ns.t").to_arrow().num_rows == 4
    with pytest.raises(InvalidArgumentError):
        cat.load_table("noNamespace")


def test_schema_evolution_reads_by_field_id(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(3))
    with t.update_schema() as u:
        u.delete_column("name")
        u.rename_column("qty", "quantity")
        u.update_column("quantity", T.BigIntType())
    with t.update_schema() as u:
        u.add_column("name", T.STRING())       # same name, new id: old rows read null
    assert t.schema().find_field("name").id == 7 and t.metadata.last_column_id == 7
    t.append(sample(2, start=3).drop_columns(["qty"]).append_column("quantity", pa.array([9, 9], pa.int64())))
    out = t.to_arrow().sort_by("id")
    assert out.column_names == ["id", "ts", "d", "amount", "quantity", "name"]
    assert out.column("name").to_pylist() == [None, None, None, None,
                                              "name-0004-long-enough-to-truncate"]
    assert out.column("quantity").type == pa.int64() and out.column("quantity").to_pylist() == [0, 1, 2, 9, 9]
    assert len(t.metadata.schemas) == 3
    # the first snapshot reads with its own schema
    assert t.to_arrow(snapshot_id=t.snapshots()[0].snapshot_id).column_names[1] == "name"
    with pytest.raises(SchemaError):
        t.append(pa.table({"id": [1], "bogus": [2]}))


def test_partition_evolution_and_summaries(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema, [("ts", "month")])
    s1 = t.append(sample(20))
    t.update_spec(add=[("id", "bucket[2]")], remove=["ts_month"])
    assert t.spec().spec_id == 1 and [f.name for f in t.spec().fields] == ["id_bucket"]
    assert t.spec().fields[0].field_id == 1001 and t.metadata.last_partition_id == 1001
    s2 = t.append(sample(10, start=20))
    specs = {e.data_file.spec_id for e in t.data_files()}
    assert specs == {0, 1}
    t.delete(col("id").isin([0, 25]))
    s3 = t.current_snapshot()
    assert s3.summary["added-position-delete-files"] == "2" and s3.summary["total-position-deletes"] == "2"
    assert s3.summary["total-records"] == "30"
    assert int(s2.summary["total-data-files"]) == int(s1.summary["added-data-files"]) + 2
    assert t.to_arrow().num_rows == 28
    # deletes against a deleted row do not double count
    t.delete(col("id") == 0)
    assert t.current_snapshot().snapshot_id == s3.snapshot_id
    t.rewrite_files()
    s4 = t.current_snapshot()
    assert s4.summary["operation"] == "replace" and s4.summary["total-delete-files"] == "0"
    assert s4.summary["total-records"] == "28" and {e.data_file.spec_id for e in t.data_files()} == {1}
    assert canon(t.to_arrow()) == canon(t.to_arrow(snapshot_id=s3.snapshot_id))


def test_time_travel_and_refs(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema)
    s1 = t.append(sample(2))
    time.sleep(0.01)
    s2 = t.append(sample(2, start=2))
    assert t.to_arrow(as_of=s1.timestamp_ms).num_rows == 2
    assert t.to_arrow(as_of=datetime.datetime.fromtimestamp(s2.timestamp_ms / 1000 + 1)).num_rows == 4
    with pytest.raises(NotFoundError):
        t.to_arrow(as_of=s1.timestamp_ms - 10_000)
    t.create_tag("v1", s1.snapshot_id)
    t.create_branch("dev", s1.snapshot_id)
    t.append(sample(1, start=50), branch="dev")
    assert t.to_arrow(ref="dev").num_rows == 3 and t.to_arrow(ref="v1").num_rows == 2
    assert t.to_arrow().num_rows == 4
    reopened = cat.load_table("db.t")
    assert set(reopened.metadata.refs) == {"main", "v1", "dev"}
    with pytest.raises(InvalidArgumentError):
        t.to_arrow(snapshot_id=s1.snapshot_id, ref="v1")


def test_row_delta_and_equality_delete_mode(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema, [("qty", "identity")])
    t.append(sample(20))
    snap = t.delete(col("name").is_null(), mode="equality", equality_columns=["id"])
    assert snap.summary["added-equality-delete-files"] == snap.summary["added-delete-files"]
    assert sorted(t.to_arrow().column("id").to_pylist()) == [i for i in range(20) if i % 7 != 3]
    rd = t.row_delta().add_rows(sample(2, start=100)).delete_keys(sample(3, start=0), ["id"])
    s = rd.commit()
    assert s.summary["operation"] == "overwrite"
    ids = sorted(t.to_arrow().column("id").to_pylist())
    assert ids == [i for i in range(3, 20) if i % 7 != 3] + [100, 101]
    with pytest.raises(SchemaError):
        t.delete(col("id") == 5, mode="equality", equality_columns=["amount"])
    t.delete(col("id") >= 0, mode="copy-on-write")
    assert t.to_arrow().num_rows == 0


def test_v1_upgrade_and_properties(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema, format_version=1)
    t.append(sample(5))
    t.set_properties(**{"write.delete.mode": "merge-on-read"})
    t.delete(col("id") == 1)                    # v1 falls back to copy-on-write
    assert t.delete_files() == []
    t.upgrade_format_version(2)
    assert cat.load_table("db.t").format_version == 2
    t.delete(col("id") == 2)
    assert len(t.delete_files()) == 1
    assert sorted(t.to_arrow().column("id").to_pylist()) == [0, 3, 4]
    t.update_properties(removals=["write.delete.mode"])
    assert "write.delete.mode" not in cat.load_table("db.t").properties


def test_inputs_and_rolling(tmp_path):
    from paimon_engine.batch import ColumnBatch
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema, properties={"write.target-file-size-bytes": "2000"})
    t.append(sample(400).to_pandas())
    n_files = len(t.data_files())
    assert n_files > 1                                         # rolled at the target size
    t.append(ColumnBatch.from_arrow(sample(5, start=400)))
    t.append({"id": [1000], "name": ["x"]})                    # missing optional columns -> nulls
    out = t.to_arrow()
    assert out.num_rows == 406
    row = out.filter(pa.compute.equal(out.column("id"), 1000)).to_pylist()[0]
    assert row["qty"] is None and row["name"] == "x"
    with pytest.raises(SchemaError):
        t.append(pa.table({"id": ["not a number"]}))
    # every file has column metrics by field id
    for e in t.data_files():
        df = e.data_file
        assert df.value_counts[1] == df.record_count and 1 in df.lower_bounds and df.column_sizes[1] > 0


def test_metadata_log_trim_and_delete_after_commit(tmp_path, ours):
    ours.create_namespace("db")
    t = ours.create_table("db.t", sample().schema, properties={
        "write.metadata.previous-versions-max": "2", "write.metadata.delete-after-commit.enabled": "true"})
    for i in range(5):
        t.append(sample(1, start=i))
    assert len(t.metadata.metadata_log) == 2
    files = sorted(p.name for p in (tmp_path / "wh/db.db/t/metadata").glob("*.metadata.json"))
    assert len(files) == 3 and files[-1].startswith("00005-")
    assert t.to_arrow().num_rows == 5


def test_merge_append_keeps_sequence_numbers(tmp_path):
    from paimon_engine.spec.manifest_list import read_manifest_list
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema, properties={
        "commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "4"})
    for i in range(3):
        t.append(sample(2, start=2 * i))
    t.delete(col("id") == 1)                                  # a position delete at seq 4
    assert len(read_manifest_list(t.io, t.current_snapshot().manifest_list)) == 4
    t.append(sample(2, start=6))                              # 4 data manifests -> merged into one
    ms = read_manifest_list(t.io, t.current_snapshot().manifest_list)
    data = [m for m in ms if m.content == 0]
    assert len(data) == 1 and data[0].existing_files_count == 3 and data[0].added_files_count == 1
    assert data[0].sequence_number == 5 and data[0].min_sequence_number == 1
    seqs = sorted((e.data_file.record_count, e.sequence_number) for e in t.data_files())
    assert [s for _, s in seqs] == [1, 2, 3, 5]
    assert sorted(t.to_arrow().column("id").to_pylist()) == [0, 2, 3, 4, 5, 6, 7]   # the old delete still applies
    from pyiceberg.table import StaticTable
    st = StaticTable.from_metadata(t.metadata_location)
    assert sorted(st.scan().to_arrow().column("id").to_pylist()) == [0, 2, 3, 4, 5, 6, 7]


def test_equality_delete_null_keys_and_float_keys(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(14))                                       # names of ids 3 and 10 are null
    t.row_delta().delete_keys(pa.table({"name": pa.array([None], pa.string())}), ["name"]).commit()
    assert sorted(t.to_arrow().column("id").to_pylist()) == [i for i in range(14) if i not in (3, 10)]
    with pytest.raises(SchemaError, match="float/double"):
        t.row_delta().delete_keys(pa.table({"amount": [1.5]}), ["amount"])


def test_fs_catalog_refuses_foreign_location_and_duplicates(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    with pytest.raises(InvalidArgumentError, match="keeps table"):
        cat.create_table("db.t", sample().schema, location=str(tmp_path / "elsewhere"))
    cat.create_table("db.t", sample().schema)
    with pytest.raises(AlreadyExistsError):
        cat.create_table("db.t", sample().schema)
    cat.drop_table("db.t")
    with pytest.raises(NotFoundError):
        cat.load_table("db.t")


def test_writes_and_deletes_in_a_fresh_process_do_not_import_pandas(tmp_path):
    # pyarrow converts NumPy arrays and Python lists through its pandas shim, which imports pandas on its first
    # use (a fifth of a second): appends, overwrites, the three delete modes (v2 and v3), compaction and
    # partitioned writes build their arrays from buffers instead. Each case runs in a fresh interpreter, its
    # input built without pa.array, and checks the rows it leaves.
    import subprocess
    import sys
    wh = str(tmp_path / "wh")
    cat = FileSystemCatalog(wh)
    rows = pa.table({"id": pa.array(range(40), pa.int64()), "k": pa.array([i % 4 for i in range(40)], pa.int32()),
                     "s": pa.array([f"s{i:02d}" for i in range(40)])})
    for name, kw in [("mor", {}), ("eq", {}), ("cow", {}), ("over", {}), ("dv", {"format_version": 3}),
                     ("compact", {}), ("part", {"partition_spec": [("k", "identity"), ("id", "bucket[4]")]}), ("app", {}),
                     ("ups", {"format_version": 3})]:
        t = cat.create_table(f"db.{name}", rows.schema, **kw)
        t.append(rows.slice(0, 20))
        t.append(rows.slice(20))
    cases = {
        "mor": ("t.delete('id < 10')", 30),
        "eq": ("t.delete('id < 10', mode='equality', equality_columns=['id'])", 30),
        "cow": ("t.delete('k = 1', mode='copy-on-write')", 30),
        "over": ("t.overwrite(new, filter='id >= 30')", 32),
        "dv": ("t.delete('id < 10')", 30),
        "compact": ("t.delete('id < 10'); t.rewrite_files()", 30),
        "part": ("t.append(new)", 42),
        "app": ("t.append(new)", 42),
        # v3 upsert: id 5 updated in place (keeps its row id), 100 inserted
        "ups": ("new = new.set_column(0, 'id', numbers_to_arrow(np.array([5, 100], np.int64))); "
                "t.upsert(new, key_columns=['id'])", 41),
    }
    for name, (op, count) in cases.items():
        code = (
            "import sys\n"
            "import numpy as np\n"
            "import pyarrow as pa\n"
            "from paimon_engine.batch import numbers_to_arrow, repeat_string\n"
            "from paimon_engine.catalog import FileSystemCatalog\n"
            f"t = FileSystemCatalog({wh!r}).load_table('db.{name}')\n"
            "new = pa.Table.from_arrays([numbers_to_arrow(np.array([100, 101], np.int64)),\n"
            "                            numbers_to_arrow(np.array([1, 2], np.int32)), repeat_string('n', 2)],\n"
            "                           names=['id', 'k', 's'])\n"
            f"{op}\n"
            "out = t.scan().to_arrow()\n"
            "print(out.num_rows, 'pandas' in sys.modules)\n")
        got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
        assert got == [str(count), "False"], (name, got)
    t = cat.load_table("db.cow")
    assert sorted(t.scan().to_arrow().column("k").to_pylist()) == sorted(i % 4 for i in range(40) if i % 4 != 1)
    assert len(cat.load_table("db.mor").delete_files()) == 1
    assert cat.load_table("db.compact").delete_files() == []
    ups = cat.load_table("db.ups").scan(columns=["id", "s", "_row_id"]).to_arrow().sort_by("id").to_pylist()
    assert ups[5] == {"id": 5, "s": "n", "_row_id": 5} and ups[-1]["id"] == 100 and ups[-1]["_row_id"] >= 40


def test_equality_delete_file_of_one_integer_key_is_sorted_and_delta_encoded(tmp_path):
    import numpy as np
    import pyarrow.parquet as pq
    cat = FileSystemCatalog(str(tmp_path))
    n = 5000
    t = cat.create_table("db.t", pa.schema([pa.field("id", pa.int64()), pa.field("s", pa.string())]))
    t.append(pa.table({"id": pa.array(np.arange(n), pa.int64()), "s": [f"v{i % 7}" for i in range(n)]}))
    gone = np.random.default_rng(3).choice(n, 400, replace=False)
    t.delete(col("id").isin(gone.tolist()), mode="equality", equality_columns=["id"])
    deletes = [d for task in t.scan().plan_files() for d in task.delete_files]
    assert deletes and all(d.content == 2 for d in deletes)
    for path in {d.file_path for d in deletes}:
        f = pq.ParquetFile(path.removeprefix("file://"))
        keys = f.read().column("id").to_pylist()
        assert keys == sorted(keys) and sorted(keys) == sorted(gone.tolist())
        chunk = f.metadata.row_group(0).column(0)
        assert "DELTA_BINARY_PACKED" in chunk.encodings and not chunk.has_dictionary_page
    assert sorted(t.to_arrow().column("id").to_pylist()) == sorted(set(range(n)) - set(gone.tolist()))
    # a key of two columns keeps its rows as given
    t.delete(col("id") < 10, mode="equality", equality_columns=["id", "s"])
    assert sorted(t.to_arrow().column("id").to_pylist()) == sorted(set(range(10, n)) - set(gone.tolist()))
