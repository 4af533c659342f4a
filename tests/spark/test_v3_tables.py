"""Format version 3 tables through the Spark source: deletion vectors from every write path of ours, stored
row lineage and column defaults read back as our scan reads them; Spark's appends to a v3 table get row ids."""

import datetime

import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.expressions import col
from paimon_engine.catalog import SqlCatalog

pytestmark = pytest.mark.spark
pytest.importorskip("pyspark.sql.datasource", reason="Python data sources need Spark 4")


def _spark_rows(spark, opts, path, **extra):
    r = spark.read.format("paimon_engine")
    for k, v in {**opts, **extra}.items():
        r = r.option(k, v)
    return sorted(tuple(row) for row in r.load(path).collect())


def _ours(t, **kw):
    return sorted(tuple(r.values()) for r in t.scan(**kw).to_arrow().to_pylist())


def _rows(ids, tag="v"):
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{tag}{i}" for i in ids]})


def test_v3_write_paths_read_identically_through_spark(spark, tmp_path):
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    opts = {"catalog.uri": f"sqlite:///{tmp_path}/c.db", "catalog.warehouse": str(tmp_path / "wh")}
    t = cat.create_table("db.t", _rows([0]).schema, format_version=3)
    t.append(_rows(range(50)))
    t.append(_rows(range(50, 100)))
    seen = []

    def check():
        # every snapshot so far (time travel reads it with the schema it was written with), then the table
        seen.append(t.current_snapshot().snapshot_id)
        for snapshot_id in seen:
            assert _spark_rows(spark, opts, "db.t", **{"snapshot-id": str(snapshot_id)}) == \
                _ours(t, snapshot_id=snapshot_id)
        current = _ours(t)
        assert _spark_rows(spark, opts, "db.t") == current
        return current

    t.delete(col("id").isin(list(range(0, 100, 7))))  # one vector per data file
    t.delete("id in (1, 51)")                        # merged vectors
    assert {e.data_file.file_format for e in t.delete_files()} == {"PUFFIN"}
    check()
    t.upsert(_rows([2, 60, 500], "new"), join_cols=["id"])
    check()
    t.delete("id = 3", mode="copy-on-write")
    t.overwrite(_rows([4], "over"), filter="id = 4")
    check()
    t.rewrite_files()
    with t.update_schema() as u:
        u.add_column("day", T.DateType(), default=datetime.date(2024, 1, 1))
    assert all(r[2] == datetime.date(2024, 1, 1) for r in check())
    # Spark appends to the v3 table: the rows get row ids, and our next delete writes a vector for them
    spark.createDataFrame([(1000, "s", datetime.date(2025, 1, 1)), (1001, "s", None)], "id long, v string, day date") \
        .write.format("paimon_engine").options(**opts).mode("append").save("db.t")
    t.refresh()
    got = {r["id"]: r["_row_id"] for r in t.scan(columns=["id", "_row_id"]).to_arrow().to_pylist()}
    assert got[1000] is not None and len(set(got.values())) == len(got)
    t.delete("id = 1001")
    check()
    assert all(e.data_file.file_format == "PUFFIN" for e in t.delete_files())


LINEAGE = ["_row_id", "_last_updated_sequence_number"]


@pytest.mark.parametrize("fmt", ["parquet", "row"])
def test_row_lineage_columns_through_the_source_and_read_table(spark, tmp_path, fmt):
    from paimon_engine.spark import read_table
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    opts = {"catalog.uri": f"sqlite:///{tmp_path}/c.db", "catalog.warehouse": str(tmp_path / "wh")}
    t = cat.create_table("db.t", _rows([0]).schema, format_version=3, properties={"write.format.default": fmt})
    t.append(_rows(range(20)))
    t.append(_rows(range(20, 30)))
    t.delete("id in (3, 25)")                              # deletion vectors
    first = t.current_snapshot().snapshot_id
    t.upsert(_rows([4, 26, 99], "new"), join_cols=["id"])  # replaced rows keep their row ids
    t.rewrite_files()                                      # moved rows store their lineage
    t.append(_rows([200]))                                 # inherited from first_row_id
    want = _ours(t, columns=["id", "v"] + LINEAGE)
    assert len({r[2] for r in want}) == len(want) and all(r[2] is not None and r[3] is not None for r in want)
    # the data source: all columns plus the metadata columns, or chosen columns plus them
    assert _spark_rows(spark, opts, "db.t", **{"metadata-columns": ",".join(LINEAGE)}) == want
    assert _spark_rows(spark, opts, "db.t", columns="id", **{"metadata-columns": "_row_id"}) == \
        _ours(t, columns=["id", "_row_id"])
    assert _spark_rows(spark, opts, "db.t", columns="id,_last_updated_sequence_number") == \
        _ours(t, columns=["id", "_last_updated_sequence_number"])
    df = spark.read.format("paimon_engine").options(**opts).option("metadata-columns", "_row_id").load("db.t")
    assert df.columns == ["id", "v", "_row_id"]
    assert sorted(tuple(r) for r in df.where("id >= 20").select("id", "_row_id").collect()) == \
        _ours(t, columns=["id", "_row_id"], filter="id >= 20")
    # time travel: the rows of that snapshot with the lineage they had then
    assert _spark_rows(spark, opts, "db.t", **{"snapshot-id": str(first), "metadata-columns": "_row_id"}) == \
        _ours(t, columns=["id", "v", "_row_id"], snapshot_id=first)
    # read_table
    got = read_table(spark, "db.t", metadata_columns=LINEAGE, uri=opts["catalog.uri"],
                     warehouse=opts["catalog.warehouse"])
    assert got.columns == ["id", "v"] + LINEAGE
    assert sorted(tuple(r) for r in got.collect()) == want
    got = read_table(spark, "db.t", row_filter="id < 10", selected_fields=["id"], metadata_columns=["_row_id"],
                     uri=opts["catalog.uri"], warehouse=opts["catalog.warehouse"])
    assert sorted(tuple(r) for r in got.collect()) == _ours(t, columns=["id", "_row_id"], filter="id < 10")


def test_unknown_metadata_columns_are_refused(spark, tmp_path):
    from paimon_engine.errors import InvalidArgumentError
    from paimon_engine.spark import read_table
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    cat.create_table("db.t", _rows([0]).schema, format_version=3).append(_rows([1]))
    opts = {"catalog.uri": f"sqlite:///{tmp_path}/c.db", "catalog.warehouse": str(tmp_path / "wh")}
    with pytest.raises(Exception, match="unknown metadata column.*_spec_id"):
        _spark_rows(spark, opts, "db.t", **{"metadata-columns": "_row_id,_spec_id"})
    with pytest.raises(InvalidArgumentError, match="unknown metadata column.*_deleted"):
        read_table(spark, "db.t", metadata_columns=["_deleted"], uri=opts["catalog.uri"],
                   warehouse=opts["catalog.warehouse"])


def test_variant_columns_through_the_source(spark, tmp_path):
    """A variant column comes out of Spark as the struct of its metadata and value binaries, as our scan gives it."""
    import pyarrow.parquet as pq

    from paimon_engine.formats.variant import to_pylist
    from paimon_engine.spec.manifest import DataFile
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", pa.schema([pa.field("id", pa.int64())]), format_version=3)
    with t.update_schema() as u:
        u.add_column("payload", T.VariantType())
    vtype = T.VariantType().to_arrow()
    meta = b"\x11\x01\x00\x04name"
    rows = [{"metadata": meta, "value": b"\x02\x01\x00\x00\x04\x0dada"}, None,
            {"metadata": b"\x01\x00\x00", "value": b"\x14" + (7).to_bytes(4, "little")}]
    fid = str(t.schema().find_field("payload").id).encode()
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "payload": pa.array(rows, vtype)},
                    schema=pa.schema([pa.field("id", pa.int64(), metadata={b"PARQUET:field_id": b"1"}),
                                      pa.field("payload", vtype, metadata={b"PARQUET:field_id": fid})]))
    path = tmp_path / "wh" / "db" / "t" / "data" / "v.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, str(path))
    t.row_delta().add_data_file(DataFile(f"file://{path}", "PARQUET", (), 3, path.stat().st_size)).commit()
    opts = {"catalog.uri": f"sqlite:///{tmp_path}/c.db", "catalog.warehouse": str(tmp_path / "wh")}
    df = spark.read.format("paimon_engine").options(**opts).load("db.t")
    got = {r["id"]: (None if r["payload"] is None else {"metadata": bytes(r["payload"]["metadata"]),
                                                         "value": bytes(r["payload"]["value"])})
           for r in df.collect()}
    ours = t.scan().to_arrow().sort_by("id")
    assert [got[i] for i in (1, 2, 3)] == ours.column("payload").to_pylist() == rows
    assert to_pylist(pa.array([got[i] for i in (1, 2, 3)], vtype)) == [{"name": "ada"}, None, 7]
