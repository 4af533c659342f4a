"""Scan planning and reads: paimon_engine vs pyiceberg on the same tables (SQLite catalog, Parquet files).

* planning a table of 200 manifests / 2,000 data files, without and with a partition filter;
* reading 2M rows on one core, without deletes, with 5% of the rows removed by position deletes and with a
  filter keeping 1% of them; vs pyiceberg, Polars and Daft, over the floors ``pq.read_table`` and zstd;
* applying equality deletes (100k keys over 2M rows); pyiceberg refuses equality deletes (n/a);
* the anti-join alone (rows/s = 2M / time).
"""
import os
import tempfile

import numpy as np
import pyarrow as pa

#: the checkout these benchmarks belong to: a fresh interpreter (``timeraw_*``) imports paimon_engine from it (asv
#: puts a checkout on the benchmark process's path, not on its children's)
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N_ROWS = 2_000_000


def _catalogs(root):
    from paimon_engine.catalog import SqlCatalog
    from pyiceberg.catalog.sql import SqlCatalog as PyCatalog
    ours = SqlCatalog("default", uri=f"sqlite:///{root}/cat.db", warehouse=f"{root}/wh")
    peer = PyCatalog("default", uri=f"sqlite:///{root}/cat.db", warehouse=f"file://{root}/wh")
    return ours, peer


def _build_planning(root):
    from paimon_engine.catalog import SqlCatalog
    cat = SqlCatalog("default", uri=f"sqlite:///{root}/cat.db", warehouse=f"{root}/wh")
    cat.create_namespace("db")
    schema = pa.schema([("id", pa.int64()), ("k", pa.int32()), ("v", pa.float64()), ("s", pa.string())])
    t = cat.create_table("db.plan", schema, [("k", "identity")])
    for i in range(200):   # one manifest per commit, 10 partitions -> 10 files per commit
        t.append(pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64()),
                           "k": pa.array(range(10), pa.int32()), "v": pa.array([float(j) for j in range(10)]),
                           "s": [f"x{j}" for j in range(10)]}))
    # the same shape, but every commit writes one partition value: manifest summaries can prune
    t = cat.create_table("db.plan_clustered", schema, [("k", "identity"), ("id", "bucket[10]")])
    for i in range(200):
        t.append(pa.table({"id": pa.array(range(i * 10, i * 10 + 10), pa.int64()),
                           "k": pa.array([i % 10] * 10, pa.int32()), "v": pa.array([float(j) for j in range(10)]),
                           "s": [f"x{j}" for j in range(10)]}))


def _build_reads(root, fmt="parquet"):
    from paimon_engine.expressions import col
    from paimon_engine.catalog import SqlCatalog
    cat = SqlCatalog("default", uri=f"sqlite:///{root}/cat.db", warehouse=f"{root}/wh")
    cat.create_namespace("db")
    rng = np.random.default_rng(0)

    def chunk(lo, hi):
        n = hi - lo
        return pa.table({"id": pa.array(np.arange(lo, hi, dtype=np.int64)),
                         "k": pa.array(rng.integers(0, 1000, n).astype(np.int32)),
                         "v": pa.array(rng.random(n)),
                         "s": pa.array(np.char.add("s", (np.arange(lo, hi) % 1000).astype(str)))})
    props = {"write.format.default": fmt, "write.delete.format.default": fmt}
    for name in ("plain", "posdel", "eqdel"):
        t = cat.create_table(f"db.{name}", chunk(0, 1).schema, properties=props)
        for i in range(4):
            t.append(chunk(i * N_ROWS // 4, (i + 1) * N_ROWS // 4))
    t = cat.load_table("db.posdel")
    t.delete(col("id").isin(rng.choice(N_ROWS, N_ROWS // 20, replace=False).tolist()))
    t = cat.load_table("db.eqdel")
    t.delete(col("id").isin(rng.choice(N_ROWS, 100_000, replace=False).tolist()), mode="equality",
             equality_columns=["id"])
    if fmt == "row":
        t = cat.create_table("db.indexed", chunk(0, 1).schema,
                             properties=dict(props, **{"file-index.bitmap.columns": "id"}))
        for i in range(4):
            t.append(chunk(i * N_ROWS // 4, (i + 1) * N_ROWS // 4))


class PlanFiles:
    params = (["paimon_engine", "pyiceberg"], ["none", "k = 3", "k = 3 (clustered)"])
    param_names = ["impl", "filter"]
    timeout = 600

    def setup_cache(self):
        root = tempfile.mkdtemp(prefix="bench-scan-plan-")
        _build_planning(root)
        return root

    def setup(self, root, impl, filt):
        ours, peer = _catalogs(root)
        name = "db.plan_clustered" if "clustered" in filt else "db.plan"
        expr = filt.replace(" (clustered)", "")
        if impl == "paimon_engine":
            t = ours.load_table(name)
            self.run = (lambda: t.scan().plan_files()) if filt == "none" else \
                (lambda: t.scan(filter=expr).plan_files())
        else:
            t = peer.load_table(name)
            self.run = (lambda: list(t.scan().plan_files())) if filt == "none" else \
                (lambda: list(t.scan(row_filter=expr.replace("=", "==")).plan_files()))
        self.run()

    def time_plan(self, root, impl, filt):
        self.run()

    def timeraw_plan_cold(self, root, impl, filt):
        # a fresh interpreter: catalog and table loaded (not timed), then the first planning of the table
        name = "db.plan_clustered" if "clustered" in filt else "db.plan"
        expr = filt.replace(" (clustered)", "")
        setup = (f"import sys; sys.path[:0] = [{_CHECKOUT!r}, {os.path.dirname(os.path.abspath(__file__))!r}]\n"
                 "import pyarrow, pyarrow.fs\n"
                 "import bench_scan as B\n"
                 f"ours, peer = B._catalogs({root!r})\n")
        if impl == "paimon_engine":
            setup += f"t = ours.load_table({name!r})\n"
            code = "t.scan().plan_files()" if filt == "none" else f"t.scan(filter={expr!r}).plan_files()"
        else:
            setup += f"t = peer.load_table({name!r})\n"
            code = "list(t.scan().plan_files())" if filt == "none" else \
                f"list(t.scan(row_filter={expr.replace('=', '==')!r}).plan_files())"
        return code, setup


def _before_delete_read(ours, name):
    """Our read of table ``name`` at the snapshot before its delete commit (the same data files, no delete file):
    the floor of a read that applies the deletes."""
    t = ours.load_table(name)
    before = t.current_snapshot().parent_snapshot_id   # the four appends, before the delete commit
    tasks = t.scan(snapshot_id=before).plan_files()
    if any(task.deletes for task in tasks) or \
            sorted(x.path for x in tasks) != sorted(x.path for x in t.scan().plan_files()):
        raise NotImplementedError("the snapshot before the delete does not hold the same data files")
    return lambda: t.scan(snapshot_id=before).to_arrow()


def _no_deletes_plus_delete_files(ours, name):
    """Our read of table ``name`` without its deletes (:func:`_before_delete_read`), then our read of the deleted
    positions of every task from its delete files (a fresh reader each call: nothing cached between calls); the
    deletes are not applied. The least a read that applies the deletes can cost: it reads the same data files and
    the same delete files."""
    read = _before_delete_read(ours, name)
    scan = ours.load_table(name).scan()
    tasks = [task for task in scan.plan_files() if task.deletes]
    if not tasks:
        raise NotImplementedError("the table has no delete files")

    def run():
        out = read()
        reader = scan._reader()
        deleted = sum(len(reader._task_positions(task)) for task in tasks)
        if deleted != N_ROWS // 20:
            raise AssertionError(f"{deleted} deleted positions, not {N_ROWS // 20}")
        return out
    return run


READ_IMPLS = ["paimon_engine", "pyiceberg", "polars", "daft", "paimon_engine_no_deletes",
              "no_deletes_plus_delete_files", "pq.read_table", "zstd_floor", "read_zstd_floor"]


def one_core():
    """Every reader on one core: our pools (``PAIMON_ENGINE_THREADS=1``: kernels run on the calling thread),
    Arrow's CPU and I/O pools (``pyarrow.set_cpu_count(1)`` / ``set_io_thread_count(1)``; pyiceberg and
    ``pq.read_table`` decode through them), Polars (``POLARS_MAX_THREADS=1``, read when Polars is first imported,
    so it is set before that import) and Daft (its native runner with ``num_threads=1``). asv runs every
    benchmark in a fresh process, so this holds for the whole measurement."""
    os.environ["PAIMON_ENGINE_THREADS"] = "1"
    os.environ["POLARS_MAX_THREADS"] = "1"
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)


def _daft_one_thread(daft):
    """Daft's native runner on one thread, set once per process: asv calls ``setup`` again for every repeat in
    the same process, and Daft refuses to set its worker threads a second time."""
    global _DAFT_ONE_THREAD
    if not _DAFT_ONE_THREAD:
        daft.set_runner_native(num_threads=1)
        _DAFT_ONE_THREAD = True


_DAFT_ONE_THREAD = False


def _column_chunk_layout(path, columns):
    """The column chunks of ``columns`` of a Parquet file: (codec, chunk start, chunk size, [(page body offset in
    the chunk, compressed size, uncompressed size) of each compressed page])."""
    import pyarrow.parquet as pq
    from paimon_engine.scan.parquet_pages import _Cursor, _I32
    md = pq.ParquetFile(path).metadata
    with open(path, "rb") as f:
        raw = f.read()
    out = []
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        for j in range(rg.num_columns):
            c = rg.column(j)
            if c.path_in_schema not in columns:
                continue
            start = c.dictionary_page_offset if c.has_dictionary_page and c.dictionary_page_offset else \
                c.data_page_offset
            pos, end, pages = start, start + c.total_compressed_size, []
            while pos < end:
                cur, sizes = _Cursor(raw[pos:pos + 4096]), {}

                def field(fid, t, cur=cur, sizes=sizes):
                    if fid in (2, 3) and t == _I32:   # uncompressed / compressed page size
                        sizes[fid] = cur.zigzag()
                        return True
                    return False
                cur.struct(field)
                if c.compression != "UNCOMPRESSED":
                    pages.append((pos + cur.pos - start, sizes[3], sizes[2]))
                pos += cur.pos + sizes[3]
            out.append((c.compression.lower(), start, c.total_compressed_size, pages))
    return out


def _column_chunk_pages(path, columns):
    """The compressed pages (codec, bytes, uncompressed size) of ``columns`` of a Parquet file, for the
    decompression floor: the least work any reader of those columns does."""
    with open(path, "rb") as f:
        raw = f.read()
    return [(codec, raw[start + off:start + off + size], n)
            for codec, start, _, pages in _column_chunk_layout(path, columns) for off, size, n in pages]


def _page_decompressor(codecs):
    """A function (codec, page bytes, decompressed size) -> the page decompressed, for the floors: zstd pages
    through python-zstandard's one-call decompression (the fastest zstd at hand: Arrow's codec takes up to 15%
    longer on the same pages on some processors), other codecs through Arrow's."""
    import zstandard
    arrow = {c: pa.Codec(c) for c in codecs if c != "zstd"}
    zstd = zstandard.ZstdDecompressor()

    def decompress(codec, data, size):
        if codec == "zstd":
            return zstd.decompress(data, max_output_size=size)
        return arrow[codec].decompress(data, decompressed_size=size)
    return decompress


def _read_and_decompress(layouts):
    """A floor of reading Parquet files: each column chunk read from its file (one read per chunk, as a reader of
    a local file does) and each of its pages decompressed (:func:`_page_decompressor`; each page's output
    dropped before the next, so the work is the decompression alone), without decoding; ``layouts``: [(path,
    :func:`_column_chunk_layout`)]. Returns the bytes decompressed."""
    decompress = _page_decompressor({c for _, layout in layouts for c, *_ in layout})

    def run():
        total = 0
        for path, layout in layouts:
            with pa.OSFile(path) as f:
                for codec, start, size, pages in layout:
                    chunk = memoryview(f.read_at(size, start))
                    for off, n, u in pages:
                        total += len(decompress(codec, chunk[off:off + n], u))
        return total
    return run


#: the filtered cases of ReadTable (the case is the filter string paimon_engine and pyiceberg take): (column,
#: operator, value)
_FILTERS = {"k < 10": ("k", "<", 10), "id < 20000": ("id", "<", 20000), "s = 's7'": ("s", "=", "s7"),
            "s in ('s7', 's8', 's100')": ("s", "in", ["s7", "s8", "s100"])}


def _filter_source(lib, case):
    """The filter of ``case`` as Polars (``lib`` "pl") or Daft ("daft") source text."""
    column, op, value = _FILTERS[case]
    ref = f"{lib}.col({column!r})"
    return f"{ref}.is_in({value!r})" if op == "in" else f"{ref} {'==' if op == '=' else op} {value!r}"


def _pq_filter(case):
    column, op, value = _FILTERS[case]
    return [(column, "==" if op == "=" else op, value)]


class ReadTable:
    """Reading the 2M-row table (4 Parquet files; int64, int32, float64, string), one core per reader (see
    :func:`one_core`): whole, with 5% of the rows removed by position deletes, with a filter keeping 1% of the
    rows spread over every page (``k < 10``), with one keeping the first 1% of the rows (``id < 20000``: one
    data file's first pages), and with filters on the string column keeping 0.1% and 0.3% of the rows, spread
    over every page (``s = 's7'``, ``s in (...)``). Peers: pyiceberg, Polars (``pl.scan_iceberg(...).collect()``), Daft
    (``daft.read_iceberg``); floors over the same data files: ``paimon_engine_no_deletes`` (for
    ``positions_5pct`` only: our own read of the same table at the snapshot before the delete, i.e. the same
    four data files with no delete files), ``no_deletes_plus_delete_files`` (for ``positions_5pct`` only: that
    read and then our read of the deleted positions from the delete files, not applied; the least a read that
    applies the deletes can cost),
    ``pq.read_table`` (Arrow's own decoding, deletes ignored: shown only without them), ``zstd_floor`` (only
    the zstd decompression of every page of the columns read, without decoding: with the kept rows spread over
    every page, a filtered read still decompresses every page; none for ``id < 20000``) and ``read_zstd_floor``
    (the same with each column chunk first read from its file, as any reader of the files must). Polars and Daft
    plan through pyiceberg; a reader that cannot do a case is n/a."""
    params = (READ_IMPLS, ["none", "positions_5pct", "k < 10", "id < 20000", "s = 's7'",
                           "s in ('s7', 's8', 's100')"])
    param_names = ["impl", "case"]
    timeout = 900
    number = 1
    repeat = (5, 10, 60.0)
    warmup_time = 2.0   # steady state for both sides (a fresh process first grows its allocators)

    def setup_cache(self):
        root = tempfile.mkdtemp(prefix="bench-scan-read-")
        _build_reads(root)
        return root

    def setup(self, root, impl, case):
        one_core()
        ours, peer = _catalogs(root)
        name = "plain" if case != "positions_5pct" else "posdel"
        flt = case if case in _FILTERS else None
        if impl == "paimon_engine":
            t = ours.load_table(f"db.{name}")
            self.run = (lambda: t.scan(filter=flt).to_arrow()) if flt else (lambda: t.scan().to_arrow())
        elif impl == "pyiceberg":
            t = peer.load_table(f"db.{name}")
            self.run = (lambda: t.scan(row_filter=flt).to_arrow()) if flt else (lambda: t.scan().to_arrow())
        elif impl == "paimon_engine_no_deletes":
            if case != "positions_5pct":
                raise NotImplementedError("the same read as paimon_engine when there are no deletes")
            self.run = _before_delete_read(ours, f"db.{name}")
        elif impl == "no_deletes_plus_delete_files":
            if case != "positions_5pct":
                raise NotImplementedError("a floor of reads that apply position deletes")
            self.run = _no_deletes_plus_delete_files(ours, f"db.{name}")
        elif impl == "polars":
            import polars as pl
            t = peer.load_table(f"db.{name}")
            if flt:
                where = eval(_filter_source("pl", flt), {"pl": pl})
                self.run = lambda: pl.scan_iceberg(t).filter(where).collect()
            else:
                self.run = lambda: pl.scan_iceberg(t).collect()
        elif impl == "daft":
            try:
                import daft
            except ImportError:
                raise NotImplementedError("daft is not installed") from None
            _daft_one_thread(daft)
            t = peer.load_table(f"db.{name}")
            if flt:
                where = eval(_filter_source("daft", flt), {"daft": daft})
                self.run = lambda: daft.read_iceberg(t).where(where).to_arrow()
            else:
                self.run = lambda: daft.read_iceberg(t).to_arrow()
        else:
            if case == "positions_5pct":
                raise NotImplementedError("a floor reads the data files alone (no deletes)")
            import pyarrow.parquet as pq
            t = peer.load_table(f"db.{name}")
            files = [task.file.file_path.removeprefix("file://") for task in t.scan().plan_files()]
            if impl == "pq.read_table":
                filters = _pq_filter(flt) if flt else None
                self.run = lambda: pq.read_table(files, use_threads=False, filters=filters)
            else:
                if case == "id < 20000":
                    raise NotImplementedError("the rows kept lie in a few pages of one file: no floor of all pages")
                if impl == "read_zstd_floor":
                    self.run = _read_and_decompress([(f, _column_chunk_layout(f, {"id", "k", "v", "s"}))
                                                     for f in files])
                else:
                    pages = [p for f in files for p in _column_chunk_pages(f, {"id", "k", "v", "s"})]
                    decompress = _page_decompressor({c for c, _, _ in pages})
                    self.run = lambda: sum(len(decompress(c, b, n)) for c, b, n in pages)
        got = self.run()   # warm-up: imports and the OS page cache, for every reader
        if impl not in ("zstd_floor", "read_zstd_floor"):
            want = {"none": N_ROWS, "positions_5pct": N_ROWS - N_ROWS // 20}.get(case)
            if impl in ("paimon_engine_no_deletes", "no_deletes_plus_delete_files"):
                want = N_ROWS
            rows = got.num_rows if hasattr(got, "num_rows") else got.height
            if want is not None and rows != want:
                raise NotImplementedError(f"{impl} read {rows} rows, not {want}")

    def time_to_arrow(self, root, impl, case):
        self.run()

    def peakmem_to_arrow(self, root, impl, case):
        self.run()


class ReadTableCold:
    """The first read of a process: a fresh interpreter has imported the reader, loaded the catalog and the table
    (not timed), then reads the 2M-row table of :class:`ReadTable` once, on one core (:func:`one_core`). What a
    one-shot script or a new worker pays: the reader's lazy imports, its first allocations and the decoding.
    The package is byte-compiled first (``make bench``), as an installed wheel is."""
    params = (["paimon_engine", "pyiceberg", "polars", "daft"], ["none", "positions_5pct", "k < 10"])
    param_names = ["impl", "case"]
    timeout = 900
    repeat = (3, 7, 120.0)

    def setup_cache(self):
        root = tempfile.mkdtemp(prefix="bench-scan-cold-")
        _build_reads(root)
        return root

    def setup(self, root, impl, case):
        if impl == "daft":
            try:
                import daft  # noqa: F401
            except ImportError:
                raise NotImplementedError("daft is not installed") from None

    def timeraw_first_read(self, root, impl, case):
        name = "plain" if case != "positions_5pct" else "posdel"
        flt = case if case in _FILTERS else None
        want = {"none": N_ROWS, "positions_5pct": N_ROWS - N_ROWS // 20}.get(case)
        setup = (f"import sys; sys.path[:0] = [{_CHECKOUT!r}, {os.path.dirname(os.path.abspath(__file__))!r}]\n"
                 "import bench_scan as B\n"
                 "B.one_core()\n")
        if impl == "paimon_engine":
            setup += ("import paimon_engine\n"
                      f"ours, _ = B._catalogs({root!r})\n"
                      f"t = ours.load_table('db.{name}')\n")
            code = f"out = t.scan(filter={flt!r}).to_arrow()\n" if flt else "out = t.scan().to_arrow()\n"
            rows = "out.num_rows"
        else:
            setup += (f"_, peer = B._catalogs({root!r})\n"
                      f"t = peer.load_table('db.{name}')\n")
            if impl == "pyiceberg":
                code = f"out = t.scan(row_filter={flt!r}).to_arrow()\n" if flt else "out = t.scan().to_arrow()\n"
                rows = "out.num_rows"
            else:
                # (the import, the scan, how it filters, how it ends, how its result counts rows)
                imports, scan, where, end, rows = {
                    "polars": ("import polars as pl\n", "pl.scan_iceberg(t)", "filter({})", "collect()",
                               "out.height"),
                    "daft": ("import daft\nB._daft_one_thread(daft)\n", "daft.read_iceberg(t)", "where({})",
                             "to_arrow()", "out.num_rows")}[impl]
                setup += imports
                lib = "pl" if impl == "polars" else "daft"
                steps = [scan] + ([where.format(_filter_source(lib, flt))] if flt else []) + [end]
                code = f"out = {'.'.join(steps)}\n"
        if want is not None:
            code += f"assert {rows} == {want}, {rows}\n"
        return code, setup


class EqualityDeletes:
    """100k equality-deleted ids over 2M rows, every reader on one core (:func:`one_core`). pyiceberg 0.12 refuses
    equality deletes (reported as n/a), and so do Polars and Daft, which plan through it.
    ``paimon_engine_no_deletes`` is the floor: our own read of the same table at the snapshot before the delete,
    i.e. the same four data files with no delete file."""
    params = (["paimon_engine", "pyiceberg", "paimon_engine_no_deletes"],)
    param_names = ["impl"]
    timeout = 900
    number = 1
    repeat = (5, 10, 60.0)
    warmup_time = 2.0   # steady state for both sides (a fresh process first grows its allocators)

    def setup_cache(self):
        root = tempfile.mkdtemp(prefix="bench-scan-eq-")
        _build_reads(root)
        return root

    def setup(self, root, impl):
        one_core()
        ours, peer = _catalogs(root)
        if impl == "pyiceberg":
            t = peer.load_table("db.eqdel")
            try:
                t.scan().to_arrow()
            except Exception as exc:
                raise NotImplementedError(f"pyiceberg cannot read equality deletes: {exc}") from None
            self.run = lambda: t.scan().to_arrow()
        elif impl == "paimon_engine_no_deletes":
            self.run = _before_delete_read(ours, "db.eqdel")
        else:
            t = ours.load_table("db.eqdel")
            self.run = lambda: t.scan().to_arrow()
        self.run()   # warm-up

    def time_to_arrow(self, root, impl):
        self.run()


class AntiJoin:
    """The equality-delete anti-join alone: 100k delete keys probed by 2M rows (int64 and string keys)."""
    params = (["int64", "string"],)
    param_names = ["key"]

    def setup(self, key):
        from paimon_engine.scan.deletes import EqualityDeleteSet
        rng = np.random.default_rng(0)
        ids = np.arange(N_ROWS, dtype=np.int64)
        keys = rng.choice(N_ROWS, 100_000, replace=False)
        if key == "int64":
            self.data = pa.array(ids)
            self.deletes = pa.array(keys)
        else:
            self.data = pa.array(np.char.add("key-", ids.astype(str)))
            self.deletes = pa.array(np.char.add("key-", keys.astype(str)))
        self.cls = EqualityDeleteSet

    def time_build_and_probe(self, key):
        self.cls([1], [self.deletes]).matches([self.data])


class ReadRowFiles:
    """The same 2M-row read from Paimon ``.row`` data files (position deletes become row selections), on one core
    (:func:`one_core`). No peer reads ``.row`` tables; ``paimon_engine_no_deletes`` is the floor of the cases
    with deletes: our read of the same table at the snapshot before the delete (the same data files, no delete
    file)."""
    params = (["paimon_engine", "paimon_engine_no_deletes"], ["none", "positions_5pct", "equality_100k"])
    param_names = ["impl", "deletes"]
    timeout = 900
    number = 1
    repeat = (5, 10, 60.0)
    warmup_time = 2.0   # steady state for both sides (a fresh process first grows its allocators)

    def setup_cache(self):
        root = tempfile.mkdtemp(prefix="bench-scan-row-")
        _build_reads(root, "row")
        return root

    def setup(self, root, impl, deletes):
        one_core()
        ours, _ = _catalogs(root)
        name = {"none": "plain", "positions_5pct": "posdel", "equality_100k": "eqdel"}[deletes]
        if impl == "paimon_engine_no_deletes":
            if deletes == "none":
                raise NotImplementedError("the read without deletes is the paimon_engine case itself")
            self.run = _before_delete_read(ours, f"db.{name}")
        else:
            t = ours.load_table(f"db.{name}")
            self.run = lambda: t.scan().to_arrow()
        self.run()

    def time_to_arrow(self, root, impl, deletes):
        self.run()


class RowPointQuery:
    """``id = x`` on the 2M-row ``.row`` table: with a bitmap file index on ``id`` (one block decoded) and
    without (column metrics keep one of the four files, which is read whole and filtered)."""
    params = (["bitmap_index", "no_index"],)
    param_names = ["index"]
    timeout = 900

    def setup_cache(self):
        root = tempfile.mkdtemp(prefix="bench-scan-point-")
        _build_reads(root, "row")
        return root

    def setup(self, root, index):
        from paimon_engine.expressions import col
        ours, _ = _catalogs(root)
        t = ours.load_table("db.indexed" if index == "bitmap_index" else "db.plain")
        key = 1_234_567
        self.run = lambda: t.scan(filter=col("id") == key).to_arrow()
        assert self.run().column("id").to_pylist() == [key]

    def time_point_query(self, root, index):
        self.run()
