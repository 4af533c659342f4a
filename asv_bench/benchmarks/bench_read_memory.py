"""Read memory and the point query through every entry point.

* ``ReadMemory``: peak memory of reading the 2M-row benchmark table of ``bench_scan`` (4 Parquet files, no
  deletes and 5% position deletes) with ``to_arrow()`` and by draining ``to_arrow_batch_reader()``,
  paimon_engine and pyiceberg in the same class. ``peakmem_`` is asv's whole-process peak (interpreter and
  imports included); ``track_peak_over_result`` runs the read in a fresh process whose imports were warmed by
  reading a one-row table, and divides the growth of its peak resident memory by the size of the Arrow result.
* ``PointQueryForms``: ``id = x`` on the 2M-row ``.row`` tables (with a bitmap file index on ``id`` and without)
  through ``TableScan`` directly, ``table.scan(row_filter=...)`` with an expression and with a string, and
  ``Table.to_arrow(filter)``: every form plans through the same planner, so the index answers for all of them.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_scan as S  # noqa: E402

KEY = 1_234_567


def _build(root, fmt="parquet"):
    S._build_reads(root, fmt)
    ours, _ = S._catalogs(root)
    tiny = ours.load_table("db.plain").scan(limit=1).to_arrow()
    t = ours.create_table("db.tiny", tiny.schema, properties={"write.format.default": fmt})
    t.append(tiny)


def _open(root, impl, name):
    ours, peer = S._catalogs(root)
    return (ours if impl == "paimon_engine" else peer).load_table(f"db.{name}")


def _drain(reader):
    n = 0
    for b in reader:
        n += b.num_rows
    return n


_FRESH = r"""
import os, resource, sys
sys.path.insert(0, {here!r})
import bench_read_memory as M
impl, mode, name, root = {impl!r}, {mode!r}, {name!r}, {root!r}
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
warm = M._open(root, impl, "tiny")
warm.scan().to_arrow()
M._drain(warm.scan().to_arrow_batch_reader())
t = M._open(root, impl, name)
before = rss()
if mode == "to_arrow":
    size = t.scan().to_arrow().nbytes
else:
    size = 0
    for b in t.scan().to_arrow_batch_reader():
        size += b.nbytes
        del b
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print((peak - before) / size)
"""


class ReadMemory:
    params = (["paimon_engine", "pyiceberg"], ["to_arrow", "batch_reader"], ["none", "positions_5pct"])
    param_names = ["impl", "read", "deletes"]
    timeout = 900
    number = 1
    repeat = 1

    def setup_cache(self):
        root = tempfile.mkdtemp(prefix="bench-read-memory-")
        _build(root)
        return root

    def setup(self, root, impl, read, deletes):
        self.t = _open(root, impl, "plain" if deletes == "none" else "posdel")
        if read == "to_arrow":
            self.run = lambda: self.t.scan().to_arrow()
        else:
            self.run = lambda: _drain(self.t.scan().to_arrow_batch_reader())

    def peakmem_read(self, root, impl, read, deletes):
        self.run()

    def track_peak_over_result(self, root, impl, read, deletes):
        code = _FRESH.format(here=HERE, impl=impl, mode=read, name="plain" if deletes == "none" else "posdel",
                             root=root)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return float(out.stdout.strip().splitlines()[-1])

    track_peak_over_result.unit = "ratio"


class PointQueryForms:
    params = (["TableScan", "scan(row_filter=expr)", "scan(row_filter=str)", "Table.to_arrow(filter)"],
              ["bitmap_index", "no_index"])
    param_names = ["form", "index"]
    timeout = 900

    def setup_cache(self):
        root = tempfile.mkdtemp(prefix="bench-point-forms-")
        S._build_reads(root, "row")
        return root

    def setup(self, root, form, index):
        from paimon_engine.expressions import col
        from paimon_engine.scan.planner import TableScan
        ours, _ = S._catalogs(root)
        t = ours.load_table("db.indexed" if index == "bitmap_index" else "db.plain")
        expr = col("id") == KEY
        if form == "TableScan":
            self.run = lambda: TableScan(t.metadata, t.io, filter=expr).to_arrow()
        elif form == "scan(row_filter=expr)":
            self.run = lambda: t.scan(row_filter=expr).to_arrow()
        elif form == "scan(row_filter=str)":
            self.run = lambda: t.scan(row_filter=f"id = {KEY}").to_arrow()
        else:
            self.run = lambda: t.to_arrow(expr)
        assert self.run().column("id").to_pylist() == [KEY]

    def time_point_query(self, root, form, index):
        self.run()
