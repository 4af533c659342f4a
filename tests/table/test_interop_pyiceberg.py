"""pyiceberg 0.12 reads what we write and we read what it writes, through each other's SQL catalog."""
import datetime

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from paimon_engine import types as T
from paimon_engine.expressions import col
from paimon_engine.catalog import FileSystemCatalog

from .conftest import canon, sample


def test_pyiceberg_reads_our_partitioned_table_with_position_deletes(ours, theirs):
    ours.create_namespace("db")
    t = ours.create_table("db.events", sample().schema,
                          [("ts", "day"), ("id", "bucket[4]"), ("name", "truncate[6]")])
    t.append(sample(40))
    t.append(sample(40, start=40))
    t.delete(col("qty") == 2)                                  # merge-on-read: position deletes
    assert int(t.current_snapshot().summary["total-position-deletes"]) > 0
    assert t.current_snapshot().summary["operation"] == "delete"
    # the positions are delta-encoded (not dictionary-encoded): pyiceberg reads them below
    import pyarrow.parquet as pq
    delete_paths = {d.path for task in t.scan().plan_files() for d in task.deletes}
    assert delete_paths
    for p in delete_paths:
        md = pq.ParquetFile(p.removeprefix("file://")).metadata
        enc = md.row_group(0).column(md.schema.to_arrow_schema().get_field_index("pos")).encodings
        assert "DELTA_BINARY_PACKED" in enc and "RLE_DICTIONARY" not in enc, enc
    with t.update_schema() as u:
        u.add_column("note", T.STRING())
    t.append(sample(10, start=80, extra=True))
    t.delete(col("id") == 81)

    expected = canon(t.to_arrow())
    assert len(expected) == 90 - 16 - 1
    pt = theirs.load_table("db.events")
    got = pt.scan().to_arrow()
    assert canon(got) == expected
    assert [f.field_id for f in pt.schema().fields] == [f.id for f in t.schema().fields]
    assert [(f.name, str(f.transform), f.field_id) for f in pt.spec().fields] == \
        [(f.name, str(f.transform), f.field_id) for f in t.spec().fields]
    assert [s.snapshot_id for s in pt.metadata.snapshots] == [s.snapshot_id for s in t.snapshots()]
    assert pt.metadata.last_sequence_number == t.metadata.last_sequence_number
    # time travel agrees
    first = t.snapshots()[0].snapshot_id
    assert canon(pt.scan(snapshot_id=first).to_arrow()) == canon(t.to_arrow(snapshot_id=first))
    # pyiceberg's partition pruning over our manifests and metrics
    sel = pt.scan(row_filter="id >= 20 and id < 30").to_arrow()
    assert canon(sel) == [r for r in expected if 20 <= r["id"] < 30]


def test_pyiceberg_reads_our_v1_and_filesystem_tables(tmp_path):
    from pyiceberg.table import StaticTable
    cat = FileSystemCatalog(str(tmp_path / "fs"))
    t = cat.create_table("ns.t", sample().schema, [("d", "year"), ("qty", "identity")], format_version=1)
    t.append(sample(30))
    t.delete(col("id") < 5)                   # v1: copy-on-write
    t.overwrite(sample(3, start=100), col("qty") == 1)
    assert t.metadata_location.endswith("/metadata/v4.metadata.json")
    assert (tmp_path / "fs/ns/t/metadata/version-hint.text").read_text() == "4"
    st = StaticTable.from_metadata(t.metadata_location)
    assert st.metadata.format_version == 1
    assert canon(st.scan().to_arrow()) == canon(t.to_arrow())
    assert len(canon(t.to_arrow())) == 30 - 5 - 5 + 3


def test_we_read_pyiceberg_tables_all_transforms_and_evolution(ours, theirs):
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import (BucketTransform, DayTransform, HourTransform, IdentityTransform,
                                      MonthTransform, TruncateTransform, YearTransform)
    from pyiceberg.types import DateType, DoubleType, IntegerType, LongType, NestedField, StringType, TimestampType
    theirs.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType()),
                    NestedField(3, "ts", TimestampType()), NestedField(4, "d", DateType()),
                    NestedField(5, "amount", DoubleType()), NestedField(6, "qty", IntegerType()))
    specs = {
        "identity": PartitionSpec(PartitionField(6, 1000, IdentityTransform(), "qty")),
        "bucket": PartitionSpec(PartitionField(1, 1000, BucketTransform(3), "id_bucket")),
        "truncate": PartitionSpec(PartitionField(2, 1000, TruncateTransform(7), "name_trunc")),
        "year": PartitionSpec(PartitionField(4, 1000, YearTransform(), "d_year")),
        "month": PartitionSpec(PartitionField(3, 1000, MonthTransform(), "ts_month")),
        "day": PartitionSpec(PartitionField(3, 1000, DayTransform(), "ts_day")),
        "hour": PartitionSpec(PartitionField(3, 1000, HourTransform(), "ts_hour")),
    }
    for name, spec in specs.items():
        pt = theirs.create_table(f"db.{name}", schema, partition_spec=spec)
        pt.append(sample(25))
        pt.append(sample(25, start=25))
        pt.delete("id < 4")                                        # copy-on-write in pyiceberg
        t = ours.load_table(f"db.{name}")
        assert canon(t.to_arrow()) == canon(pt.refresh().scan().to_arrow()), name
        # our partition values agree with pyiceberg's for every data file
        ours_parts = sorted(str(e.data_file.partition) for e in t.data_files())
        theirs_parts = sorted(str(tuple(task.file.partition)) for task in pt.scan().plan_files())
        assert ours_parts == theirs_parts, name
    # schema evolution + many commits
    pt = theirs.load_table("db.bucket")
    with pt.update_schema() as u:
        u.add_column("note", StringType())
        u.rename_column("name", "label")
    for i in range(5):
        pt.append(sample(4, start=100 + 4 * i, extra=True).rename_columns(
            ["id", "label", "ts", "d", "amount", "qty", "note"]))
    pt.overwrite(sample(2, start=500, extra=True).rename_columns(["id", "label", "ts", "d", "amount", "qty", "note"]),
                 overwrite_filter="qty = 3")
    t = ours.load_table("db.bucket")
    assert t.schema().names == ["id", "label", "ts", "d", "amount", "qty", "note"]
    assert canon(t.to_arrow()) == canon(pt.refresh().scan().to_arrow())
    # old snapshots read with their own schema
    old = t.snapshots()[0].snapshot_id
    assert t.at(snapshot_id=old).schema.names[1] == "name"
    assert t.to_arrow(snapshot_id=old).num_rows == 25


def test_both_write_the_same_table(ours, theirs):
    ours.create_namespace("db")
    t = ours.create_table("db.shared", sample().schema, [("qty", "identity")])
    t.append(sample(10))
    pt = theirs.load_table("db.shared")
    pt.append(sample(10, start=10))
    t.refresh().append(sample(10, start=20))
    t.delete(col("id").isin([1, 11, 21]))
    pt = theirs.load_table("db.shared")
    assert canon(pt.scan().to_arrow()) == canon(t.to_arrow())
    assert len(t.to_arrow()) == 27
    # pyiceberg's SqlCatalog sees our namespaces and tables
    assert ("db",) in theirs.list_namespaces()
    assert ("db", "shared") in theirs.list_tables("db")
    # and we see a table pyiceberg creates
    theirs.create_table("db.made_by_pyiceberg", sample().schema)
    assert ("db", "made_by_pyiceberg") in ours.list_tables("db")


def test_upsert_equality_deletes_read_back(ours, theirs):
    ours.create_namespace("db")
    schema = sample().schema
    schema = schema.set(0, pa.field("id", pa.int64(), nullable=False))
    t = ours.create_table("db.keyed", schema)
    with t.update_schema() as u:
        u.set_identifier_fields("id")
    t.append(sample(10).cast(schema))
    changed = sample(3, start=4).cast(schema).set_column(1, "name", pa.array(["x", "y", "z"]))
    t.upsert(changed)
    out = canon(t.to_arrow())
    assert len(out) == 10 and [r["name"] for r in out if 4 <= r["id"] < 7] == ["x", "y", "z"]
    assert t.current_snapshot().summary["added-equality-delete-files"] == "1"
    # pyiceberg refuses equality deletes (documented peer limitation)
    with pytest.raises(Exception):
        theirs.load_table("db.keyed").scan().to_arrow()
    # compaction applies the deletes; pyiceberg can read again
    t.rewrite_files()
    assert t.current_snapshot().summary["operation"] == "replace"
    assert canon(theirs.load_table("db.keyed").scan().to_arrow()) == out


def test_pyiceberg_writes_after_our_position_deletes(ours, theirs):
    ours.create_namespace("db")
    t = ours.create_table("db.mixed", sample().schema, [("qty", "identity")])
    t.append(sample(30))
    t.delete(col("id").isin([0, 6, 12]))                   # position deletes in three partitions
    pt = theirs.load_table("db.mixed")
    pt.delete("id = 1 or id = 18")                         # pyiceberg copy-on-write on top of our deletes
    pt.append(sample(2, start=100))
    t.refresh()
    want = {i for i in range(30) if i not in (0, 6, 12, 1, 18)} | {100, 101}
    assert set(t.to_arrow().column("id").to_pylist()) == want
    assert set(theirs.load_table("db.mixed").scan().to_arrow().column("id").to_pylist()) == want
    t.rewrite_files()
    t.expire_snapshots(retain_last=1)
    assert set(theirs.load_table("db.mixed").scan().to_arrow().column("id").to_pylist()) == want
    assert len(theirs.load_table("db.mixed").metadata.snapshots) == 1


def test_we_open_a_catalog_database_pyiceberg_created(tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog
    from paimon_engine.catalog import SqlCatalog
    uri = f"sqlite:///{tmp_path}/pyi.db"
    pc = PySqlCatalog("prod", uri=uri, warehouse=f"file://{tmp_path}/wh")
    pc.create_namespace("sales", {"owner": "ops"})
    pt = pc.create_table("sales.orders", sample().schema)
    pt.append(sample(6))
    cat = SqlCatalog("prod", uri=uri, warehouse=str(tmp_path / "wh"))
    assert cat.list_namespaces() == [("sales",)]
    assert cat.load_namespace_properties("sales")["owner"] == "ops"
    t = cat.load_table("sales.orders")
    assert canon(t.to_arrow()) == canon(pt.scan().to_arrow())
    t.append(sample(2, start=6))
    assert pc.load_table("sales.orders").scan().to_arrow().num_rows == 8
    # pyiceberg's metadata file naming continues
    assert pc.load_table("sales.orders").metadata_location.rsplit("/", 1)[-1].startswith("00002-")
    cat.rename_table("sales.orders", "sales.orders2")
    assert pc.load_table("sales.orders2").scan().to_arrow().num_rows == 8
    cat.drop_table("sales.orders2")
    assert pc.list_tables("sales") == []


def test_we_read_and_upgrade_pyiceberg_v1_tables(ours, theirs):
    theirs.create_namespace("db")
    pt = theirs.create_table("db.v1", sample().schema, properties={"format-version": "1"})
    pt.append(sample(10))
    pt.append(sample(5, start=10))
    pt.delete("id < 2")
    t = ours.load_table("db.v1")
    assert t.format_version == 1
    assert canon(t.to_arrow()) == canon(pt.refresh().scan().to_arrow())
    t.append(sample(3, start=50))                      # our v1 manifests next to pyiceberg's
    t.upgrade_format_version(2)
    t.delete(col("id") == 5)                           # v2 position delete over v1-written data (seq 0)
    assert sorted(t.to_arrow().column("id").to_pylist()) == [i for i in range(2, 15) if i != 5] + [50, 51, 52]
    assert canon(theirs.load_table("db.v1").scan().to_arrow()) == canon(t.to_arrow())
