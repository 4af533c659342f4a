"""A scan gives back every data and delete file it opens as soon as it is done with it: after a read, and when a
read fails (while the error, whose traceback holds the reader's frames, is still being handled)."""
import os

import pyarrow as pa
import pytest

from paimon_engine.catalog import FileSystemCatalog
from paimon_engine.errors import PaimonEngineError
from paimon_engine.expressions import col

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"),
                                reason="open descriptors are listed in /proc on Linux")


def _open_paths():
    """The files this process has open, by path."""
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            out.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:   # (the descriptor listing the folder itself is gone by now)
            pass
    return out


def _table(tmp_path, fmt):
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    props = {"write.format.default": fmt, "write.delete.format.default": fmt}
    data = pa.table({"id": pa.array(range(40), pa.int64()), "s": [f"s{i % 7}" for i in range(40)]})
    t = cat.create_table("db.t", data.schema, properties=props)
    t.append(data.slice(0, 20))
    t.append(data.slice(20))
    t.delete(col("id").isin([3, 25]))                                       # position deletes
    t.delete(col("id").isin([7, 30]), mode="equality", equality_columns=["id"])
    return cat.load_table("db.t")


def _files(t, content=None):
    """Paths of the table's data files and of its delete files (those of ``content`` only: 1 position deletes,
    2 equality deletes), as the operating system names them."""
    tasks = t.scan().plan_files()
    data = {os.path.realpath(task.path.removeprefix("file://")) for task in tasks}
    deletes = {os.path.realpath(d.path.removeprefix("file://")) for task in tasks for d in task.deletes
               if content in (None, d.content)}
    assert len(data) == 2 and len(deletes) >= (2 if content is None else 1)
    return data, deletes


def _corrupt(path, at):
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(b"\xa5" * 24)


def _corrupt_columns(path):
    """Every column chunk of a Parquet file, or the first block of a .row file, made unreadable."""
    if not path.endswith(".parquet"):
        return _corrupt(path, 0)
    import pyarrow.parquet as pq
    md = pq.ParquetFile(path).metadata
    starts = [md.row_group(g).column(j).data_page_offset for g in range(md.num_row_groups)
              for j in range(md.num_columns)]
    for at in starts:
        _corrupt(path, at)


@pytest.mark.parametrize("fmt", ["parquet", "row"])
def test_reads_leave_no_file_open(tmp_path, fmt):
    t = _table(tmp_path, fmt)
    data, deletes = _files(t)
    before = _open_paths()
    for _ in range(2):
        got = t.scan().to_arrow()
        assert sorted(got.column("id").to_pylist()) == [i for i in range(40) if i not in (3, 7, 25, 30)]
        assert sorted(t.scan(filter=col("s") == "s1").to_arrow().column("id").to_pylist()) == [1, 8, 15, 22, 29, 36]
        assert sum(b.num_rows for b in t.scan().to_arrow_batch_reader()) == 36
    assert _open_paths() == before
    # a read stopped early: the file being read is open while its batches are pulled, and closed with the read
    batches = t.scan().to_batches(batch_size=4)
    assert next(batches).num_rows and _open_paths() & data
    batches.close()
    assert _open_paths() == before


@pytest.mark.parametrize("where", ["data", "footer"])
@pytest.mark.parametrize("fmt", ["parquet", "row"])
def test_a_failed_read_closes_its_files_before_the_error_is_handled(tmp_path, fmt, where):
    t = _table(tmp_path, fmt)
    data, deletes = _files(t)
    target = sorted(data)[0]
    # a Parquet file's first page or a .row file's first block (the file opens, its read fails); or the end
    # of the file (it fails to open)
    _corrupt(target, (4 if fmt == "parquet" else 0) if where == "data" else os.path.getsize(target) - 24)
    with pytest.raises(PaimonEngineError) as ei:
        t.scan().to_arrow()
    assert target in str(ei.value)
    try:
        t.scan().to_arrow()
    except PaimonEngineError:
        still = _open_paths() & (data | deletes)
        assert not still, f"open while the error is handled: {still}"
    else:
        raise AssertionError("the corrupt data file was read")


@pytest.mark.parametrize("content", [1, 2])
@pytest.mark.parametrize("fmt", ["parquet", "row"])
def test_a_corrupt_delete_file_is_closed_too(tmp_path, fmt, content):
    t = _table(tmp_path, fmt)
    data, deletes = _files(t, content)
    for path in deletes:
        _corrupt_columns(path)
    try:
        t.scan().to_arrow()
    except PaimonEngineError as exc:
        assert any(p in str(exc) for p in deletes)
        still = _open_paths() & (data | _files(t)[1])
        assert not still, f"open while the error is handled: {still}"
    else:
        raise AssertionError("the corrupt delete files were read")
