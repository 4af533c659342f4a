"""Batch codecs between column batches and Fory rows (the ``foryrow`` kernel does the per-row work)."""

from __future__ import annotations

import numpy as np

from ... import _speedups
from ..._parallel import parallel_map, thread_count
from ..._pykernels.status import NEED_MORE, describe
from ...errors import CorruptFileError, InvalidArgumentError, SchemaError, ValueOutOfRangeError
from . import schema as S
from .schema import ForySchema

__all__ = ["encode_rows", "decode_rows", "encode_row", "decode_row", "split_rows"]


def _pa():
    import pyarrow as pa
    return pa


def _kernel():
    return _speedups.kernel("foryrow")


def _as_record_batch(batch):
    """A pyarrow RecordBatch (single chunk) for a ColumnBatch, Table, RecordBatch or mapping."""
    pa = _pa()
    if isinstance(batch, pa.RecordBatch):
        return batch
    if isinstance(batch, pa.Table):
        batch = batch.combine_chunks()
        if batch.num_rows == 0:
            return pa.RecordBatch.from_pylist([], schema=batch.schema)
        batches = batch.to_batches()
        if len(batches) == 1:
            return batches[0]
        return pa.RecordBatch.from_arrays([c.combine_chunks() for c in batch.columns], schema=batch.schema)
    if hasattr(batch, "to_arrow") and hasattr(batch, "columns"):
        out = batch.to_arrow()
        return out if isinstance(out, pa.RecordBatch) else _as_record_batch(out)
    if isinstance(batch, dict):
        return pa.RecordBatch.from_pydict(batch)
    raise InvalidArgumentError(f"cannot encode {type(batch).__name__} as Fory rows; "
                               "pass a ColumnBatch, pyarrow RecordBatch/Table or a dict of columns")


def _np(buf, dtype):
    if buf is None:
        return None
    return np.frombuffer(buf, dtype=dtype)


def _collect(node, arr, inputs):
    """Kernel input tuple of ``arr`` for ``node`` and its subtree, in node order."""
    pa = _pa()
    bufs = arr.buffers()
    validity = _np(bufs[0], np.uint8) if arr.null_count else None
    k = node.kind
    if k in (S.K_FIXED, S.K_BOOL, S.K_DECIMAL):
        inputs[node.index] = (validity, arr.offset, _np(bufs[1], np.uint8), None, None)
    elif k == S.K_BYTES:
        offs = _np(bufs[1], np.int64 if node.large else np.int32)
        data = _np(bufs[2], np.uint8)
        inputs[node.index] = (validity, arr.offset, None, offs, data)
    elif k == S.K_LIST:
        offs = _np(bufs[1], np.int64 if node.large else np.int32)
        inputs[node.index] = (validity, arr.offset, None, offs, None)
        _collect(node.children[0], arr.values, inputs)
    elif k == S.K_MAP:
        offs = _np(bufs[1], np.int32)
        inputs[node.index] = (validity, arr.offset, None, offs, None)
        entries_node = node.children[0]
        entries = arr.values
        inputs[entries_node.index] = None
        for i, ch in enumerate(entries_node.children):
            _collect(ch, entries.field(i), inputs)
    elif k == S.K_STRUCT:
        inputs[node.index] = (validity, arr.offset, None, None, None)
        for i, ch in enumerate(node.children):
            _collect(ch, arr.field(i), inputs)


def _conform(rb, schema: ForySchema):
    """Columns of ``rb`` in schema order and types (casting where the types differ)."""
    pa = _pa()
    cols = []
    for f in schema.arrow_schema:
        idx = rb.schema.get_field_index(f.name)
        if idx < 0:
            raise SchemaError(f"column {f.name!r} of the Fory schema is missing from the batch "
                              f"(batch has {rb.schema.names})")
        arr = rb.column(idx)
        if not arr.type.equals(f.type):
            try:
                arr = arr.cast(f.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise SchemaError(f"column {f.name!r}: cannot encode {arr.type} as {f.type} ({e})") from None
        cols.append(arr)
    return cols


def _node_path(layout, index):
    return layout.paths()[index]


def encode_rows(batch, schema=None, layout: str = S.STANDARD, *, out=None):
    """Encode every row of ``batch`` as a Fory row.

    ``batch`` is a ``ColumnBatch``, a pyarrow ``RecordBatch``/``Table`` or a
    dict of columns; ``schema`` a :class:`ForySchema` (default: the batch's
    own schema). Columns are matched by name and cast to the schema's types.
    Returns ``(buffer, offsets)``: a NumPy uint8 array holding the rows back
    to back and an int64 array of ``num_rows + 1`` offsets, so row ``i`` is
    ``buffer[offsets[i]:offsets[i + 1]]``.

    ``out`` (optional) is a writable C-contiguous NumPy uint8 array the rows
    are written into when they fit (``buffer`` is then a view of its first
    bytes); a caller encoding batch after batch can pass the same array and
    skip backing fresh memory each time. Rows that do not fit raise
    :class:`InvalidArgumentError` before anything is written.
    """
    rb = _as_record_batch(batch)
    schema = _fory_schema(rb.schema if schema is None else schema)
    lay = schema.layout(layout)
    cols = _conform(rb, schema)
    nrows = rb.num_rows
    inputs = [None] * len(lay.nodes)
    for node, arr in zip(lay.root.children, cols):
        _collect(node, arr, inputs)
    kern = _kernel()
    offsets = np.zeros(nrows + 1, dtype=np.int64)
    ranges = _row_ranges(nrows)
    # each range gets its own running offsets; the ranges after the first are then moved by the bytes before them
    totals = _parallel(lambda r: kern.measure_rows(lay.table, lay.children, inputs, r[0], r[1], lay.compact,
                                                   offsets, True), ranges)
    if min(totals, default=0) < 0:  # pragma: no cover - the arguments are built above
        raise InvalidArgumentError("cannot size the rows of this batch")
    base = 0
    for (start, stop), part in zip(ranges, totals):
        if base:
            offsets[start + 1:stop + 1] += base
        base += part
    total = int(offsets[-1])
    zeroed = out is None
    if zeroed:
        # new memory that is zero already (large arrays come straight from the system, zero-filled), so the
        # kernel writes the rows without zeroing them first
        out = np.zeros(total, dtype=np.uint8)
    else:
        if not (isinstance(out, np.ndarray) and out.dtype == np.uint8 and out.ndim == 1
                and out.flags.c_contiguous and out.flags.writeable):
            raise InvalidArgumentError("out must be a writable contiguous 1-D NumPy uint8 array")
        if len(out) < total:
            raise InvalidArgumentError(f"out holds {len(out)} bytes, the rows take {total}")
        out = out[:total]

    def encode(r):
        state = np.array([r[0], offsets[r[0]], 0, 0], dtype=np.int64)
        got = kern.encode_rows(lay.table, lay.children, inputs, r[1], lay.compact, out, offsets, state, True,
                               zeroed)
        return got, state

    for (start, stop), (got, state) in zip(ranges, _parallel(encode, ranges)):
        if got < 0:
            row, node = int(state[2]), int(state[3])
            raise InvalidArgumentError(
                f"row {row}: field {_node_path(lay, node)!r} is null but the {layout} layout has no null bit "
                f"for it (the field or element is declared not nullable)")
        if got != stop - start:  # pragma: no cover - measure_rows sized the buffer for every row
            raise InvalidArgumentError(f"encoded {got} of {stop - start} rows")
    buf = out
    return buf, offsets


#: below this many rows a batch is coded on the calling thread alone
PARALLEL_MIN_ROWS = 65536


def _threads() -> int:
    return thread_count()


def _parallel(fn, items):
    """``[fn(x) for x in items]``, on a thread pool when there is more than one item (the kernels run without
    the GIL, so the calls really overlap)."""
    return parallel_map("fory", fn, items)


def _row_ranges(nrows):
    parts = _threads() if nrows >= PARALLEL_MIN_ROWS else 1
    cuts = np.linspace(0, nrows, parts + 1).astype(np.int64)
    return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]


def _decode_cost(node):
    """A field's decoding cost in rough units (its own kind and its children's)."""
    own = {S.K_FIXED: 1, S.K_BOOL: 1, S.K_DECIMAL: 2, S.K_BYTES: 3, S.K_STRUCT: 1}.get(node.kind, 3)
    return own + sum(_decode_cost(c) for c in node.children)


def _field_groups(lay, selected, nrows):
    """Top-level fields split into groups of similar decoding cost, decoded by one thread each. Groups own
    disjoint node subtrees, so no two threads write the same output buffer."""
    parts = min(_threads(), len(selected)) if nrows >= PARALLEL_MIN_ROWS else 1
    if parts <= 1:
        return [list(selected)]
    groups = [[] for _ in range(parts)]
    load = [0] * parts
    for k in sorted(selected, key=lambda k: -_decode_cost(lay.root.children[k])):
        g = load.index(min(load))
        groups[g].append(k)
        load[g] += _decode_cost(lay.root.children[k])
    return [sorted(g) for g in groups if g]


def split_rows(buffer, offsets):
    """The rows of an ``encode_rows`` result as a list of ``bytes``."""
    data = memoryview(buffer).cast("B") if not isinstance(buffer, bytes) else buffer
    return [bytes(data[offsets[i]:offsets[i + 1]]) for i in range(len(offsets) - 1)]


def _as_u8(buffer):
    if isinstance(buffer, np.ndarray):
        return np.ascontiguousarray(buffer).view(np.uint8).reshape(-1)
    return np.frombuffer(buffer, dtype=np.uint8)


def _arrow_type(node, large_override):
    pa = _pa()
    t = node.field.type
    if node.index in large_override:
        if pa.types.is_string(t):
            return pa.large_string()
        if pa.types.is_binary(t):
            return pa.large_binary()
        if pa.types.is_list(t):
            return pa.large_list(t.value_field)
    return t


def _build(node, counts, outs, large_override):
    """pyarrow Array for ``node`` from the filled buffers (children first)."""
    pa = _pa()
    n, _, nulls = (int(x) for x in counts[node.index])
    validity, values, offsets, data = outs[node.index]
    vbuf = pa.py_buffer(validity) if nulls else None
    k = node.kind
    t = _arrow_type(node, large_override)
    if k in (S.K_FIXED, S.K_BOOL, S.K_DECIMAL):
        return pa.Array.from_buffers(t, n, [vbuf, pa.py_buffer(values)], null_count=nulls)
    if k == S.K_BYTES:
        return pa.Array.from_buffers(t, n, [vbuf, pa.py_buffer(offsets), pa.py_buffer(data)], null_count=nulls)
    if k == S.K_LIST:
        child = _build(node.children[0], counts, outs, large_override)
        if node.children[0].index in large_override:
            t = (pa.large_list if pa.types.is_large_list(t) else pa.list_)(
                pa.field(t.value_field.name, child.type, t.value_field.nullable))
        return pa.Array.from_buffers(t, n, [vbuf, pa.py_buffer(offsets)], null_count=nulls, children=[child])
    if k == S.K_MAP:
        ent = node.children[0]
        kids = [_build(c, counts, outs, large_override) for c in ent.children]
        fields = [pa.field(c.field.name, a.type, c.field.nullable) for c, a in zip(ent.children, kids)]
        entries = pa.StructArray.from_arrays(kids, fields=fields)
        if any(c.index in large_override for c in ent.children):
            t = pa.map_(fields[0], fields[1], keys_sorted=t.keys_sorted)
        return pa.Array.from_buffers(t, n, [vbuf, pa.py_buffer(offsets)], null_count=nulls, children=[entries])
    kids = [_build(c, counts, outs, large_override) for c in node.children]
    if any(c.index in large_override for c in _walk(node) if c is not node):
        t = pa.struct([pa.field(c.field.name, a.type, c.field.nullable, c.field.metadata)
                       for c, a in zip(node.children, kids)])
    return pa.Array.from_buffers(t, n, [vbuf], null_count=nulls, children=kids)


def _walk(node):
    yield node
    for c in node.children:
        yield from _walk(c)


INT32_MAX = 2 ** 31 - 1

def _fory_schema(schema) -> ForySchema:
    """``schema`` itself when it is a ForySchema (so its cached layouts are reused), else one built from it."""
    return schema if isinstance(schema, ForySchema) else ForySchema(schema)


#: the source name errors carry when the caller names none
DEFAULT_SOURCE = "<fory rows>"


def decode_rows(buffer, offsets, schema, layout: str = S.STANDARD, columns=None, *, output: str = "arrow",
                source=None):
    """Decode Fory rows into columns.

    ``buffer`` holds the rows (bytes-like or NumPy uint8); ``offsets`` has
    ``num_rows + 1`` entries, row ``i`` = ``buffer[offsets[i]:offsets[i + 1]]``.
    ``columns`` names the top-level fields to decode (default all); the
    others are not touched, so a projection costs only what it reads.
    ``output="arrow"`` returns a pyarrow ``RecordBatch``, ``"batch"`` a
    ``ColumnBatch``. Every offset, size and count in the rows is checked; a
    bad row raises :class:`CorruptFileError` naming the row, the field and
    the byte offset in ``buffer``, and ``source`` (default ``"<fory rows>"``).
    String values must be valid UTF-8, so every result passes
    ``validate(full=True)``. Dates and timestamps are returned as stored,
    even outside the years Python's :mod:`datetime` can hold.
    """
    pa = _pa()
    source = DEFAULT_SOURCE if source is None else source
    schema = _fory_schema(schema)
    lay = schema.layout(layout)
    buf = _as_u8(buffer)
    offs = np.ascontiguousarray(offsets, dtype=np.int64)
    if offs.ndim != 1 or len(offs) < 1:
        raise InvalidArgumentError("offsets must be a 1-D array of num_rows + 1 positions")
    nrows = len(offs) - 1
    if columns is None:
        selected = list(range(len(schema)))
    else:
        if isinstance(columns, str):
            columns = [columns]
        selected = [schema.index(c) for c in columns]
    kern = _kernel()
    nn = len(lay.nodes)
    table = lay.table
    groups = _field_groups(lay, selected, nrows)

    def group_select(group):
        sel = np.zeros(len(schema), dtype=np.uint8)
        sel[group] = 1
        return sel

    selects = [group_select(g) for g in groups]

    def run(sel, outputs, tbl):
        counts = np.zeros((nn, 3), dtype=np.int64)
        state = np.zeros(3, dtype=np.int64)
        st = kern.decode_rows(tbl, lay.children, buf, offs, nrows, sel, lay.compact, outputs, counts, state)
        return st, counts, state

    def merged(results):
        # the first failing row over all groups, so the error does not depend on the grouping
        bad = [(int(state[0]), st, state) for st, _, state in results if st < 0]
        if bad:
            _, st, state = min(bad, key=lambda b: (b[0], int(b[2][1])))
            raise _corrupt(st, state, lay, source)
        return sum(counts for _, counts, _ in results)

    wanted = set()
    for k in selected:
        wanted.update(n.index for n in _walk(lay.root.children[k]))
    outs = None
    caps = _one_pass_capacities(lay, selected, nrows, offs, len(buf))
    if caps is not None:
        # one pass into buffers sized by what the rows could hold at most (virtual memory until written)
        outs, table, large_override = _allocate(lay, wanted, caps)
        results = _parallel(lambda sel: run(sel, outs, table), selects)
        if any(st == NEED_MORE for st, _, _ in results):
            outs = None  # rows that share bytes decode to more than their size: count first
        else:
            counts = merged(results)
    if outs is None:
        counts = merged(_parallel(lambda sel: run(sel, None, lay.table), selects))
        exact = {i: (int(counts[i, 0]), int(counts[i, 1])) for i in wanted}
        outs, table, large_override = _allocate(lay, wanted, exact)
        fill_counts = merged(_parallel(lambda sel: run(sel, outs, table), selects))
        counts[:, 2] = fill_counts[:, 2]  # null counts come from the filling pass
    outs = _trim(lay, outs, counts)
    arrays, fields = [], []
    for k in selected:
        node = lay.root.children[k]
        arr = _build(node, counts, outs, large_override)
        arrays.append(arr)
        f = node.field
        fields.append(pa.field(f.name, arr.type, f.nullable, f.metadata))
    rb = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields, metadata=schema.arrow_schema.metadata))
    if output == "arrow":
        return rb
    if output == "batch":
        from ...batch import ColumnBatch
        return ColumnBatch.from_arrow(rb)
    raise InvalidArgumentError(f"output must be 'arrow' or 'batch', not {output!r}")


def _one_pass_capacities(lay, selected, nrows, offs, blen):
    """``{node: (values, data bytes)}`` no valid set of rows can exceed, or None when the bound would cost too
    much address space or force 64-bit offsets (then the rows are counted first).

    Top-level fields hold one value per row and struct fields as many as their struct; every array element
    takes ``slot`` bytes of its array and every string byte one byte of the rows, so the rows' total size bounds
    both. Rows that point into shared bytes can exceed this: the kernel checks every append against the
    capacities and answers NEED_MORE instead of writing past them."""
    # offsets that go back, or lie outside the buffer: no bound (the counting pass names the bad row). Ascending
    # offsets from inside the buffer stay inside it, and the rows' total size is the last minus the first (one
    # comparison pass instead of the five of a min, a max, the lengths, their min and their sum: 1.9 -> 0.4 ms
    # for 1M rows)
    lo, hi = int(offs[0]), int(offs[-1])
    if lo < 0 or hi > blen or not (offs[1:] >= offs[:-1]).all():
        return None
    total = hi - lo
    caps = {}
    budget = 0

    def per_slot(slot):
        return total // slot if slot > 0 else total * 8

    # (node, its capacity) to visit: a loop over a stack, not a closure that calls itself (a reference cycle,
    # left for the cycle collector)
    todo = [(lay.root.children[k], nrows) for k in selected]
    while todo:
        node, cap = todo.pop()
        dcap = total if node.kind == S.K_BYTES else 0
        caps[node.index] = (cap, dcap)
        budget += cap * (node.width or 0) + cap // 8 + dcap
        if node.kind in (S.K_BYTES, S.K_LIST, S.K_MAP):
            budget += 8 * (cap + 1)
            if not node.large and (dcap > INT32_MAX or cap > INT32_MAX):
                return None
        if node.kind == S.K_STRUCT:
            todo += [(ch, cap) for ch in node.children]
        elif node.kind == S.K_LIST:
            elem = node.children[0]
            elem_cap = per_slot(elem.slot)
            if not node.large and elem_cap > INT32_MAX:
                return None
            todo.append((elem, elem_cap))
        elif node.kind == S.K_MAP:
            ent = node.children[0]
            key, value = ent.children
            todo.append((ent, per_slot(max(key.slot, value.slot))))
    if budget > 4 * total + (64 << 20):
        return None
    return caps


def _allocate(lay, wanted, sizes):
    """Zeroed output buffers per node for ``sizes`` = ``{node: (values, data bytes)}``; offsets become int64
    where int32 would overflow. -> (outputs, node table, nodes whose offsets were widened)."""
    outs = [None] * len(lay.nodes)
    table = lay.table
    large_override = set()
    for i in sorted(wanted):
        node = lay.nodes[i]
        n, dlen = sizes[i]
        large = bool(node.large)
        if node.kind == S.K_BYTES and not large and dlen > INT32_MAX:
            large = True
            large_override.add(i)
        if node.kind == S.K_LIST and not large and sizes[node.children[0].index][0] > INT32_MAX:
            large = True
            large_override.add(i)
        if large != bool(node.large):
            table = table.copy() if table is lay.table else table
            table[i, S.C_LARGE] = 1
        validity = np.zeros((n + 7) // 8 or 1, dtype=np.uint8)
        values = offsets_out = data = None
        if node.kind in (S.K_FIXED, S.K_DECIMAL):
            values = np.zeros(n * node.width or 1, dtype=np.uint8)
        elif node.kind == S.K_BOOL:
            values = np.zeros((n + 7) // 8 or 1, dtype=np.uint8)
        elif node.kind in (S.K_BYTES, S.K_LIST, S.K_MAP):
            offsets_out = np.zeros(n + 1, dtype=np.int64 if large else np.int32)
            if node.kind == S.K_BYTES:
                data = np.empty(dlen or 1, dtype=np.uint8)
        outs[i] = (validity, values, offsets_out, data, n, dlen)
    return outs, table, large_override


def _trim(lay, outs, counts):
    """The filled buffers cut to what was written (views: nothing is copied)."""
    trimmed = [None] * len(outs)
    for i, t in enumerate(outs):
        if t is None:
            continue
        validity, values, offsets_out, data = t[:4]
        node = lay.nodes[i]
        n, dlen = int(counts[i, 0]), int(counts[i, 1])
        validity = validity[:(n + 7) // 8 or 1]
        if values is not None:
            values = values[:(n * node.width if node.kind != S.K_BOOL else (n + 7) // 8) or 1]
        if offsets_out is not None:
            offsets_out = offsets_out[:n + 1]
        if data is not None:
            data = data[:dlen or 1]
        trimmed[i] = (validity, values, offsets_out, data)
    return trimmed


def _corrupt(status, state, lay, source):
    row, pos, node = int(state[0]), int(state[1]), int(state[2])
    return CorruptFileError(f"malformed Fory row: {describe(status)}", path=source, row=row,
                            field=_node_path(lay, node), offset=pos)


def encode_row(value, schema, layout: str = S.STANDARD) -> bytes:
    """One Fory row from a dict (field name -> Python value; missing names are null)."""
    pa = _pa()
    schema = _fory_schema(schema)
    if not isinstance(value, dict):
        raise InvalidArgumentError(f"encode_row takes a dict of field values, not {type(value).__name__}")
    unknown = set(value) - set(schema.names)
    if unknown:
        raise SchemaError(f"fields {sorted(unknown)} are not in {schema!r}")
    try:
        rb = pa.RecordBatch.from_pylist([value], schema=schema.arrow_schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as e:
        raise InvalidArgumentError(f"value does not fit {schema!r}: {e}") from None
    buf, offsets = encode_rows(rb, schema, layout)
    return bytes(buf[offsets[0]:offsets[1]])


def decode_row(data, schema, layout: str = S.STANDARD, *, source=None) -> dict:
    """The dict of field values of one Fory row.

    Malformed bytes raise :class:`CorruptFileError` exactly where
    :func:`decode_rows` does. A date or timestamp that is valid but outside
    the years :mod:`datetime` can hold raises :class:`ValueOutOfRangeError`
    naming the field and the stored value (``decode_rows`` returns it).
    """
    buf = _as_u8(data)
    schema = _fory_schema(schema)
    rb = decode_rows(buf, np.array([0, len(buf)], dtype=np.int64), schema, layout, source=source)
    try:
        return rb.to_pylist()[0]
    except (OverflowError, ValueError):
        lay = schema.layout(layout)
        for node, arr in zip(lay.root.children, rb.columns):
            found = _first_out_of_range(node, arr, lay)
            if found is not None:
                raise ValueOutOfRangeError("value outside the range of Python's datetime", field=found[0],
                                           value=found[1], path=DEFAULT_SOURCE if source is None else source
                                           ) from None
        raise


def _first_out_of_range(node, arr, lay):
    """(field path, stored integer) of the first value of ``arr`` that has no Python object, or None."""
    pa = _pa()
    k = node.kind
    if k == S.K_STRUCT:
        for i, ch in enumerate(node.children):
            got = _first_out_of_range(ch, arr.field(i), lay)
            if got is not None:
                return got
        return None
    if k == S.K_LIST:
        return _first_out_of_range(node.children[0], arr.values, lay)
    if k == S.K_MAP:
        key, value = node.children[0].children
        return _first_out_of_range(key, arr.keys, lay) or _first_out_of_range(value, arr.items, lay)
    t = arr.type
    if not (pa.types.is_date(t) or pa.types.is_timestamp(t) or pa.types.is_time(t)):
        return None
    storage = arr.view(pa.int32() if t.bit_width == 32 else pa.int64())
    for i in range(len(arr)):
        try:
            arr[i].as_py()
        except (OverflowError, ValueError):
            return _node_path(lay, node.index), storage[i].as_py()
    return None
