"""Paimon .row files: paimon_engine vs pypaimon 2.1.0, with zstd-only baselines.

Workload (issue 3): ``id BIGINT, price DOUBLE, name STRING (~12 chars), qty INT (10% null)``, 64 KiB blocks.
paimon_engine and the zstd baselines use N = 1,000,000 rows. pypaimon is much slower, so in the full-file
benchmarks its parameter ``pypaimon_x50`` runs on N/50 rows (the report multiplies its times by 50); the point
lookups (``RowLookup``) run every implementation on the same 1M-row file.
``zstd`` compresses / decompresses exactly the blocks of the engine's file (level 1), the floor any
reader or writer of the format pays; ``zstd_mt`` decompresses them on as many threads as the engine's reader
uses (``paimon_engine._parallel.thread_count()``). ``paimon_engine`` reads with its default threads,
``paimon_engine_1t`` on the calling thread alone (``threads=1``): the per-core cost. ``RowReadFloors`` and the
``zstd_sink`` writer add the work every reader or writer does besides zstd: reading the file and writing the
values out, handing the compressed frames to the sink.
"""
import io
import os
import tempfile

import numpy as np

N = 1_000_000
PEER_SCALE = 50
BLOCK = 65536
#: the checkout these benchmarks belong to: a fresh interpreter (``timeraw_*``) imports paimon_engine from it (asv
#: puts a checkout on the benchmark process's path, not on its children's)
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMPLS = ["paimon_engine", "paimon_engine_1t", "pypaimon_x50", "zstd", "zstd_mt"]


def _schema():
    from paimon_engine import types as T
    return T.RowType.of(("id", T.BigIntType()), ("price", T.DoubleType()), ("name", T.STRING()),
                        ("qty", T.IntType()))


def _table(n):
    import pyarrow as pa
    rng = np.random.default_rng(42)
    names = pa.array([f"name-{i:07d}" for i in range(n)])
    qty = pa.array(rng.integers(0, 1000, n).astype(np.int32), mask=rng.random(n) < 0.1)
    return pa.table({"id": np.arange(n, dtype=np.int64), "price": rng.random(n) * 1000, "name": names, "qty": qty})


def _write_engine(path, table):
    from paimon_engine.formats.row import RowFileWriter
    with RowFileWriter(path, _schema(), block_size=BLOCK) as w:
        w.write(table)


def _big_file(prefix):
    """The workload's N rows written by the engine to a new temporary .row file (setup_cache of the classes)."""
    path = os.path.join(tempfile.mkdtemp(prefix=prefix), "big.row")
    _write_engine(path, _table(N))
    return path


def _blocks(path):
    """(compressed frames, uncompressed payloads) of a .row file."""
    import zstandard
    from paimon_engine.formats.row import RowFileReader
    r = RowFileReader(path, _schema())
    data = open(path, "rb").read()
    frames = [data[o:o + c] for o, c in zip(r.index.offsets, r.index.compressed_sizes)]
    d = zstandard.ZstdDecompressor()
    payloads = [d.decompress(f, max_output_size=int(u)) for f, u in zip(frames, r.index.uncompressed_sizes)]
    return frames, payloads, [int(u) for u in r.index.uncompressed_sizes]


def _decompress(dctx, frames, usizes):
    """The compressed blocks ``frames`` decompressed from memory, each to its ``usizes`` entry: the zstd floor."""
    for f, u in zip(frames, usizes):
        dctx.decompress(f, max_output_size=u)


def _decompress_threaded(dctxs, frames, usizes):
    """The blocks decompressed on len(dctxs) threads (contiguous shares, one decompressor each)."""
    from concurrent.futures import ThreadPoolExecutor
    k = len(dctxs)
    cuts = np.linspace(0, len(frames), k + 1).astype(int)

    def part(i):
        _decompress(dctxs[i], frames[cuts[i]:cuts[i + 1]], usizes[cuts[i]:cuts[i + 1]])
    global _ZPOOL
    if _ZPOOL is None:
        _ZPOOL = ThreadPoolExecutor(k)
    list(_ZPOOL.map(part, range(k)))


_ZPOOL = None


def _read_decompress(path, runs, offsets, frames, usizes, dctx, out=None):
    """The blocks of ``runs`` read from the file (one ``pread`` per run of adjacent blocks, as the engine reads
    them) and decompressed; with ``out``, each block's bytes are then written into it one after another."""
    at = 0
    fd = os.open(path, os.O_RDONLY)
    try:
        for run in runs:
            start = offsets[run[0]]
            raw = memoryview(os.pread(fd, offsets[run[-1]] + len(frames[run[-1]]) - start, start))
            for b in run:
                got = dctx.decompress(raw[offsets[b] - start:offsets[b] - start + len(frames[b])],
                                      max_output_size=usizes[b])
                if out is not None:
                    out[at:at + usizes[b]] = np.frombuffer(got, np.uint8)
                    at += usizes[b]
    finally:
        os.close(fd)


def _pp_fields():
    from pypaimon.schema import data_types as PT
    return [PT.DataField(0, "id", PT.AtomicType("BIGINT")), PT.DataField(1, "price", PT.AtomicType("DOUBLE")),
            PT.DataField(2, "name", PT.AtomicType("STRING")), PT.DataField(3, "qty", PT.AtomicType("INT"))]


def _pp_opener(names=("id", "price", "name", "qty")):
    """``open(path, row_indices=None)``: pypaimon's reader of the ``names`` columns of ``path`` (only the rows
    ``row_indices`` when given), its classes imported and its fields made here, once."""
    from pypaimon.filesystem.local_file_io import LocalFileIO
    from pypaimon.read.reader.format_row_reader import FormatRowReader
    fields = _pp_fields()

    def open_(path, row_indices=None):
        return FormatRowReader(LocalFileIO(), path, list(names), fields, None, batch_size=4096,
                               row_indices=row_indices)
    return open_


def _pp_reader(path, names=("id", "price", "name", "qty"), row_indices=None):
    return _pp_opener(names)(path, row_indices)


def _pp_read_all(reader):
    import pyarrow as pa
    out = []
    while (b := reader.read_arrow_batch()) is not None:
        out.append(b)
    return pa.Table.from_batches(out)


class RowFile:
    params = IMPLS
    param_names = ["impl"]
    timeout = 300
    # steady state: a fresh process first grows its allocators (every implementation gets the same warm-up)
    warmup_time = 2.0
    repeat = (5, 20, 60.0)

    def setup_cache(self):
        d = tempfile.mkdtemp(prefix="bench_row_")
        big, small = os.path.join(d, "big.row"), os.path.join(d, "small.row")
        _write_engine(big, _table(N))
        _write_engine(small, _table(N // PEER_SCALE))
        return {"big": big, "small": small}

    def setup(self, paths, impl):
        import zstandard
        from paimon_engine.formats.row import RowFileReader
        self.paths = paths
        rng = np.random.default_rng(7)
        if impl.startswith("paimon_engine"):
            self.reader = RowFileReader(paths["big"], _schema(), threads=1 if impl.endswith("_1t") else None)
            self.reader.take([1, 0])  # first use imports pyarrow.compute (one-off, not per call)
            self.reader.get_row(0)
            self.rows = rng.integers(0, N, 1000)
            self.one = iter(rng.integers(0, N, 10**6).tolist())
        elif impl == "pypaimon_x50":
            try:
                import pypaimon  # noqa: F401
            except ImportError:
                raise NotImplementedError("pypaimon not installed")
            self.rows = sorted(rng.integers(0, N // PEER_SCALE, 1000 // PEER_SCALE).tolist())
            self.one = iter(rng.integers(0, N // PEER_SCALE, 10**6).tolist())
        else:
            from paimon_engine._parallel import thread_count
            self.frames, self.payloads, self.usizes = _blocks(paths["big"])
            self.cctx = zstandard.ZstdCompressor(level=1)
            self.dctx = zstandard.ZstdDecompressor()
            self.dctxs = [zstandard.ZstdDecompressor() for _ in range(thread_count())]

    def _zstd(self, impl):
        if impl == "zstd_mt":
            _decompress_threaded(self.dctxs, self.frames, self.usizes)
        else:
            _decompress(self.dctx, self.frames, self.usizes)

    # -- full read to Arrow -------------------------------------------------------
    def time_read_arrow(self, paths, impl):
        if impl.startswith("paimon_engine"):
            self.reader.to_arrow()
        elif impl == "pypaimon_x50":
            _pp_read_all(_pp_reader(paths["small"]))
        else:
            self._zstd(impl)

    def peakmem_read_arrow(self, paths, impl):
        if impl.startswith("paimon_engine"):
            self.reader.to_arrow()
        elif impl == "pypaimon_x50":
            _pp_read_all(_pp_reader(paths["small"]))

    # -- projection of one column ---------------------------------------------------
    def time_read_one_column(self, paths, impl):
        if impl.startswith("paimon_engine"):
            self.reader.to_arrow(columns=["price"])
        elif impl == "pypaimon_x50":
            _pp_read_all(_pp_reader(paths["small"], names=("price",)))
        else:
            self._zstd(impl)


class RowReadFloors:
    """The full read on one core (``paimon_engine``: ``threads=1``) against three floors measured in the same
    run: ``zstd`` decompresses the blocks from memory (RowFile's floor); ``zstd_read`` first reads them from the
    file (one ``pread`` per run of adjacent blocks, as the engine reads them); ``zstd_read_out`` also writes
    every decompressed block's bytes once into an array as large as all of them: reading the file,
    decompressing it and writing that many bytes out, which any reader that returns the file's values as
    columns does. The array is kept from call to call (memory already backed), as the engine's outputs reuse
    the memory of the last call's in this steady state (no page faults per read): the floor pays no more for
    new memory than the engine does. ``RowRatios.track_read_arrow_1t_over_read_decompress_copy`` is the same
    ratio within one process."""
    params = (["paimon_engine", "zstd", "zstd_read", "zstd_read_out"],)
    param_names = ["impl"]
    timeout = 300
    warmup_time = 2.0
    repeat = (5, 20, 60.0)

    def setup_cache(self):
        return _big_file("bench_row_floors_")

    def setup(self, path, impl):
        import zstandard
        from paimon_engine.formats.row import RowFileReader
        if impl == "paimon_engine":
            self.reader = RowFileReader(path, _schema(), threads=1)
            self.reader.get_row(0)
            return
        self.frames, _, self.usizes = _blocks(path)
        self.dctx = zstandard.ZstdDecompressor()
        r = RowFileReader(path, _schema())
        self.offsets = r.index.offsets.tolist()
        self.runs = r._runs(range(r.num_blocks))
        self.out = np.empty(sum(self.usizes), np.uint8)
        self.out.fill(0)

    def time_read_arrow(self, path, impl):
        if impl == "paimon_engine":
            self.reader.to_arrow()
            return
        if impl == "zstd":
            _decompress(self.dctx, self.frames, self.usizes)
            return
        _read_decompress(path, self.runs, self.offsets, self.frames, self.usizes, self.dctx,
                         self.out if impl == "zstd_read_out" else None)


class RowWalk:
    """The part of a full read that is the reader's own: the 1M-row file's blocks, read and decompressed
    beforehand and kept in memory, decoded into the workload's four columns (``paimon_engine``: the kernel's
    block decoder on one thread, into column buffers already backed, as a read's are after its first), against
    ``copy``: the same bytes copied once, block by block, into a backed buffer of their size, the least any
    reader that writes them into columns does."""
    params = (["paimon_engine", "copy"],)
    param_names = ["impl"]
    timeout = 300
    repeat = (5, 20, 60.0)

    def setup_cache(self):
        return _big_file("bench_row_w_")

    def setup(self, path, impl):
        from paimon_engine.formats.row import RowFileReader
        from paimon_engine.formats.zstd import thread_decompressor
        r = RowFileReader(path, _schema(), threads=1)
        self.blocks = [(r._block_rows[b], data) for b, data in
                       r._blocks_of([(b, None) for b in range(r.num_blocks)], thread_decompressor())]
        self.total = sum(n for n, _ in self.blocks)
        usz = sum(len(d) for _, d in self.blocks)
        self.copy_out = np.ones(usz, np.uint8)
        self.datapos = np.zeros(4, np.int64)
        self.state = np.zeros(3, np.int64)
        rooms = [np.ones(usz, np.uint8)]
        self.outs = r._outputs(self.total, [0, 1, 2, 3], rooms)
        for o in self.outs:
            for a in o[2:]:
                if a is not None:
                    a.fill(1)   # backed
        self.reader = r

    def time_walk(self, path, impl):
        if impl == "copy":
            out, pos = self.copy_out, 0
            for _, data in self.blocks:
                out[pos:pos + len(data)] = np.frombuffer(data, np.uint8)
                pos += len(data)
            return
        r = self.reader
        self.datapos[:] = 0
        dec = r._kernel.BlockDecoder(r._program, self.outs, self.total, self.datapos, self.state)
        base = 0
        for n, data in self.blocks:
            if dec.decode(data, n, None, n, base) != n:
                raise AssertionError("the block decoder refused a block of the benchmark file")
            base += n


class RowLookup:
    """Point lookups on the 1M-row file, every implementation on the same file (no scaling): ``take`` of 1000
    random rows (pypaimon: ``row_indices``) and one row from an open reader with no block cached (zstd:
    decompressing one block). ``zstd_read`` also reads the compressed blocks from the file first (one ``pread``
    per run of adjacent blocks, as the engine reads them): the floor of a reader that copies the file's bytes."""
    params = (["paimon_engine", "paimon_engine_1t", "pypaimon", "zstd", "zstd_read"],)
    param_names = ["impl"]
    timeout = 600
    number = 1
    repeat = (5, 20, 60.0)
    warmup_time = 2.0

    def setup_cache(self):
        return _big_file("bench_row_lookup_")

    def setup(self, path, impl):
        from paimon_engine.formats.row import RowFileReader
        rng = np.random.default_rng(7)
        self.rows = rng.integers(0, N, 1000)
        self.one = iter(rng.integers(0, N, 10**6).tolist())
        if impl.startswith("paimon_engine"):
            self.reader = RowFileReader(path, _schema(), threads=1 if impl.endswith("_1t") else None)
            self.reader.take([1, 0])  # first use imports pyarrow.compute (one-off, not per call)
            self.reader.get_row(0)
        elif impl == "pypaimon":
            try:
                import pypaimon  # noqa: F401
            except ImportError:
                raise NotImplementedError("pypaimon not installed")
            self.rows = sorted(self.rows.tolist())
        else:
            import zstandard
            self.frames, self.payloads, self.usizes = _blocks(path)
            self.dctx = zstandard.ZstdDecompressor()
            # the blocks the 1000 rows live in: decompressing them is the floor of any take
            r = RowFileReader(path, _schema())
            self.take_blocks = sorted(set(r.index.block_of(self.rows).tolist()))
            self.offsets = r.index.offsets.tolist()
            self.take_runs = r._runs(self.take_blocks)

    def time_take_1000(self, path, impl):
        if impl.startswith("paimon_engine"):
            self.reader._cache.clear()
            self.reader.take(self.rows)
        elif impl == "pypaimon":
            _pp_read_all(_pp_reader(path, row_indices=self.rows))
        elif impl == "zstd":
            for b in self.take_blocks:
                self.dctx.decompress(self.frames[b], max_output_size=self.usizes[b])
        else:
            _read_decompress(path, self.take_runs, self.offsets, self.frames, self.usizes, self.dctx)

    def time_get_row(self, path, impl):
        if impl.startswith("paimon_engine"):
            self.reader._cache.clear()
            self.reader.get_row(next(self.one))
        elif impl == "pypaimon":
            _pp_read_all(_pp_reader(path, row_indices=[next(self.one)]))
        else:
            self.dctx.decompress(self.frames[3], max_output_size=self.usizes[3])


def _open_floor(path, block=None, dctx=None):
    """What any reader pays to open ``path``: open, stat, read its 16 KiB tail, close (plain system calls). With
    ``block`` = (offset, compressed size, uncompressed size): also read and decompress that block, with ``dctx``
    (a zstd decompressor kept between calls, as the engine keeps one per thread; a new one when None)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        os.pread(fd, min(size, 16384), max(0, size - 16384))
        if block is not None:
            if dctx is None:
                import zstandard
                dctx = zstandard.ZstdDecompressor()
            off, csz, usz = block
            dctx.decompress(os.pread(fd, csz, off), max_output_size=usz)
    finally:
        os.close(fd)


class RowOpen:
    """Cold reads on the 1M-row file (574 blocks): open it (engine: ``RowFileReader``, which reads the footer and
    checks the block index; pypaimon: ``FormatRowReader``), and open + one random row from that fresh reader
    (engine ``get_row``; pypaimon ``row_indices=[n]``). ``floor`` is the system calls alone: open, stat, a 16 KiB
    tail read, close (+ reading and decompressing the row's block with a decompressor kept between calls). Each
    side's classes are imported in setup, as in a program that opens many files (after this setup, which churns
    memory, an import statement inside the timed call measured 10-15 us on a 2-core machine); the ``timeraw_``
    variant runs open + one row in a fresh process (imports in its setup, every lazy first-use cost timed)."""
    params = (["paimon_engine", "pypaimon", "floor"],)
    param_names = ["impl"]
    timeout = 300
    number = 1
    repeat = (20, 200, 30.0)
    warmup_time = 1.0

    def setup_cache(self):
        return _big_file("bench_row_open_")

    def setup(self, path, impl):
        from paimon_engine.formats.row import RowFileReader
        if impl == "pypaimon":
            try:
                import pypaimon  # noqa: F401
            except ImportError:
                raise NotImplementedError("pypaimon not installed")
            self.open = _pp_opener()
        else:
            self.open = RowFileReader
        self.schema = _schema()
        self.one = iter(np.random.default_rng(11).integers(0, N, 10**6).tolist())
        ix = RowFileReader(path, self.schema).index
        self.blocks = (ix.row_starts, ix.offsets.tolist(), ix.compressed_sizes.tolist(),
                       ix.uncompressed_sizes.tolist())
        import zstandard
        self.dctx = zstandard.ZstdDecompressor()

    def time_open(self, path, impl):
        if impl == "paimon_engine":
            self.open(path, self.schema).close()
        elif impl == "pypaimon":
            self.open(path)
        else:
            _open_floor(path)

    def time_open_get_row(self, path, impl):
        n = next(self.one)
        if impl == "paimon_engine":
            with self.open(path, self.schema) as r:
                r.get_row(n)
        elif impl == "pypaimon":
            _pp_read_all(self.open(path, row_indices=[n]))
        else:
            starts, offs, csz, usz = self.blocks
            b = int(np.searchsorted(starts, n, side="right")) - 1
            _open_floor(path, (offs[b], csz[b], usz[b]), self.dctx)

    def timeraw_open_get_row(self, path, impl):
        # the libraries both sides load (numpy, pyarrow, zstandard) are imported before the timing starts
        setup = (f"import sys; sys.path[:0] = [{_CHECKOUT!r}, {os.path.dirname(os.path.abspath(__file__))!r}]\n"
                 "import numpy, pyarrow, zstandard\n"
                 "import bench_row as B\n"
                 "from paimon_engine.formats.row import RowFileReader\n")
        if impl == "pypaimon":
            setup += "from pypaimon.read.reader.format_row_reader import FormatRowReader\n"
            code = f"B._pp_read_all(B._pp_reader({path!r}, row_indices=[123457]))"
        elif impl == "paimon_engine":
            code = f"RowFileReader({path!r}, B._schema()).get_row(123457)"
        else:
            b = int(np.searchsorted(self.blocks[0], 123457, side="right")) - 1
            code = f"B._open_floor({path!r}, {(self.blocks[1][b], self.blocks[2][b], self.blocks[3][b])!r})"
        return code, setup


class RowWrite:
    """Writing the workload (pypaimon_x50: N/50 rows; zstd: compressing the engine's blocks alone; zstd_sink:
    compressing them and writing each frame into the sink the writers write into, a new ``io.BytesIO``)."""
    params = ["paimon_engine", "pypaimon_x50", "zstd", "zstd_sink"]
    param_names = ["impl"]
    timeout = 300
    # steady state, as RowFile: a fresh process first grows its allocators (every implementation gets the same)
    warmup_time = 2.0
    repeat = (5, 20, 60.0)

    def setup(self, impl):
        import zstandard
        if impl == "paimon_engine":
            self.table = _table(N)
        elif impl == "pypaimon_x50":
            try:
                import pypaimon  # noqa: F401
            except ImportError:
                raise NotImplementedError("pypaimon not installed")
            self.table = _table(N // PEER_SCALE)
        else:
            d = tempfile.mkdtemp(prefix="bench_row_w_")
            path = os.path.join(d, "w.row")
            _write_engine(path, _table(N))
            self.payloads = _blocks(path)[1]
            self.cctx = zstandard.ZstdCompressor(level=1)

    def time_write(self, impl):
        if impl == "paimon_engine":
            _write_engine(io.BytesIO(), self.table)
        elif impl == "pypaimon_x50":
            from pypaimon.write.writer.format_row_writer import FormatRowWriter
            w = FormatRowWriter(io.BytesIO(), _pp_fields(), block_size=BLOCK)
            w.write_table(self.table)
            w.close()
        elif impl == "zstd":
            for p in self.payloads:
                self.cctx.compress(p)
        else:
            sink = io.BytesIO()
            for p in self.payloads:
                sink.write(self.cctx.compress(p))


def _best(fn, repeat=5):
    import time
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


class RowRatios:
    """The issue's ratios, measured within one process (best of 5 each): engine time / zstd-only time, with the
    engine's default threads and on one thread, and against zstd on the same number of threads."""
    timeout = 600

    def setup_cache(self):
        return _big_file("bench_row_r_")

    def setup(self, path):
        import zstandard
        from paimon_engine.formats.row import RowFileReader
        self.path = path
        from paimon_engine._parallel import thread_count
        self.reader = RowFileReader(path, _schema())
        self.reader_1t = RowFileReader(path, _schema(), threads=1)
        self.frames, self.payloads, self.usizes = _blocks(path)
        self.dctx = zstandard.ZstdDecompressor()
        self.dctxs = [zstandard.ZstdDecompressor() for _ in range(thread_count())]
        self.cctx = zstandard.ZstdCompressor(level=1)
        # the reader's own runs of adjacent blocks
        self.offsets = self.reader_1t.index.offsets.tolist()
        self.runs = self.reader_1t._runs(list(range(self.reader_1t.num_blocks)))
        self.floor_out = np.empty(sum(self.usizes), np.uint8)
        self.floor_out.fill(0)

    def _decompress_all(self):
        _decompress(self.dctx, self.frames, self.usizes)

    def _read_decompress_copy(self):
        """The least any reader of the file into columns does: read the blocks from the file (runs of about
        1 MiB, as the engine's reader does), decompress each and write its bytes once into an output buffer
        already backed (a copy of the whole block: as many bytes as the columns hold, give or take the row
        framing)."""
        _read_decompress(self.path, self.runs, self.offsets, self.frames, self.usizes, self.dctx, self.floor_out)

    def track_read_arrow_over_zstd_decompress(self, path):
        return _best(self.reader.to_arrow) / _best(self._decompress_all)

    def track_read_arrow_1t_over_zstd_decompress(self, path):
        return _best(self.reader_1t.to_arrow) / _best(self._decompress_all)

    def track_read_arrow_1t_over_read_decompress_copy(self, path):
        """One-thread read over :meth:`_read_decompress_copy`: the engine's overhead beyond reading,
        decompressing and writing the bytes once."""
        return _best(self.reader_1t.to_arrow) / _best(self._read_decompress_copy)

    def track_read_arrow_over_zstd_decompress_same_threads(self, path):
        return _best(self.reader.to_arrow) / _best(
            lambda: _decompress_threaded(self.dctxs, self.frames, self.usizes))

    def track_write_over_zstd_compress(self, path):
        table = _table(N)

        def compress_all():
            for p in self.payloads:
                self.cctx.compress(p)
        return _best(lambda: _write_engine(io.BytesIO(), table), 3) / _best(compress_all, 3)

    def track_get_row_over_one_block_decompress(self, path):
        rows = iter(np.random.default_rng(3).integers(0, N, 10**6).tolist())

        def one():
            for _ in range(50):
                self.reader._cache.clear()
                self.reader.get_row(next(rows))

        def block():
            for i in range(50):
                self.dctx.decompress(self.frames[i], max_output_size=self.usizes[i])
        return _best(one) / _best(block)

    def track_arrow_table_mb(self, path):
        return self.reader.to_arrow().nbytes / 2**20

    def peakmem_read_arrow(self, path):
        self.reader.to_arrow()

    def track_read_peak_rss_over_table_plus_block(self, path):
        """Memory a full read adds to the process at its peak (resident pages, in a fresh process whose
        imports are warmed by reading a small file first) / (the Arrow table's size + one block)."""
        import subprocess
        import sys
        code = (
            "import io, os, resource, sys\n"
            "sys.path.insert(0, %r)\n"
            "import bench_row as B\n"
            "from paimon_engine.formats.row import RowFileReader\n"
            "small = io.BytesIO()\n"
            "B._write_engine(small, B._table(5000))\n"
            "RowFileReader(io.BytesIO(small.getvalue()), B._schema()).to_arrow()\n"
            "r = RowFileReader(%r, B._schema())\n"
            "page = os.sysconf('SC_PAGE_SIZE')\n"
            "before = int(open('/proc/self/statm').read().split()[1]) * page\n"
            "t = r.to_arrow()\n"
            "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024\n"
            "print((peak - before) / (t.nbytes + max(r.index.uncompressed_sizes)))\n"
        ) % (os.path.dirname(os.path.abspath(__file__)), path)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return float(out.stdout.strip().splitlines()[-1])

    track_read_peak_rss_over_table_plus_block.unit = "ratio"
    track_read_arrow_over_zstd_decompress.unit = "ratio"
    track_read_arrow_1t_over_zstd_decompress.unit = "ratio"
    track_read_arrow_over_zstd_decompress_same_threads.unit = "ratio"
    track_write_over_zstd_compress.unit = "ratio"
    track_get_row_over_one_block_decompress.unit = "ratio"
    track_arrow_table_mb.unit = "MiB"
