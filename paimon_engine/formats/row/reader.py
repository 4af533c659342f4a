"""``RowFileReader``: a Paimon ``.row`` file into column batches."""

from __future__ import annotations

import struct
import threading
from collections import OrderedDict
from itertools import accumulate

import numpy as np

from ... import _speedups
from ..._parallel import shared_map, thread_count
from ... import types as T
from ..._pykernels import status
from ...batch import Column, ColumnBatch, pool_array
from ...errors import CorruptFileError, InvalidArgumentError, NotFoundError, ValueOutOfRangeError
from . import values as V
from ..zstd import thread_decompressor, zstandard
from .footer import FOOTER_SIZE, BlockIndex, parse_tail

__all__ = ["RowFileReader"]


_I32 = struct.Struct("<i")
_FIXED = {T.SmallIntType: struct.Struct("<h"), T.IntType: struct.Struct("<i"), T.BigIntType: struct.Struct("<q"),
          T.FloatType: V.Float32, T.DoubleType: struct.Struct("<d")}

# how get_row reads a field: a precompiled struct, bytes or text, or the general decoder
_GET_FIXED, _GET_BYTES, _GET_VALUE = 0, 1, 2
# the types whose decoded Python value is already what Arrow's to_pylist gives
_PLAIN = (T.BooleanType, T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType, T.FloatType, T.DoubleType,
          T.CharType, T.VarCharType, T.BinaryType, T.VarBinaryType, T.DecimalType)


# the row_values kernel's code of each type whose Python value it makes (``get_row`` reads a row of these types
# in one kernel call)
_ROW_VALUE_KIND = {T.BooleanType: V.K_BOOL, T.TinyIntType: V.K_I8, T.SmallIntType: V.K_I16, T.IntType: V.K_I32,
                   T.BigIntType: V.K_I64, T.FloatType: V.K_F32, T.DoubleType: V.K_F64, T.BinaryType: V.K_BYTES,
                   T.VarBinaryType: V.K_BYTES, T.CharType: V.K_TEXT, T.VarCharType: V.K_TEXT}


class _SchemaFacts:
    """What readers work out once per schema object: each field's kernel kind (which checks that the schema
    can be stored), the decoding program, and how ``get_row`` reads each field (both built on first use);
    ``row_kinds``: the row_values kernel's code of each field (None when a field has a type it does not make),
    ``names`` the field names."""

    __slots__ = ("schema", "_program", "_getters", "row_kinds", "names")

    def __init__(self, schema):
        for f in schema.fields:
            V.kind_of(f.type)
        self.schema = schema
        self._program = None
        self._getters = None
        self.names = tuple(f.name for f in schema.fields)
        kinds = [_ROW_VALUE_KIND.get(type(f.type)) for f in schema.fields]
        self.row_kinds = None if None in kinds else bytes(kinds)

    @property
    def program(self):
        if self._program is None:
            self._program = V.program(self.schema)
        return self._program

    @property
    def getters(self):
        """(name, how, its argument: struct, whether bytes are text, or type; Arrow type or None) per field."""
        if self._getters is None:
            getters = []
            for f in self.schema.fields:
                t = f.type
                st = _FIXED.get(type(t))
                if st is not None:
                    getters.append((f.name, _GET_FIXED, st, None))
                elif isinstance(t, (T.CharType, T.VarCharType, T.BinaryType, T.VarBinaryType)):
                    getters.append((f.name, _GET_BYTES, isinstance(t, (T.CharType, T.VarCharType)), None))
                else:
                    getters.append((f.name, _GET_VALUE, t, None if isinstance(t, _PLAIN) else t.to_arrow()))
            self._getters = getters
        return self._getters


#: facts by ``id`` of the schema object they were made for (each entry holds its schema, so an id is not reused
#: while it is in here); cleared when it grows past _FACTS_MAX schemas
_FACTS = {}
_FACTS_MAX = 64


def _facts(schema) -> _SchemaFacts:
    f = _FACTS.get(id(schema))
    if f is None or f.schema is not schema:
        f = _SchemaFacts(schema)
        if len(_FACTS) >= _FACTS_MAX:
            _FACTS.clear()
        _FACTS[id(schema)] = f
    return f


DEFAULT_MAX_BLOCK_SIZE = 256 << 20
#: the first read of a file takes this many bytes from its end: the footer and, for files of up to ~3000 blocks,
#: the whole block index (a larger index takes a second read)
TAIL_READ = 16 << 10
#: adjacent blocks are read in one call of at most this many compressed bytes
RUN_BYTES = 1 << 20
#: a read of at least this many blocks is decoded on several threads, in work units of at least half of it
PARALLEL_MIN_BLOCKS = 16
#: a read on several threads is cut into up to this many work units per thread, taken from one shared queue
UNITS_PER_THREAD = 4
#: string bytes are decoded into a room sized for the worst case (the blocks' uncompressed bytes) and copied out
#: at their exact size; each thread keeps its rooms between reads up to this many bytes in all, so a steady
#: stream of reads writes into memory already backed instead of faulting in a fresh mapping every time
ROOM_KEEP = 64 << 20
#: a read cut into parts for several threads copies its string bytes out of the scratch room on those threads
#: when there are this many
PARALLEL_COPY_BYTES = 1 << 20

MILLIS_PER_DAY = 86_400_000


_DEFAULT_IO = None
_ROOMS = threading.local()


def _take_rooms(count, size):
    """``count`` rooms of ``size`` bytes for string data: views of the calling thread's kept scratch when the
    rooms fit in ROOM_KEEP (taken out of the thread's slot until :func:`_give_rooms`, so a nested read gets
    its own), else one fresh allocation each. Returns (rooms, scratch or None)."""
    size = max(size, 1)
    if count == 0:
        return [], None
    if count * size > ROOM_KEEP:
        return [np.empty(size, dtype=np.uint8) for _ in range(count)], None
    scratch = getattr(_ROOMS, "scratch", None)
    if scratch is None or scratch.size < count * size:
        scratch = np.empty(count * size, dtype=np.uint8)
    else:
        _ROOMS.scratch = None
    return [scratch[k * size:(k + 1) * size] for k in range(count)], scratch


def _place(copy):
    """One part's string bytes put in their place (see ``RowFileReader._join_data``): entries ``lo .. hi`` of
    ``offsets`` (the ends of output rows ``lo - 1 .. hi - 2``) lowered by ``shift``, bytes ``s .. e`` of ``data``
    written into ``out`` from ``at``."""
    offsets, lo, hi, shift, data, s, e, out, at = copy
    if shift:
        offsets[lo:hi] -= np.int32(shift)
    out[at:at + e - s] = data[s:e]


def _give_rooms(scratch):
    if scratch is not None:
        held = getattr(_ROOMS, "scratch", None)
        if held is None or held.size < scratch.size:
            _ROOMS.scratch = scratch


def _default_io():
    """One FileIO shared by readers given no ``file_io`` (it caches its filesystems; thread-safe)."""
    global _DEFAULT_IO
    if _DEFAULT_IO is None:
        from ...io import FileIO
        _DEFAULT_IO = FileIO()
    return _DEFAULT_IO


class _ArrowInput:
    """A pyarrow input file (``read_at(length, offset)``, ``size()``) as the reader reads a source:
    ``read_at(offset, length)``, ``size``, ``close()`` (the given file stays open)."""

    __slots__ = ("path", "size", "_f")

    def __init__(self, f):
        self.path = getattr(f, "path", None) or repr(f)
        self.size = f.size()
        self._f = f

    def read_at(self, off, n):
        return self._f.read_at(n, off)

    def close(self):
        pass


class _FileObjectInput:
    """A seekable binary file object as the reader reads a source; seek + read is one step for the reader's
    threads. The given file stays open."""

    __slots__ = ("path", "size", "_f", "_lock")

    def __init__(self, f):
        self.path = getattr(f, "name", None) or repr(f)
        f.seek(0, 2)
        self.size = f.tell()
        self._f = f
        self._lock = threading.Lock()

    def read_at(self, off, n):
        with self._lock:
            self._f.seek(off)
            return self._f.read(n)

    def close(self):
        pass


def _open_source(source, file_io):
    """(name, input) for a location (opened through ``file_io``; the reader closes it), a pyarrow input file or
    a seekable binary file object. The input has ``size``, ``read_at(offset, length)`` and ``close()``."""
    if isinstance(source, str):
        return source, (file_io or _default_io()).open_input(source)
    if hasattr(source, "read_at") and hasattr(source, "size") and callable(source.size):
        src = _ArrowInput(source)
    elif hasattr(source, "seek") and hasattr(source, "read"):
        src = _FileObjectInput(source)
    else:
        raise InvalidArgumentError("source must be a location, a seekable binary file or a pyarrow input file")
    return src.path, src


class RowFileReader:
    """Read a Paimon ``.row`` file into :class:`~paimon_engine.batch.ColumnBatch` es.

    The footer and block index come from one tail read and are checked against
    every invariant; each block is decompressed with its indexed size as the
    bound and decoded in one kernel call into column buffers.
    """

    # what a fresh reader starts with (set on the instance once they change)
    _lists = None
    #: blocks read and decompressed so far (cache hits not counted)
    blocks_read = 0

    def __init__(self, source, schema: T.RowType, file_io=None, max_block_size: int = DEFAULT_MAX_BLOCK_SIZE,
                 cache_blocks: int = 8, threads: int | None = None):
        if not isinstance(schema, T.RowType):
            raise InvalidArgumentError("schema must be a RowType")
        self._facts = _facts(schema)
        self.schema = schema
        self.max_block_size = max_block_size = int(max_block_size)
        self.path, src = _open_source(source, file_io)
        self._src = src
        self._cache = OrderedDict()
        self._cache_blocks = cache_blocks
        self._threads_arg = threads
        try:
            size = src.size
            if size < FOOTER_SIZE + 3:
                raise CorruptFileError(f"{size} bytes cannot hold a .row footer and index", path=self.path,
                                       offset=0)
            tail_len = min(size, TAIL_READ)
            tail = self._read_at(size - tail_len, tail_len)
            # the footer and the index inside the tail checked in one kernel call; the index stays one NumPy array,
            # so opening costs the same however many blocks the file has
            self.footer, index = parse_tail(tail, size, path=self.path, max_block_size=max_block_size)
            if index is None:
                ft = self.footer
                index = BlockIndex.parse(self._read_at(ft.index_offset, ft.index_length), ft, path=self.path,
                                         max_block_size=max_block_size)
        except BaseException:
            src.close()
            raise
        self.index = index

    def _read_at(self, off, n):
        """``n`` bytes at ``off`` of the source; CorruptFileError when it holds fewer."""
        data = self._src.read_at(off, n)
        if type(data) is not bytes:
            data = bytes(data)
        if len(data) != n:
            raise CorruptFileError(f"short read: {len(data)} of {n} bytes", path=self.path, offset=off)
        return data

    # -- the block index as Python lists, for the per-block loops of multi-block reads (built on first use) --
    def _index_lists(self):
        lists = self._lists
        if lists is None:
            ix = self.index
            rows = np.diff(ix.row_starts, append=ix.row_count) if ix.block_count else ix.row_starts
            lists = self._lists = (ix.offsets.tolist(), ix.compressed_sizes.tolist(),
                                   ix.uncompressed_sizes.tolist(), rows.tolist())
        return lists

    @property
    def _offsets(self):
        return self._index_lists()[0]

    @property
    def _csizes(self):
        return self._index_lists()[1]

    @property
    def _usizes(self):
        return self._index_lists()[2]

    @property
    def _block_rows(self):
        return self._index_lists()[3]

    @property
    def _threads(self):
        return thread_count() if self._threads_arg is None else max(1, int(self._threads_arg))

    @property
    def _program(self):
        return self._facts.program

    # -- basic facts ---------------------------------------------------------
    @property
    def num_rows(self) -> int:
        return self.footer.row_count

    @property
    def num_blocks(self) -> int:
        return self.footer.block_count

    def close(self):
        self._src.close()
        if self._cache:
            self._cache.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- blocks --------------------------------------------------------------
    def _runs(self, blocks):
        """``blocks`` (ascending) as runs of adjacent blocks, each read in one call of at most RUN_BYTES."""
        runs, cur, size = [], [], 0
        offs, csz = self._offsets, self._csizes
        for b in blocks:
            if cur and (offs[b] != offs[cur[-1]] + csz[cur[-1]] or size + csz[b] > RUN_BYTES):
                runs.append(cur)
                cur, size = [], 0
            cur.append(b)
            size += csz[b]
        if cur:
            runs.append(cur)
        return runs

    def _read_run(self, run):
        """{block: compressed frame} of one run, from one read."""
        offs, csz = self._offsets, self._csizes
        start = offs[run[0]]
        raw = memoryview(self._read_at(start, offs[run[-1]] + csz[run[-1]] - start))
        return {b: raw[offs[b] - start:offs[b] - start + csz[b]] for b in run}

    def _decompress(self, b, raw, dctx):
        lists = self._lists
        if lists is None:  # a single-block read: no lists are built for it
            ix = self.index
            return self._checked_block(b, raw, dctx, int(ix.offsets[b]), int(ix.uncompressed_sizes[b]),
                                       ix.block_rows(b))
        return self._checked_block(b, raw, dctx, lists[0][b], lists[2][b], lists[3][b])

    def _checked_block(self, b, raw, dctx, off, usz, want):
        """Block ``b`` (at file offset ``off``) decompressed from ``raw``, checked to be ``usz`` bytes holding
        ``want`` rows."""
        zstd = zstandard()
        try:
            # a frame that states its content size must state the indexed size (never trust it for allocation)
            declared = zstd.frame_content_size(raw)
            if declared != usz and declared != -1:
                raise CorruptFileError(f"zstd frame declares {declared} bytes, the index says {usz}",
                                       path=self.path, block=b, offset=off)
            data = dctx.decompress(raw, max_output_size=usz)
        except zstd.ZstdError as e:
            raise CorruptFileError(f"zstd: {e}", path=self.path, block=b, offset=off) from None
        if len(data) != usz:
            raise CorruptFileError(f"block decompressed to {len(data)} bytes, the index says {usz}",
                                   path=self.path, block=b, offset=off)
        nrows = _I32.unpack_from(data, usz - 4)[0]
        if nrows != want:
            raise CorruptFileError(f"block holds {nrows} rows, the index says {want}",
                                   path=self.path, block=b, offset=off)
        return data

    def _block(self, b, off, csz, usz, nrows):
        """Block ``b`` (where :meth:`BlockIndex.locate` says it is) from the LRU cache, or read and decompressed
        once and cached."""
        cache = self._cache
        data = cache.get(b)
        if data is not None:
            cache.move_to_end(b)
            return data
        raw = self._read_at(off, csz)
        self.blocks_read += 1
        data = cache[b] = self._checked_block(b, raw, thread_decompressor(), off, usz, nrows)
        if len(cache) > self._cache_blocks:
            cache.popitem(last=False)
        return data

    def _cached_blocks(self, steps, dctx):
        """(block, decompressed bytes) for each step: from the LRU cache, or read (adjacent blocks missing from
        the cache in one call, as ``_blocks_of`` does) and decompressed. Only the last ``cache_blocks`` steps'
        blocks are cached: the LRU cache would evict the earlier ones before this call ends."""
        cache, limit = self._cache, self._cache_blocks
        blocks = [b for b, _ in steps]
        hit = {b: cache[b] for b in blocks if b in cache}  # taken now: the blocks cached below may evict them
        runs = iter(self._runs([b for b in blocks if b not in hit]))
        frames = {}
        keep_from = len(blocks) - limit
        for i, b in enumerate(blocks):
            data = hit.get(b)
            if data is not None:
                if b in cache:
                    cache.move_to_end(b)
                yield b, data
                continue
            if b not in frames:
                frames = self._read_run(next(runs))
            data = self._decompress(b, frames.pop(b), dctx)
            self.blocks_read += 1
            if i >= keep_from:
                cache[b] = data
                if len(cache) > limit:
                    cache.popitem(last=False)
            yield b, data

    def _blocks_of(self, plan, dctx):
        """(block, decompressed bytes) for each step of ``plan``, reading adjacent blocks in one call."""
        blocks = [b for b, _ in plan]
        for run in self._runs(sorted(set(blocks))):
            frames = self._read_run(run)
            for b in run:
                yield b, self._decompress(b, frames[b], dctx)

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

    def _outputs(self, total, wanted, rooms):
        """Column buffers for ``total`` rows of the ``wanted`` fields (None for the others); bytes columns take
        their data buffers from ``rooms`` in order. Validity and BOOL bitmaps and spans start zeroed; the
        kernel writes every other value, nulls included."""
        fields = self.schema.fields
        outs = [None] * len(fields)
        rooms = iter(rooms)
        for i in wanted:
            f = fields[i]
            k = V.kind_of(f.type)
            validity = pool_array((total + 7) // 8, zero=True)
            if k in V.NESTED_KINDS:
                o = (V.O_SPAN, 0, validity, np.zeros(2 * total or 1, dtype=np.int64), None, None)
            elif k == V.K_BOOL:
                o = (k, 0, validity, pool_array((total + 7) // 8, zero=True), None, None)
            elif k == V.K_BYTES:
                offsets = pool_array(total + 1, np.int32)
                offsets[0] = 0
                utf8 = 1 if isinstance(f.type, (T.CharType, T.VarCharType)) else 0
                o = (k, utf8, validity, None, offsets, next(rooms))
            elif k in (V.K_DEC_COMPACT, V.K_DEC_BIG):
                # the kernel rejects an unscaled value outside (-10**precision, 10**precision)
                o = (k, 10 ** f.type.precision, validity, pool_array(16 * total), None, None)
            elif k == V.K_TS_NANO:
                o = (k, 1000 if f.type.precision <= 6 else 1_000_000, validity,
                     pool_array(total, np.int64), None, None)
            else:
                dt = {V.K_I8: np.int8, V.K_I16: np.int16, V.K_I32: np.int32, V.K_I64: np.int64,
                      V.K_F32: np.float32, V.K_F64: np.float64, V.K_TS_MILLIS: np.int64}[k]
                o = (k, 0, validity, pool_array(total, dt), None, None)
            outs[i] = o
        return outs

    def _parts(self, plan, total):
        """``plan`` cut into contiguous parts (work units for the threads), each starting at an output row that
        is a multiple of 8 (so no two threads write the same bitmap byte): [(steps, first output row)]. Up to
        UNITS_PER_THREAD units per thread, planned at PARALLEL_MIN_BLOCKS / 2 steps or more each (a cut may
        then move by up to half a unit): a thread that is not scheduled holds up at most the unit it started,
        the others take the rest."""
        nparts = 1
        if self._threads > 1 and len(plan) >= PARALLEL_MIN_BLOCKS:
            nparts = min(UNITS_PER_THREAD * self._threads, len(plan) // (PARALLEL_MIN_BLOCKS // 2))
        if nparts <= 1:
            return [(plan, 0)]
        block_rows = self._block_rows
        # a cut on a step boundary whose output row is a multiple of 8 costs nothing; a cut inside a block
        # makes both parts decompress that block: each cut moves to the nearest such boundary within half
        # a unit's rows, if there is one
        bases = np.fromiter(accumulate((block_rows[b] if rows is None else len(rows) for b, rows in plan),
                                       initial=0), np.int64, len(plan) + 1)
        tol = total // (2 * nparts)
        goal = set()
        for k in range(1, nparts):
            g = (total * k // nparts) & ~7
            i = int(np.searchsorted(bases, g))
            # of the 128 step boundaries around the goal, the nearest (the first of two as near) on a multiple of 8
            # within ``tol``
            near = bases[max(0, i - 64):i + 64]
            far = np.abs(near - g)
            ok = np.flatnonzero((far <= tol) & (near % 8 == 0))
            best = int(near[ok[np.argmin(far[ok])]]) if len(ok) else g
            if 0 < best < total:
                goal.add(best)
        # each cut found by a search of the step boundaries; the steps between two cuts are taken as they are
        parts, start = [], 0
        i, head = 0, None   # the next part: ``head`` (step, block, rows left of a step cut inside), then plan[i:]
        for g in sorted(goal):
            j = int(np.searchsorted(bases, g))   # the first step that starts at ``g`` or after it
            steps = [head[1:]] if head else []
            if bases[j] == g:
                steps += plan[i:j]
                i, head = j, None
            else:
                j -= 1
                if head and head[0] == j:   # a second cut inside the same step
                    b, sel, steps = head[1], head[2], []
                else:
                    b, rows = plan[j]
                    sel = np.arange(block_rows[b], dtype=np.int32) if rows is None else rows
                    steps += plan[i:j]
                cut = len(sel) - (int(bases[j + 1]) - g)
                steps.append((b, sel[:cut]))
                i, head = j + 1, (j, b, sel[cut:])
            parts.append((steps, start))
            start = g
        parts.append((([head[1:]] if head else []) + plan[i:], start))
        return [p for p in parts if p[0]] or [(plan, 0)]

    def _decode_part(self, steps, out_base, outs, capacity, data_starts, cached, dctx):
        """Decode ``steps`` into ``outs`` from output row ``out_base``; bytes columns write from
        ``data_starts``. Returns (data end positions, nested values per field, blocks read)."""
        fields = self.schema.fields
        nf = len(fields)
        datapos = np.array(data_starts, dtype=np.int64)
        state = np.zeros(3, dtype=np.int64)
        dec = _speedups.kernel("rowcodec").BlockDecoder(self._program, outs, capacity, datapos, state)
        spans = [i for i, o in enumerate(outs) if o is not None and o[0] == V.O_SPAN]
        nested = {i: [] for i in spans}
        block_rows = self._block_rows
        base = out_base
        read = 0
        if cached:
            blocks = self._cached_blocks(steps, dctx)
        else:
            blocks = self._blocks_of(steps, dctx)
        # plans go through blocks in ascending order, each block once: blocks come in the order of the steps
        for (b, rows), (_, data) in zip(steps, blocks):
            read += 1
            nrows = block_rows[b]
            nsel = nrows if rows is None else len(rows)
            r = dec.decode(data, nrows, rows, nsel, base)
            if r < 0:
                if r == status.BAD_LENGTH and int(state[1]) >= 0 and outs[int(state[1])] is not None \
                        and outs[int(state[1])][0] == V.K_BYTES and int(datapos[int(state[1])]) > 0x7FFF0000:
                    raise InvalidArgumentError(
                        f"column {fields[int(state[1])].name!r} holds more than 2 GiB of data in one batch: "
                        f"read it in smaller batches (read(batch_rows=...))")
                row = int(state[0]) + int(self.index.row_starts[b])
                fi = int(state[1])
                what = f"{status.describe(r)} in a row"
                if r == status.OUT_OF_RANGE and 0 <= fi < nf and isinstance(fields[fi].type, T.DecimalType):
                    what = f"decimal value beyond the precision of {fields[fi].type}"
                raise CorruptFileError(what, path=self.path, block=b, row=row,
                                       field=fields[fi].name if 0 <= fi < nf else None, offset=int(state[2]))
            for i in spans:
                o = outs[i]
                sp, valid, lst, t = o[3], o[2], nested[i], fields[i].type
                for j in range(base, base + nsel):
                    if valid[j >> 3] & (1 << (j & 7)):
                        lst.append(V.decode_span(t, data, int(sp[2 * j]), int(sp[2 * j + 1]),
                                                 path=self.path, block=b, field=fields[i].name))
                    else:
                        lst.append(None)
            base += nsel
        return datapos, nested, read

    def _decode(self, plan, proj, cached=False) -> ColumnBatch:
        """Decode ``plan`` = [(block, ascending unique local rows int32 array or None)] into one batch of the
        projected columns. Large plans are cut into parts decoded on several threads at once (no block cache
        then); each part decompresses with its thread's decompressor and reads its runs of blocks itself."""
        fields = self.schema.fields
        total = 0
        block_rows, usizes = self._block_rows, self._usizes
        for b, rows in plan:
            total += block_rows[b] if rows is None else len(rows)
        wanted = sorted(set(proj))
        # every row of a block lies inside the block and rows are unique: the string bytes of a set of steps
        # fit in the uncompressed size of their blocks, so each part gets that much room in one data buffer
        # per column (a kept scratch, or address space only: pages never written are never backed)
        parts = self._parts(plan, total)
        room = [sum(usizes[b] for b in {b for b, _ in steps}) for steps, _ in parts]
        if len(parts) > 1 and sum(room) > 0x7FFFFFFF:
            parts = [(plan, 0)]
            room = [sum(room)]
        if len(parts) > 1:
            cached = False
        starts = np.concatenate([[0], np.cumsum(room)]).astype(np.int64)
        nbytes = sum(1 for i in wanted if V.kind_of(fields[i].type) == V.K_BYTES)
        rooms, scratch = _take_rooms(nbytes, min(int(starts[-1]), 0x7FFFFFFF))
        try:
            return self._decode_into(plan, proj, cached, total, wanted, parts, starts, rooms, scratch is not None)
        finally:
            _give_rooms(scratch)

    def _decode_into(self, plan, proj, cached, total, wanted, parts, starts, rooms, in_scratch):
        fields = self.schema.fields
        outs = self._outputs(total, wanted, rooms)
        data_starts = [[int(starts[k]) if o is not None and o[0] == V.K_BYTES else 0 for o in outs]
                       for k in range(len(parts))]
        if len(parts) == 1:
            results = [self._decode_part(parts[0][0], 0, outs, total, data_starts[0], cached, thread_decompressor())]
        else:
            # a part whose predecessor has already ended writes its string bytes right behind that part's (no
            # move afterwards); one that starts earlier writes into its own room. The rooms bound both: a part
            # starts no later than its room and never writes more bytes than its room holds.
            ends = [None] * len(parts)

            def run(k):
                steps, base = parts[k]
                prev = ends[k - 1] if k else None
                at = data_starts[k] if prev is None else [int(prev[i]) if o is not None and o[0] == V.K_BYTES
                                                          else 0 for i, o in enumerate(outs)]
                r = self._decode_part(steps, base, outs, total, at, False, thread_decompressor())
                ends[k] = r[0]
                return r[0], r[1], r[2], at
            results = shared_map("row", run, range(len(parts)), self._threads)
            data_starts = [r[3] for r in results]
        if not cached:
            self.blocks_read += sum(r[2] for r in results)
        joined, copies = {}, []
        for i in wanted:
            if outs[i][0] == V.K_BYTES:
                joined[i], more = self._join_data(outs[i], parts, results, [d[i] for d in data_starts], i, total,
                                                  in_scratch)
                copies += more
        if len(parts) > 1 and sum(c[6] - c[5] for c in copies) >= PARALLEL_COPY_BYTES:
            # the copies out of the scratch room run on the read's threads too (on the calling thread alone they
            # were about 6% of a two-thread read of a 1M-row file)
            shared_map("row", _place, copies, self._threads)
        else:
            for c in copies:
                _place(c)
        cols = []
        for i in proj:
            o = joined.get(i, outs[i])
            nested = None
            if o[0] == V.O_SPAN:
                nested = [v for r in results for v in r[1][i]]
            cols.append(self._column(fields[i], o, nested, total))
        return ColumnBatch(T.RowType([fields[i] for i in proj]), cols, total)

    @staticmethod
    def _join_data(o, parts, results, starts, i, total, in_scratch):
        """(the column tuple with ``data`` of exactly the string bytes written, copies still to make): each part's
        bytes (written from ``starts[k]``) go behind the previous part's, the part's offsets shifted to match.
        Bytes in a kept scratch room are copied out (the room is reused): those copies are returned, one per
        part, for :func:`_place` (they touch disjoint bytes and offsets, so they may run at the same time); a room
        of its own is joined in place here (each part moves left, in order) and shrunk."""
        offsets, data = o[4], o[5]
        pieces, end = [], 0
        for k in range(len(parts)):
            s, e = int(starts[k]), int(results[k][0][i])
            lo = parts[k][1] + 1
            hi = parts[k + 1][1] + 1 if k + 1 < len(parts) else total + 1
            pieces.append((s, e, lo, hi, end))
            end += e - s
        if end > 0x7FFFFFFF:
            raise InvalidArgumentError("a column holds more than 2 GiB of data in one batch: read it in smaller "
                                       "batches (read(batch_rows=...))")
        if in_scratch:
            out = np.empty(max(end, 1), dtype=np.uint8)
            return (o[0], o[1], o[2], o[3], offsets, out[:end]), \
                [(offsets, lo, hi, s - at, data, s, e, out, at) for s, e, lo, hi, at in pieces]
        for s, e, lo, hi, at in pieces:
            if s != at:   # (the same move inside the room, to the left: in part order nothing is overwritten unread)
                _place((offsets, lo, hi, s - at, data, s, e, data, at))
        if data.size > end:
            try:
                data.resize(max(end, 1), refcheck=False)  # realloc: the untouched room is never backed
            except ValueError:  # pragma: no cover - the buffer is owned here, numpy only refuses views
                data = data[:end].copy()
        return (o[0], o[1], o[2], o[3], offsets, data[:end]), []

    def _column(self, field, o, nested, total) -> Column:
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
            # UTF-8 of CHAR/VARCHAR values was checked by the kernel, value by value
            return Column(at, total, validity=validity, offsets=o[4], data=o[5])
        values = o[3]
        if isinstance(t, T.TimeType):
            # milliseconds of the day; the kernel writes 0 for null rows, so any value outside is a bad byte
            held = values[:total]   # an empty read may hand back a one-element buffer that holds nothing
            bad = np.flatnonzero((held < 0) | (held >= MILLIS_PER_DAY))
            if len(bad):
                raise CorruptFileError(f"TIME value {int(values[bad[0]])} ms is outside a day [0, {MILLIS_PER_DAY})",
                                       path=self.path, field=field.name, row=int(bad[0]))
            if t.precision > 3:
                values = values.astype(np.int64) * (1000 if t.precision <= 6 else 1_000_000)
        return Column(at, total, validity=validity, values=values)

    def _plan(self, selection, blocks=None):
        """[(block, its selected local rows as int32, or None for all of them)] of blocks ``first .. end``:
        ``selection`` is None (every row), flags (one per row of those blocks) or row numbers of the file."""
        ix = self.index
        first, end = (0, ix.block_count) if blocks is None else self._block_range(blocks)
        if selection is None:
            return [(b, None) for b in range(first, end)]
        lo = int(ix.row_starts[first]) if first < ix.block_count else self.num_rows
        hi = int(ix.row_starts[end]) if end < ix.block_count else self.num_rows
        if isinstance(selection, np.ndarray) and selection.dtype in (np.bool_, np.uint8):
            if selection.ndim != 1 or len(selection) != hi - lo:
                raise InvalidArgumentError(f"a selection of flags needs one flag per row read ({hi - lo}), not an "
                                           f"array of shape {selection.shape}")
            # the block-local numbers of the flagged rows and where each block's begin, in one kernel pass
            starts = np.append(ix.row_starts[first:end] - lo, hi - lo).astype(np.int64)
            local = np.empty(hi - lo, np.int32)
            cuts = np.empty(end - first + 1, np.int64)
            got = _speedups.kernel("rowindex").selected_rows(np.ascontiguousarray(selection).view(np.uint8), starts,
                                                             local, cuts)
            if got < 0:     # pragma: no cover - the index was checked when the file was opened
                raise CorruptFileError(f"block row starts ({status.describe(got)})", path=self.path)
            return self._plan_of(first, end, cuts, local) if got else []
        else:
            sel = np.asarray(selection.to_array() if hasattr(selection, "to_array") else list(selection),
                             dtype=np.int64)
            if len(sel) > 1 and not (sel[1:] > sel[:-1]).all():   # a bitmap's rows are sorted and distinct already
                sel = np.sort(sel)
                sel = sel[np.concatenate([[True], sel[1:] != sel[:-1]])]
            kept = sel[(sel >= lo) & (sel < hi)] - lo
        if kept.size == 0:
            return []
        starts = ix.row_starts[first:end] - lo
        cuts = np.searchsorted(kept, np.append(starts, hi - lo))
        counts = np.diff(cuts)
        # block-local row numbers: int32 views of one array (each block's part moved down by its first row); a
        # block whose rows are all selected is read whole
        if hi - lo <= 0x7FFFFFFF:
            local = kept.astype(np.int32)
            local -= np.repeat(starts.astype(np.int32), counts)
        else:
            local = (kept - np.repeat(starts, counts)).astype(np.int32)
        return self._plan_of(first, end, cuts, local)

    def _plan_of(self, first, end, cuts, local):
        """The plan of blocks ``first .. end - 1`` whose selected block-local rows are ``local[cuts[i]:cuts[i + 1]]``
        (``i``: the block's place in the run); a block whose rows are all selected is read whole."""
        block_rows = self._block_rows
        plan = []
        for b, a, z in zip(range(first, end), cuts[:-1].tolist(), cuts[1:].tolist()):
            if z == a:
                continue
            plan.append((b, None) if z - a == block_rows[b] else (b, local[a:z]))
        return plan

    def _block_range(self, blocks):
        first, end = (int(x) for x in blocks)
        if not 0 <= first <= end <= self.index.block_count:
            raise InvalidArgumentError(f"block range {first}..{end} is outside the file's "
                                       f"{self.index.block_count} blocks")
        return first, end

    def blocks_in(self, start: int, length: int):
        """(first, end) block numbers of the blocks whose first byte lies in ``[start, start + length)``: a byte
        range of a split, so that the ranges of one file's splits share no block."""
        offs = self.index.offsets
        return int(np.searchsorted(offs, start, side="left")), int(np.searchsorted(offs, start + length,
                                                                                   side="left"))

    def row_range(self, blocks):
        """(first row, end row) of the blocks ``first .. end - 1``."""
        first, end = self._block_range(blocks)
        starts = self.index.row_starts
        lo = int(starts[first]) if first < self.index.block_count else self.num_rows
        hi = int(starts[end]) if end < self.index.block_count else self.num_rows
        return lo, hi

    def _empty(self, proj):
        return self._decode([], proj)

    # -- public reads ----------------------------------------------------------
    def read(self, columns=None, selection=None, batch_rows=None):
        """Iterate ColumnBatches of the projected ``columns``; ``selection`` is a
        ``pyroaring.BitMap`` (or any iterable) of row numbers to return, or a
        NumPy bool/uint8 array of one flag per row (non-zero: returned). Blocks
        that hold no selected row are neither read nor decompressed. ``batch_rows`` groups
        whole blocks until a batch has at least that many rows (default: one
        batch per block)."""
        proj = self._projection(columns)
        plan = self._plan(selection)
        group, n = [], 0
        block_rows = self._block_rows
        for step in plan:
            group.append(step)
            n += block_rows[step[0]] if step[1] is None else len(step[1])
            if batch_rows is None or n >= batch_rows:
                yield self._decode(group, proj)
                group, n = [], 0
        if group:
            yield self._decode(group, proj)

    def read_all(self, columns=None, selection=None, blocks=None) -> ColumnBatch:
        """All (selected) rows of the projected columns as one batch; ``blocks``: (first, end) block numbers to
        read only (a split of the file), else every block. A ``selection`` of flags has one flag per row read
        (of those blocks only, when given)."""
        return self._decode(self._plan(selection, blocks), self._projection(columns))

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
        # each distinct row is decoded once, in file order, then put in request order
        uniq, inv = np.unique(req, return_inverse=True)
        plan = []
        if len(uniq):
            blocks = self.index.block_of(uniq)
            local = (uniq - self.index.row_starts[blocks]).astype(np.int32)
            firsts = np.flatnonzero(np.diff(blocks, prepend=-1)).tolist()  # first row of each block's run
            ends = firsts[1:] + [len(uniq)]
            plan = [(b, local[lo:hi]) for b, lo, hi in zip(blocks[firsts].tolist(), firsts, ends)]
        batch = self._decode(plan, proj, cached=True)
        if len(uniq) == len(req) and (len(req) < 2 or (np.diff(req) > 0).all()):
            return batch
        import pyarrow as pa
        rb = batch.to_arrow().take(pa.array(inv.reshape(-1)))
        return ColumnBatch(batch.schema, [Column.from_arrow(c) for c in rb.columns], len(req))

    def get_row(self, n: int) -> dict:
        """One row as a dict of Python values (the same values ``take([n]).to_pylist()[0]`` gives).

        The block comes from the LRU cache or is read and decompressed once; the
        row is then located through the block's offset array and decoded alone.
        """
        n = int(n)
        if not 0 <= n < self.num_rows:
            raise InvalidArgumentError(f"row {n} is out of range for a file of {self.num_rows} rows")
        facts = self._facts
        b, off, csz, usz, first, nrows = self.index.locate(n)
        data = self._block(b, off, csz, usz, nrows)
        local = n - first
        kinds = facts.row_kinds
        if kinds is not None:  # every field an integer, a float, a boolean, text or bytes: one kernel call
            out = {}
            k = _speedups.kernel("rowcodec")
            if k.row_values(data, nrows, local, kinds, facts.names, out, None) < 0:
                self._row_error(k, data, nrows, local, kinds, b, n)
            return out
        getters = facts.getters
        data_end = len(data) - 4 - 4 * nrows
        at = data_end + 4 * local
        pos = _I32.unpack_from(data, at)[0]
        end = _I32.unpack_from(data, at + 4)[0] if local + 1 < nrows else data_end
        if not 0 <= pos <= end <= data_end:
            raise CorruptFileError(f"row offset {pos} outside the block's rows", path=self.path, block=b, row=n,
                                   offset=at)
        nb = (len(getters) + 7) // 8
        if nb > end - pos:
            raise CorruptFileError("row shorter than its null bitmap", path=self.path, block=b, row=n, offset=pos)
        bits = data[pos:pos + nb]
        pos += nb
        out = {}
        for i, (name, how, arg, arrow_type) in enumerate(getters):
            if bits[i >> 3] & (1 << (i & 7)):
                out[name] = None
                continue
            start = pos
            try:
                if how == _GET_FIXED:
                    if arg.size > end - pos:
                        raise V._Bad("truncated value", pos)
                    out[name] = arg.unpack_from(data, pos)[0]
                    pos += arg.size
                    continue
                if how == _GET_BYTES:
                    out[name], pos = V.decode_bytes(data, pos, end, arg)
                    continue
                v, pos = V.decode_value(arg, data, pos, end)
                if arrow_type is None:
                    out[name] = v
                    continue
                import pyarrow as pa
                try:
                    scalar = pa.scalar(v, type=arrow_type)
                except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
                    raise CorruptFileError(f"value outside its type: {e}", path=self.path, block=b, row=n,
                                           field=name, offset=start) from None
            except V._Bad as e:
                raise CorruptFileError(str(e.args[0]), path=self.path, block=b, row=n, field=name,
                                       offset=e.args[1]) from None
            try:
                out[name] = scalar.as_py()
            except (OverflowError, ValueError):
                # a valid date or timestamp beyond datetime's years 1..9999 (read_all returns it as stored)
                raise ValueOutOfRangeError("value outside the range of Python's datetime", field=name,
                                           value=v, path=self.path) from None
        return out

    def _row_error(self, k, data, nrows, local, kinds, b, n):
        """Raise the CorruptFileError for row ``n`` (row ``local`` of block ``b``), which the row_values kernel
        refused: the same error the field-by-field reading gives."""
        state = [0, 0, 0, 0]
        st = k.row_values(data, nrows, local, kinds, self._facts.names, {}, state)
        check, field, at, detail = state
        if check == k.RV_OFFSET:
            raise CorruptFileError(f"row offset {detail} outside the block's rows", path=self.path, block=b, row=n,
                                   offset=at)
        if check == k.RV_BITMAP:
            raise CorruptFileError("row shorter than its null bitmap", path=self.path, block=b, row=n, offset=at)
        what = {k.RV_VARINT_TRUNCATED: "truncated varint", k.RV_VARINT_OVERLONG: "overlong varint",
                k.RV_LENGTH: f"length {detail} exceeds the available bytes", k.RV_TRUNCATED: "truncated value",
                k.RV_BOOL: f"boolean byte {detail}", k.RV_UTF8: "invalid UTF-8"}.get(check)
        if what is None:
            raise CorruptFileError(f"row {n}: {status.describe(st)}", path=self.path, block=b, row=n)
        raise CorruptFileError(what, path=self.path, block=b, row=n, field=self._facts.names[field], offset=at)
