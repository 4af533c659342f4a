""".row data files split at block boundaries: the pieces read exactly the file's rows, each piece carries only
the position deletes that may fall in its rows, and Spark reads a multi-block file as several partitions."""

import importlib.util

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.expressions import col
from paimon_engine.spark.planning import plan_groups
from paimon_engine.catalog import FileSystemCatalog

N = 60_000


def _row_table(root, name, format_version):
    loc = str(root / name)
    data = pa.table({"id": pa.array(np.arange(N), pa.int64()), "k": pa.array(np.arange(N) % 7, pa.int32()),
                     "s": pa.array([f"value-{i % 1013}" for i in range(N)])})
    t = FileSystemCatalog(str(root)).create_table_at(loc, data.schema, format_version=format_version,
                                                     properties={"write.format.default": "row"})
    t.append(data)
    t.delete(col("id") < 50)                                         # position deletes (v3: a deletion vector)
    t.delete(col("s") == "value-7", mode="equality", equality_columns=["s"])
    return FileSystemCatalog(str(root)).load_table_at(loc)


@pytest.fixture(scope="module", params=[2, 3], ids=["v2-position-deletes", "v3-deletion-vector"])
def row_table(request, tmp_path_factory):
    return _row_table(tmp_path_factory.mktemp("rowsplit"), "t", request.param)


def _sorted(tbl):
    return tbl.sort_by("id")


def test_row_file_splits_read_the_engine_rows(row_table):
    scan = row_table.scan()
    files = scan.plan_files()
    assert len(files) == 1 and files[0].file_format == "row"
    size = files[0].file_size
    groups, split = plan_groups(scan, split_size=size // 5)
    tasks = [t for g in groups for t in g]
    assert len(tasks) >= 4 and all(t.start is not None for t in tasks)
    # the byte ranges cover the file once, in order
    assert tasks[0].start == 0 and sum(t.length for t in tasks) == size
    assert all(a.start + a.length == b.start for a, b in zip(tasks, tasks[1:]))
    assert sum(t.record_count for t in tasks) == N
    reader = scan.task_reader()
    got = pa.concat_tables([pa.Table.from_batches(list(reader.read_task(t)), reader.output_schema) for t in tasks])
    want = scan.to_arrow()
    assert got.num_rows == want.num_rows == N - 50 - sum(1 for i in range(50, N) if i % 1013 == 7)
    assert _sorted(got).equals(_sorted(want))


def test_each_split_carries_only_the_deletes_of_its_rows(row_table):
    scan = row_table.scan()
    size = scan.plan_files()[0].file_size
    groups, _ = plan_groups(scan, split_size=size // 5)
    tasks = [t for g in groups for t in g]
    kinds = [sorted((d.content, d.is_deletion_vector) for d in t.deletes) for t in tasks]
    if row_table.format_version >= 3:
        # the deletion vector of the data file and the equality deletes apply to every split
        assert all(k == [(1, True), (2, False)] for k in kinds)
    else:
        # the position-delete file's positions (0..49) lie in the first split only
        assert kinds[0] == [(1, False), (2, False)]
        assert all(k == [(2, False)] for k in kinds[1:])


def test_row_file_split_positions_are_absolute(row_table):
    """_pos of a later split counts from the file's first row, not the split's."""
    scan = row_table.scan(columns=["id", "_pos"])
    size = scan.plan_files()[0].file_size
    groups, _ = plan_groups(scan, split_size=size // 5)
    reader = scan.task_reader()
    last = [t for g in groups for t in g][-1]
    tbl = pa.Table.from_batches(list(reader.read_task(last)), reader.output_schema)
    assert tbl.num_rows > 0 and tbl.column("id").to_pylist() == tbl.column("_pos").to_pylist()


@pytest.mark.spark
def test_spark_reads_a_split_row_file_as_several_partitions(spark, row_table):
    from paimon_engine.spark import read_table
    size = row_table.scan().plan_files()[0].file_size
    want = _sorted(row_table.scan().to_arrow())
    df = read_table(spark, row_table.location, split_size=size // 4)
    assert df.rdd.getNumPartitions() >= 3
    got = pa.Table.from_batches(df._collect_as_arrow())
    assert _sorted(got).equals(want)
    if importlib.util.find_spec("pyspark.sql.datasource") is None:
        return   # Spark 3.5 has no Python data sources: read_table above is its entry point
    src = spark.read.format("paimon_engine").option("split-size", str(size // 4)).load(row_table.location)
    assert src.rdd.getNumPartitions() >= 3
    got = pa.Table.from_batches(src._collect_as_arrow())
    assert _sorted(got).equals(want)
