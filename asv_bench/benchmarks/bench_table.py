"""Table layer: append commit latency on a table with 200 snapshots, and loading the metadata of a table with
1,000 snapshots; paimon_engine and pyiceberg side by side (same data, same SQLite catalog layout)."""
import copy
import json
import os
import shutil
import tempfile

import pyarrow as pa

#: the checkout these benchmarks belong to: a fresh interpreter (``timeraw_*``) imports paimon_engine from it (asv
#: puts a checkout on the benchmark process's path, not on its children's)
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N_SNAPSHOTS = 200
N_META_SNAPSHOTS = 1000


def _rows(start, n=10):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "name": pa.array([f"n{i}" for i in range(start, start + n)]),
                     "qty": pa.array([i % 4 for i in range(start, start + n)], pa.int32())})


def _catalog(root, impl):
    """The SQLite catalog of ``impl`` (``paimon_engine`` or ``pyiceberg``) under ``root``, tables in its own
    warehouse folder."""
    uri = f"sqlite:///{root}/{impl}.db"
    if impl == "paimon_engine":
        from paimon_engine.catalog import SqlCatalog
        return SqlCatalog("bench", uri=uri, warehouse=f"{root}/wh-{impl}")
    from pyiceberg.catalog.sql import SqlCatalog
    return SqlCatalog("bench", uri=uri, warehouse=f"file://{root}/wh-{impl}")


def _build(root, impl):
    cat = _catalog(root, impl)
    cat.create_namespace("db")
    t = cat.create_table("db.t", _rows(0).schema)
    for i in range(N_SNAPSHOTS):
        t.append(_rows(10 * i))


class AppendCommit:
    """One append (10 rows: write a Parquet file, manifest, manifest list, metadata, catalog swap) to a table
    that already has 200 snapshots."""
    params = ["paimon_engine", "pyiceberg"]
    param_names = ["impl"]
    timeout = 600
    number = 1
    repeat = (3, 10, 60.0)

    def setup_cache(self):
        root = tempfile.mkdtemp(prefix="bench_table_")
        for impl in self.params:
            _build(root, impl)
        return root

    def setup(self, root, impl):
        self.root = root
        self.n = 10_000_000
        self.table = _catalog(root, impl).load_table("db.t")
        self.data = _rows(self.n)
        self.table.append(_rows(self.n + 100))   # warm-up: lazy imports and schema caches of both libraries

    def time_append(self, root, impl):
        self.table.append(self.data)


def _metadata_file(root):
    """A table whose metadata holds 1,000 snapshots (history, logs, summaries as real appends write them)."""
    from paimon_engine.catalog import FileSystemCatalog
    from paimon_engine.spec.metadata import TableMetadata, serialize_metadata
    cat = FileSystemCatalog(f"{root}/fs")
    t = cat.create_table("db.t", _rows(0).schema)
    for i in range(3):
        t.append(_rows(10 * i))
    doc = t.metadata.to_dict()
    last = doc["snapshots"][-1]
    snaps, log = [], []
    parent = None
    for i in range(N_META_SNAPSHOTS):
        s = copy.deepcopy(last)
        s["snapshot-id"] = 10_000_000 + i
        s["sequence-number"] = i + 1
        s["timestamp-ms"] = last["timestamp-ms"] + i
        if parent is None:
            s.pop("parent-snapshot-id", None)
        else:
            s["parent-snapshot-id"] = parent
        s["summary"] = dict(s["summary"], **{"total-records": str(10 * (i + 1)), "total-data-files": str(i + 1)})
        parent = s["snapshot-id"]
        snaps.append(s)
        log.append({"timestamp-ms": s["timestamp-ms"], "snapshot-id": s["snapshot-id"]})
    doc["snapshots"] = snaps
    doc["snapshot-log"] = log
    doc["current-snapshot-id"] = parent
    doc["refs"] = {"main": {"snapshot-id": parent, "type": "branch"}}
    doc["last-sequence-number"] = N_META_SNAPSHOTS
    md = TableMetadata.from_dict(doc)
    path = f"{root}/big.metadata.json"
    with open(path, "wb") as f:
        f.write(serialize_metadata(md))
    return path


class MetadataLoad:
    """Read and parse the metadata JSON of a table with 1,000 snapshots into metadata objects and count the
    snapshots (``time_load``: ours makes a snapshot an object when it is first read, so only the current one is
    built), or make every snapshot an object (``time_load_all_snapshots``)."""
    params = ["paimon_engine", "pyiceberg"]
    param_names = ["impl"]
    timeout = 300

    def setup_cache(self):
        root = tempfile.mkdtemp(prefix="bench_meta_")
        return _metadata_file(root)

    def setup(self, path, impl):
        if impl == "paimon_engine":
            from paimon_engine.io import FileIO
            from paimon_engine.spec.metadata import parse_metadata
            io = FileIO()

            def load():
                md = parse_metadata(io.read_bytes(path), path)
                assert len(md.snapshots) == N_META_SNAPSHOTS
                return md
        else:
            from pyiceberg.io.pyarrow import PyArrowFileIO
            from pyiceberg.serializers import FromInputFile
            io = PyArrowFileIO()

            def load():
                md = FromInputFile.table_metadata(io.new_input(path))
                assert len(md.snapshots) == N_META_SNAPSHOTS
                return md
        self.load = load

    def time_load(self, path, impl):
        self.load()

    def time_load_all_snapshots(self, path, impl):
        # every snapshot made an object (ours builds them on first use; history listings and expiry read them all)
        for s in self.load().snapshots:
            s.snapshot_id

    def peakmem_load(self, path, impl):
        self.load()

    def timeraw_load_cold(self, path, impl):
        # what a user pays the first time: a fresh interpreter with both libraries (and pyarrow, which both read
        # files through) imported, not timed; then one read and parse of the file, with the current snapshot
        # looked up as any read does
        setup = f"import sys; sys.path.insert(0, {_CHECKOUT!r})\nimport pyarrow, pyarrow.fs\n"
        if impl == "paimon_engine":
            setup += ("from paimon_engine.io import FileIO\n"
                     "from paimon_engine.spec.metadata import parse_metadata\n"
                     "io = FileIO()\n")
            code = f"parse_metadata(io.read_bytes({path!r}), {path!r}).current_snapshot()"
        else:
            setup += ("from pyiceberg.io.pyarrow import PyArrowFileIO\n"
                     "from pyiceberg.serializers import FromInputFile\n"
                     "io = PyArrowFileIO()\n")
            code = f"FromInputFile.table_metadata(io.new_input({path!r})).current_snapshot()"
        return code, setup


N_WRITE_ROWS = 400_000


def _buffer_rows(start, n, days=8):
    """``id BIGINT, k INT (4 values), s STRING, d DATE (``days`` values)`` built from NumPy buffers: ``pa.array``
    goes through pyarrow's pandas shim, which imports pandas on its first use, and a fresh interpreter that built
    its input that way would have paid for that import before the timed write."""
    import numpy as np
    ids = np.arange(start, start + n, dtype=np.int64)
    k = (ids % 4).astype(np.int32)
    d = (18000 + (ids // 7) % days).astype(np.int32)
    words = [b"name-%07d" % i for i in range(start, start + n)]
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum([len(w) for w in words], out=offsets[1:])
    cols = [pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(ids)]),
            pa.Array.from_buffers(pa.int32(), n, [None, pa.py_buffer(k)]),
            pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(words))]),
            pa.Array.from_buffers(pa.date32(), n, [None, pa.py_buffer(d)])]
    return pa.Table.from_arrays(cols, names=["id", "k", "s", "d"])


def _build_write_tables(root, impl):
    """``db.plain`` (four appends of 25,000 rows) and ``db.part`` (the same rows, partitioned by ``k`` and the
    day of ``d``: 32 partitions) in a new SQLite catalog under ``root``."""
    cat = _catalog(root, impl)
    cat.create_namespace("db")
    schema = _buffer_rows(0, 1).schema
    if impl == "paimon_engine":
        tables = [cat.create_table("db.plain", schema),
                  cat.create_table("db.part", schema, partition_spec=[("k", "identity"), ("d", "day")])]
    else:
        from pyiceberg.partitioning import PartitionField, PartitionSpec
        from pyiceberg.transforms import DayTransform, IdentityTransform
        tables = [cat.create_table("db.plain", schema), cat.create_table("db.part", schema)]
        with tables[1].update_spec() as u:
            u.add_field("k", IdentityTransform(), "k")
            u.add_field("d", DayTransform(), "d_day")
    for t in tables:
        for i in range(4):
            t.append(_buffer_rows(25_000 * i, 25_000))


def _fresh_write_tables(impl):
    """A new temporary directory holding the tables of :func:`_build_write_tables`, built by a child process."""
    import subprocess
    import sys
    root = tempfile.mkdtemp(prefix="bench_cold_write_")
    here = os.path.dirname(os.path.abspath(__file__))
    code = (f"import sys; sys.path[:0] = [{_CHECKOUT!r}, {here!r}]; import bench_table as B; "
            f"B._build_write_tables({root!r}, {impl!r})")
    subprocess.run([sys.executable, "-c", code], check=True)
    return root


class PartitionedAppend:
    """Appending 400,000 rows to a table partitioned by ``k`` (identity) and the day of ``d``: 32 partitions, so
    32 Parquet files, plus the commit; paimon_engine and pyiceberg, one table each, growing by one snapshot per
    call."""
    params = ["paimon_engine", "pyiceberg"]
    param_names = ["impl"]
    timeout = 600
    number = 1
    repeat = (3, 10, 60.0)

    def setup(self, impl):
        self.root = tempfile.mkdtemp(prefix="bench_part_")
        _build_write_tables(self.root, impl)
        self.table = _catalog(self.root, impl).load_table("db.part")
        self.data = _buffer_rows(100_000, N_WRITE_ROWS)
        self.table.append(_buffer_rows(10_000_000, 1000))   # warm-up: lazy imports of both libraries

    def teardown(self, impl):
        shutil.rmtree(self.root, ignore_errors=True)

    def time_append(self, impl):
        self.table.append(self.data)


WRITE_OPS = ["append", "partitioned_append", "delete", "delete_copy_on_write"]


class WriteCold:
    """The first write of a fresh interpreter (what a script or a task that writes once pays). Not timed: pyarrow
    imported and the input built from buffers. Timed: importing the library's catalog, opening the SQLite catalog,
    loading the table, then one append of 1,000 rows (to ``db.plain``, or to the partitioned ``db.part``), or one
    delete of ``id < 1000`` from ``db.plain`` (100,000 rows in four files). Every sample gets new tables (built by
    a child process, so the timed interpreter has imported nothing of the library). ``delete`` is each library's
    default: paimon_engine writes a position-delete file (merge-on-read), pyiceberg rewrites the data file
    (copy-on-write, its only mode); ``delete_copy_on_write`` is paimon_engine's copy-on-write (pyiceberg: the same
    delete as ``delete``)."""
    params = (["paimon_engine", "pyiceberg"], WRITE_OPS)
    param_names = ["impl", "op"]
    timeout = 600

    def timeraw_first_write(self, impl, op):
        here = os.path.dirname(os.path.abspath(__file__))
        setup = (f"import sys; sys.path[:0] = [{_CHECKOUT!r}, {here!r}]\n"
                 "import bench_table as B\n"
                 f"root = B._fresh_write_tables({impl!r})\n"
                 "rows = B._buffer_rows(500_000, 1000)\n")
        code = (f"cat = B._catalog(root, {impl!r})\n"
                f"t = cat.load_table({'db.part' if op == 'partitioned_append' else 'db.plain'!r})\n")
        if op in ("append", "partitioned_append"):
            code += "t.append(rows)\n"
        elif impl == "paimon_engine" and op == "delete_copy_on_write":
            code += "t.delete('id < 1000', mode='copy-on-write')\n"
        else:
            code += "t.delete('id < 1000')\n"
        return code, setup
