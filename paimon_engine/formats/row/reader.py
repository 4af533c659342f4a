"""``RowFileReader``: a Paimon ``.row`` file into column batches."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ... import _speedups
from ... import types as T
from ..._pykernels import status
from ...batch import Column, ColumnBatch
from ...errors import CorruptFileError, InvalidArgumentError, NotFoundError
from . import values as V
from .footer import FOOTER_SIZE, BlockIndex, Footer

__all__ = ["RowFileReader"]

DEFAULT_MAX_BLOCK_SIZE = 256 << 20
TAIL_READ = 64 << 10


class _Source:
    """``size`` + ``read_at`` over a location, a seekable file object or a pyarrow input file."""

    def __init__(self, source, file_io):
        self._close = None
        if isinstance(source, str):
            from ...io import FileIO
            f = (file_io or FileIO()).open_input(source)
            self.name, self.size, self._read = source, f.size, f.read_at
            self._close = f.close
        elif hasattr(source, "read_at") and hasattr(source, "size") and callable(source.size):
            self.name = getattr(source, "path", None) or repr(source)
            self.size = source.size()
            self._read = lambda off, n: source.read_at(n, off)
        elif hasattr(source, "seek") and hasattr(source, "read"):
            self.name = getattr(source, "name", None) or repr(source)
            source.seek(0, 2)
            self.size = source.tell()

            def read(off, n, f=source):
                f.seek(off)
                return f.read(n)
            self._read = read
        else:
            raise InvalidArgumentError("source must be a location, a seekable binary file or a pyarrow input file")

    def read_at(self, off, n):
        data = self._read(off, n)
        if not isinstance(data, bytes):
            data = bytes(data)
        if len(data) != n:
            raise CorruptFileError(f"short read: {len(data)} of {n} bytes", path=self.name, offset=off)
        return data

    def close(self):
        if self._close is not None:
            self._close()


class RowFileReader:
    """Read a Paimon ``.row`` file into :class:`~paimon_engine.batch.ColumnBatch` es.

    The footer and block index come from one tail read and are checked against
    every invariant; each block is decompressed with its indexed size as the
    bound and decoded in one kernel call into column buffers.
    """

    def __init__(self, source, schema: T.RowType, file_io=None, max_block_size: int = DEFAULT_MAX_BLOCK_SIZE,
                 cache_blocks: int = 8):
        import zstandard
        if not isinstance(schema, T.RowType):
            raise InvalidArgumentError("schema must be a RowType")
        for f in schema.fields:
            V.kind_of(f.type)
        self.schema = schema
        self.max_block_size = int(max_block_size)
        self._src = _Source(source, file_io)
        self.path = self._src.name
        self._dctx = zstandard.ZstdDecompressor()
        self._zerr = zstandard.ZstdError
        self._zframe_size = zstandard.frame_content_size
        self._kernel = _speedups.kernel("rowcodec")
        self._program = V.program(schema)
        self._cache = OrderedDict()
        self._cache_blocks = cache_blocks
        self._starts = None
        #: blocks read and decompressed so far (cache hits not counted)
        self.blocks_read = 0
        size = self._src.size
        if size < FOOTER_SIZE + 3:
            raise CorruptFileError(f"{size} bytes cannot hold a .row footer and index", path=self.path, offset=0)
        tail_len = min(size, TAIL_READ)
        tail = self._src.read_at(size - tail_len, tail_len)
        self.footer = Footer.parse(tail[-FOOTER_SIZE:], size, path=self.path)
        ft = self.footer
        rel = ft.index_offset - (size - tail_len)
        if rel >= 0:
            index_bytes = tail[rel:rel + ft.index_length]
        else:
            index_bytes = self._src.read_at(ft.index_offset, ft.index_length)
        self.index = BlockIndex.parse(index_bytes, ft, path=self.path, max_block_size=self.max_block_size)
        ix = self.index
        self._offsets = ix.offsets.tolist()
        self._csizes = ix.compressed_sizes.tolist()
        self._usizes = ix.uncompressed_sizes.tolist()
        self._block_rows = [ix.block_rows(b) for b in range(ix.block_count)]

    # -- basic facts ---------------------------------------------------------
    @property
    def num_rows(self) -> int:
        return self.footer.row_count

    @property
    def num_blocks(self) -> int:
        return self.footer.block_count

    def close(self):
        self._src.close()
        self._cache.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- blocks --------------------------------------------------------------
    def _block(self, b: int, cached: bool = False) -> bytes:
        if cached and b in self._cache:
            self._cache.move_to_end(b)
            return self._cache[b]
        off, csz, usz = self._offsets[b], self._csizes[b], self._usizes[b]
        raw = self._src.read_at(off, csz)
        self.blocks_read += 1
        try:
            # a frame that states its content size must state the indexed size (never trust it for allocation)
            declared = self._zframe_size(raw)
            if declared not in (-1, usz):
                raise CorruptFileError(f"zstd frame declares {declared} bytes, the index says {usz}",
                                       path=self.path, block=b, offset=off)
            data = self._dctx.decompress(raw, max_output_size=usz)
        except self._zerr as e:
            raise CorruptFileError(f"zstd: {e}", path=self.path, block=b, offset=off) from None
        if len(data) != usz:
            raise CorruptFileError(f"block decompressed to {len(data)} bytes, the index says {usz}",
                                   path=self.path, block=b, offset=off)
        nrows = int.from_bytes(data[-4:], "little", signed=True)
        if nrows != self._block_rows[b]:
            raise CorruptFileError(f"block holds {nrows} rows, the index says {self._block_rows[b]}",
                                   path=self.path, block=b, offset=off)
        if cached:
            self._cache[b] = data
            if len(self._cache) > self._cache_blocks:
                self._cache.popitem(last=False)
        return data

    # -- decoding ------------------------------------------------------------
    def _projection(self, columns):
        if columns is None:
            return list(range(len(self.schema.fields)))
        idx = []
        for name in columns:
            if name not in self.schema:
                raise NotFoundError(f"no column {name!r} in the .row schema")
            idx.append(self.schema.index(name))
        return idx

    def _decode(self, plan, proj, cached=False) -> ColumnBatch:
        """Decode ``plan`` = [(block, local_rows int32 array or None)] into one batch of the projected columns."""
        fields = self.schema.fields
        total = 0
        for b, rows in plan:
            total += self._block_rows[b] if rows is None else len(rows)
        nf = len(fields)
        outs = [None] * nf
        bufs = {}
        wanted = set(proj)
        for i in wanted:
            f = fields[i]
            k = V.kind_of(f.type)
            validity = np.zeros((total + 7) // 8 or 1, dtype=np.uint8)
            if k in V.NESTED_KINDS:
                o = (V.O_SPAN, 0, validity, np.zeros(2 * total or 1, dtype=np.int64), None, None)
            elif k == V.K_BOOL:
                o = (k, 0, validity, np.zeros((total + 7) // 8 or 1, dtype=np.uint8), None, None)
            elif k == V.K_BYTES:
                o = [k, 0, validity, None, np.zeros(total + 1, dtype=np.int32), np.empty(0, np.uint8)]
            elif k in (V.K_DEC_COMPACT, V.K_DEC_BIG):
                o = (k, 0, validity, np.zeros(16 * total or 1, dtype=np.uint8), None, None)
            elif k == V.K_TS_NANO:
                o = (k, 1000 if f.type.precision <= 6 else 1_000_000, validity,
                     np.zeros(total or 1, dtype=np.int64), None, None)
            else:
                dt = {V.K_I8: np.int8, V.K_I16: np.int16, V.K_I32: np.int32, V.K_I64: np.int64,
                      V.K_F32: np.float32, V.K_F64: np.float64, V.K_TS_MILLIS: np.int64}[k]
                o = (k, 0, validity, np.zeros(total or 1, dtype=dt), None, None)
            outs[i] = o
            bufs[i] = []  # nested values
        datapos = np.zeros(max(nf, 1), dtype=np.int64)
        state = np.zeros(3, dtype=np.int64)
        base = 0
        byte_cols = [i for i in wanted if outs[i][0] == V.K_BYTES]
        call_outs = [None if o is None else tuple(o) for o in outs]
        block_rows = self._block_rows
        decode = self._kernel.decode_block
        for bi, (b, rows) in enumerate(plan):
            data = self._block(b, cached)
            nrows = block_rows[b]
            nsel = nrows if rows is None else len(rows)
            usz = len(data)
            grew = False
            for i in byte_cols:
                o = outs[i]
                need = int(datapos[i]) + usz
                if len(o[5]) < need:
                    if base:
                        est = int(datapos[i] / base * total * 1.1) + usz
                    else:
                        est = usz * (len(plan) if rows is None and len(plan) < 4 else 1)
                    grown = np.empty(max(need, est, int(len(o[5]) * 1.25)), dtype=np.uint8)
                    grown[:datapos[i]] = o[5][:datapos[i]]
                    o[5] = grown
                    grew = True
            if grew:
                call_outs = [None if o is None else tuple(o) for o in outs]
            r = decode(data, nrows, self._program, call_outs, rows, nsel, base, datapos, state)
            if r < 0:
                row = int(state[0]) + int(self.index.row_starts[b])
                fi = int(state[1])
                raise CorruptFileError(f"{status.describe(r)} in a row", path=self.path, block=b, row=row,
                                       field=fields[fi].name if 0 <= fi < nf else None, offset=int(state[2]))
            for i in wanted:
                o = outs[i]
                if o[0] == V.O_SPAN:
                    spans = o[3]
                    valid = o[2]
                    lst = bufs[i]
                    t = fields[i].type
                    for j in range(base, base + nsel):
                        if valid[j >> 3] & (1 << (j & 7)):
                            lst.append(V.decode_span(t, data, int(spans[2 * j]), int(spans[2 * j + 1]),
                                                     path=self.path, block=b, field=fields[i].name))
                        else:
                            lst.append(None)
            base += nsel
        cols = []
        for i in proj:
            cols.append(self._column(fields[i], outs[i], bufs[i], total, datapos[i]))
        return ColumnBatch(T.RowType([fields[i] for i in proj]), cols, total)

    def _column(self, field, o, nested, total, dpos) -> Column:
        import pyarrow as pa
        t = field.type
        at = t.to_arrow()
        k, validity = o[0], o[2]
        if k == V.O_SPAN:
            try:
                return Column.from_arrow(pa.array(nested, type=at))
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
                raise CorruptFileError(f"column {field.name!r} holds values outside its type: {e}",
                                       path=self.path, field=field.name) from None
        if k == V.K_BYTES:
            if isinstance(t, (T.CharType, T.VarCharType)):
                arr = pa.Array.from_buffers(pa.binary(), total, [pa.py_buffer(validity), pa.py_buffer(o[4]),
                                                                  pa.py_buffer(o[5][:dpos])])
                try:
                    arr.view(pa.string()).validate(full=True)
                except pa.ArrowInvalid as e:
                    raise CorruptFileError(f"invalid UTF-8 in column {field.name!r}: {e}", path=self.path,
                                           field=field.name) from None
            return Column(at, total, validity=validity, offsets=o[4], data=o[5][:dpos])
        values = o[3]
        if isinstance(t, T.TimeType) and t.precision > 3:
            values = values.astype(np.int64) * (1000 if t.precision <= 6 else 1_000_000)
        return Column(at, total, validity=validity, values=values)

    def _plan(self, selection):
        ix = self.index
        if selection is None:
            return [(b, None) for b in range(ix.block_count)]
        sel = np.asarray(selection.to_array() if hasattr(selection, "to_array") else list(selection),
                         dtype=np.int64)
        sel = sel[(sel >= 0) & (sel < self.num_rows)]
        if len(sel) == 0:
            return []
        cuts = np.searchsorted(sel, np.append(ix.row_starts, self.num_rows))
        plan = []
        for b in range(ix.block_count):
            lo, hi = cuts[b], cuts[b + 1]
            if hi > lo:
                plan.append((b, (sel[lo:hi] - ix.row_starts[b]).astype(np.int32)))
        return plan

    def _empty(self, proj):
        return self._decode([], proj)

    # -- public reads ----------------------------------------------------------
    def read(self, columns=None, selection=None, batch_rows=None):
        """Iterate ColumnBatches of the projected ``columns``; ``selection`` is a
        ``pyroaring.BitMap`` of row numbers to return. Blocks that hold no
        selected row are neither read nor decompressed. ``batch_rows`` groups
        whole blocks until a batch has at least that many rows (default: one
        batch per block)."""
        proj = self._projection(columns)
        plan = self._plan(selection)
        group, n = [], 0
        for step in plan:
            group.append(step)
            n += self._block_rows[step[0]] if step[1] is None else len(step[1])
            if batch_rows is None or n >= batch_rows:
                yield self._decode(group, proj)
                group, n = [], 0
        if group:
            yield self._decode(group, proj)

    def read_all(self, columns=None, selection=None) -> ColumnBatch:
        """All (selected) rows of the projected columns as one batch."""
        return self._decode(self._plan(selection), self._projection(columns))

    def to_arrow(self, columns=None, selection=None):
        return self.read_all(columns, selection).to_arrow_table()

    def to_pandas(self, columns=None, selection=None):
        return self.read_all(columns, selection).to_pandas()

    def to_numpy(self, columns=None, selection=None):
        return self.read_all(columns, selection).to_numpy()

    def take(self, row_numbers, columns=None) -> ColumnBatch:
        """Rows by number, in request order (duplicates allowed); blocks go through a small LRU cache."""
        req = np.asarray(row_numbers, dtype=np.int64).reshape(-1)
        if len(req) and (req.min() < 0 or req.max() >= self.num_rows):
            bad = int(req[(req < 0) | (req >= self.num_rows)][0])
            raise InvalidArgumentError(f"row {bad} is out of range for a file of {self.num_rows} rows")
        proj = self._projection(columns)
        order = np.argsort(req, kind="stable")
        srt = req[order]
        blocks = self.index.block_of(srt)
        plan = []
        if len(srt):
            cuts = np.flatnonzero(np.diff(blocks)) + 1
            for seg in np.split(np.arange(len(srt)), cuts):
                b = int(blocks[seg[0]])
                plan.append((b, (srt[seg] - self.index.row_starts[b]).astype(np.int32)))
        batch = self._decode(plan, proj, cached=True)
        if len(req) < 2 or (np.diff(req) >= 0).all():
            return batch
        inv = np.empty_like(order)
        inv[order] = np.arange(len(order))
        import pyarrow as pa
        rb = batch.to_arrow().take(pa.array(inv))
        return ColumnBatch(batch.schema, [Column.from_arrow(c) for c in rb.columns], len(req))

    def get_row(self, n: int) -> dict:
        """One row as a dict of Python values (the same values ``take([n]).to_pylist()[0]`` gives).

        The block comes from the LRU cache or is read and decompressed once; the
        row is then located through the block's offset array and decoded alone.
        """
        import bisect

        import pyarrow as pa
        n = int(n)
        if not 0 <= n < self.num_rows:
            raise InvalidArgumentError(f"row {n} is out of range for a file of {self.num_rows} rows")
        if self._starts is None:
            self._starts = self.index.row_starts.tolist()
            # None where the decoded Python value is already what Arrow's to_pylist gives
            plain = (T.BooleanType, T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType, T.FloatType,
                     T.DoubleType, T.CharType, T.VarCharType, T.BinaryType, T.VarBinaryType, T.DecimalType)
            self._arrow_types = [None if isinstance(f.type, plain) else f.type.to_arrow()
                                 for f in self.schema.fields]
        b = bisect.bisect_right(self._starts, n) - 1
        data = self._block(b, cached=True)
        nrows = self._block_rows[b]
        local = n - self._starts[b]
        data_end = len(data) - 4 - 4 * nrows
        at = data_end + 4 * local
        pos = int.from_bytes(data[at:at + 4], "little", signed=True)
        end = int.from_bytes(data[at + 4:at + 8], "little", signed=True) if local + 1 < nrows else data_end
        if not 0 <= pos <= end <= data_end:
            raise CorruptFileError(f"row offset {pos} outside the block's rows", path=self.path, block=b, row=n,
                                   offset=at)
        fields = self.schema.fields
        nb = (len(fields) + 7) // 8
        if nb > end - pos:
            raise CorruptFileError("row shorter than its null bitmap", path=self.path, block=b, row=n, offset=pos)
        bits = data[pos:pos + nb]
        pos += nb
        out = {}
        for i, f in enumerate(fields):
            if bits[i >> 3] & (1 << (i & 7)):
                out[f.name] = None
                continue
            try:
                v, pos = V.decode_value(f.type, data, pos, end)
                at_i = self._arrow_types[i]
                out[f.name] = v if at_i is None else pa.scalar(v, type=at_i).as_py()
            except V._Bad as e:
                raise CorruptFileError(str(e.args[0]), path=self.path, block=b, row=n, field=f.name,
                                       offset=e.args[1]) from None
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
                raise CorruptFileError(f"value outside its type: {e}", path=self.path, block=b, row=n,
                                       field=f.name, offset=pos) from None
        return out
