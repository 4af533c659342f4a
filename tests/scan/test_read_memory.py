"""Memory behaviour of reads: the batch reader streams task by task and batch by batch, ``limit`` stops opening
files, reading position deletes needs no pandas (pyarrow's NumPy conversions import it, ~50 MB), and reads, writes
and Fory rows leave no reference cycles of the engine's own behind."""

import gc
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.expressions import col
from paimon_engine.scan import reader as R
from paimon_engine.catalog import FileSystemCatalog

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def data(n, start=0):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "s": [f"s{i % 7}" for i in range(start, start + n)]})


@pytest.fixture
def table(tmp_path):
    t = FileSystemCatalog(str(tmp_path / "wh")).create_table("db.t", data(1).schema)
    for i in range(3):
        t.append(data(1000, i * 1000))
    return t


@pytest.fixture
def opened(monkeypatch):
    """Paths of the data files the task reader opens, in order."""
    seen = []
    real = R._open

    def spy(io, path, fmt, file_schema=None):
        seen.append(path)
        return real(io, path, fmt, file_schema)
    monkeypatch.setattr(R, "_open", spy)
    return seen


def test_batch_reader_opens_one_file_per_pull_and_yields_batches_of_a_file(table, opened):
    reader = table.scan().to_arrow_batch_reader(batch_size=100)
    assert opened == []                       # nothing is read until a batch is asked for
    first = reader.read_next_batch()
    assert first.num_rows == 100              # a batch, not the whole file
    assert len(opened) == 1
    batches = [first]
    for _ in range(9):
        batches.append(reader.read_next_batch())
    assert len(opened) == 1                   # the first file's ten batches came from one open file
    batches.append(reader.read_next_batch())
    assert len(opened) == 2
    batches += list(reader)
    assert len(opened) == 3 and len(set(opened)) == 3
    got = pa.Table.from_batches(batches)
    assert max(b.num_rows for b in batches) == 100
    assert sorted(got.column("id").to_pylist()) == list(range(3000))
    assert got.sort_by("id").equals(table.to_arrow().sort_by("id"))


def test_limit_stops_opening_files(table, opened):
    got = table.scan(limit=150).to_arrow_batch_reader(batch_size=100).read_all()
    assert got.num_rows == 150
    assert len(opened) == 1
    opened.clear()
    assert table.scan(limit=1500).to_arrow().num_rows == 1500
    assert len(opened) == 2


def test_batch_reader_with_position_deletes_streams(table, opened):
    table.delete(col("id").isin(list(range(3, 3000, 10))))
    opened.clear()
    reader = table.scan().to_arrow_batch_reader(batch_size=64)
    first = reader.read_next_batch()
    assert 0 < first.num_rows <= 64
    data_files = [p for p in opened if "delete" not in os.path.basename(p)]
    assert len(data_files) == 1
    rest = pa.Table.from_batches([first] + list(reader))
    ids = rest.column("id").to_pylist()
    assert sorted(ids) == [i for i in range(3000) if i % 10 != 3]


def test_int64s_read_sliced_arrays():
    a = pa.array(range(20), pa.int32()).slice(5, 7)
    assert R._int64s(a).tolist() == list(range(5, 12))
    assert R._int64s(pa.chunked_array([pa.array([3, 4], pa.int64())])).tolist() == [3, 4]
    assert R._int64s(pa.array([], pa.int16())).tolist() == []
    empty = R._int64s(pa.chunked_array([], pa.int32()))
    assert empty.dtype == np.int64 and empty.tolist() == []


def test_reading_position_deletes_does_not_import_pandas(table):
    table.delete(col("id").isin(list(range(3, 3000, 10))))
    code = (
        "import sys\n"
        "from paimon_engine.catalog import FileSystemCatalog\n"
        f"t = FileSystemCatalog({os.path.dirname(os.path.dirname(table.location))!r}).load_table('db.t')\n"
        "n = t.scan().to_arrow().num_rows\n"
        "print(n, 'pandas' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=REPO)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2700", "False"]


def _garbage_of(fn):
    """The objects ``fn()`` leaves in reference cycles (what only the cycle collector frees), by type name, without
    pyarrow's own: the Parquet footer objects it makes hold each other (``FileMetaData`` and its
    ``ParquetSchema``)."""
    fn()                         # caches and lazy imports first
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        fn()
        gc.collect()
        found = [type(o).__name__ + (f" {o.__qualname__}" if callable(o) and hasattr(o, "__qualname__") else "")
                 for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()
    return sorted(x for x in found if x not in ("FileMetaData", "ParquetSchema"))


def test_reads_and_writes_leave_no_reference_cycles(table):
    from paimon_engine.formats import fory
    table.delete(col("id").isin(list(range(3, 3000, 10))))
    ops = {
        "read": lambda: table.scan().to_arrow(),
        "filtered read (NumPy)": lambda: table.scan(filter="id < 500 or not (id >= 2000)").to_arrow(),
        "filtered read (Arrow)": lambda: table.scan(filter=col("s") == "s1").to_arrow(),
        "batch reader": lambda: table.scan(filter="id < 2500").to_arrow_batch_reader(batch_size=300).read_all(),
        "plan": lambda: list(table.scan(filter="id < 10").plan_files()),
        "append": lambda: table.append(data(10, 5000)),
        "delete": lambda: table.delete(col("id") == 5001),
    }
    batch = pa.table({"id": pa.array(range(100), pa.int64()), "s": [f"v{i}" for i in range(100)],
                      "l": pa.array([[i, i + 1] for i in range(100)], pa.list_(pa.int64()))})
    buf, offsets = fory.encode_rows(batch)
    ops["fory encode"] = lambda: fory.encode_rows(batch)
    ops["fory decode"] = lambda: fory.decode_rows(buf, offsets, batch.schema)
    left = {name: _garbage_of(fn) for name, fn in ops.items()}
    assert left == {name: [] for name in ops}
