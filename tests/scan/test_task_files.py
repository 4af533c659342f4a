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


def test_tasks_are_plain_values_that_pickle(tmp_path):
    """Tasks cross process boundaries (Spark executors, pools): they pickle with their delete files; a task file
    is immutable, equal to another with the same fields and hashable; ``replace`` copies a task with some fields
    changed and refuses a name that is not a field."""
    import pickle

    import pytest

    from paimon_engine.scan.tasks import TaskFile
    cat = load_catalog("x", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path))
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=pa.schema([pa.field("id", pa.int64())]))
    t.append(pa.table({"id": pa.array(range(10), pa.int64())}))
    t.delete(delete_filter="id < 3")
    (task,) = t.scan(filter="id > 1").plan_files()
    back = pickle.loads(pickle.dumps(task))
    assert (back.path, back.record_count, back.file_size, back.sequence_number) == \
        (task.path, task.record_count, task.file_size, task.sequence_number)
    assert repr(back.residual) == repr(task.residual) and len(back.deletes) == 1
    assert back.deletes[0].path == task.deletes[0].path and back.deletes[0].stats is None
    assert "DeleteFile(path=" in repr(task.deletes[0]) and "stats" not in repr(task.deletes[0])
    assert back.file == task.file and hash(back.file) == hash(task.file) and back.file is not task.file
    assert pickle.loads(pickle.dumps(task.file)) == task.file
    assert repr(task.file).startswith(f"TaskFile(file_path={task.path!r}, file_format='PARQUET', record_count=10")
    assert TaskFile("a", "PARQUET", 1, 2) != TaskFile("a", "PARQUET", 1, 3)
    assert len({TaskFile("a", "PARQUET", 1, 2), TaskFile("a", "PARQUET", 1, 2)}) == 1
    with pytest.raises(AttributeError):
        task.file.record_count = 5
    with pytest.raises(AttributeError):
        del task.file.file_path
    other = task.replace(deletes=[], start=4)
    assert other.deletes == [] and other.start == 4 and other.path == task.path
    assert len(task.deletes) == 1 and task.start is None
    with pytest.raises(TypeError, match="no field 'nope'"):
        task.replace(nope=1)
