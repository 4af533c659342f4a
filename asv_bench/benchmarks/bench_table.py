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


def _build(root, impl):
    uri = f"sqlite:///{root}/{impl}.db"
    if impl == "paimon_engine":
        from paimon_engine.catalog import SqlCatalog
        cat = SqlCatalog("bench", uri=uri, warehouse=f"{root}/wh-{impl}")
        cat.create_namespace("db")
        t = cat.create_table("db.t", _rows(0).schema)
        for i in range(N_SNAPSHOTS):
            t.append(_rows(10 * i))
    else:
        from pyiceberg.catalog.sql import SqlCatalog
        cat = SqlCatalog("bench", uri=uri, warehouse=f"file://{root}/wh-{impl}")
        cat.create_namespace("db")
        t = cat.create_table("db.t", _rows(0).schema)
        for i in range(N_SNAPSHOTS):
            t.append(_rows(10 * i))
    return uri


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
        uri = f"sqlite:///{root}/{impl}.db"
        if impl == "paimon_engine":
            from paimon_engine.catalog import SqlCatalog
            self.table = SqlCatalog("bench", uri=uri, warehouse=f"{root}/wh-{impl}").load_table("db.t")
        else:
            from pyiceberg.catalog.sql import SqlCatalog
            self.table = SqlCatalog("bench", uri=uri, warehouse=f"file://{root}/wh-{impl}").load_table("db.t")
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
