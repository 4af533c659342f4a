"""plan_files() tasks expose pyiceberg's task.file and task.delete_files."""
import pyarrow as pa

from paimon_engine.catalog import load_catalog


def test_task_file_and_delete_files(tmp_path):
    cat = load_catalog("x", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path))
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=pa.schema([pa.field("id", pa.int64())]))
    t.append(pa.table({"id": pa.array(range(10), pa.int64())}))
    (task,) = t.scan().plan_files()
    assert task.file.file_path.endswith(".parquet") and task.file.record_count == 10
    assert task.file.file_format == "PARQUET" and task.file.content == 0
    assert task.delete_files == set()
    t.delete(delete_filter="id < 3")                # merge-on-read: one position-delete file
    (task,) = t.scan().plan_files()
    (d,) = task.delete_files
    assert d.content == 1 and d.record_count == 3 and d.referenced_data_file == task.file.file_path
    assert d.file_path in {r["file_path"] for r in t.inspect.delete_files().to_pylist()}
