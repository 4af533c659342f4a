"""Fory rows: paimon_engine vs pyfory 1.7.7, same rows, same run.

Workload (issue 5): 1,000,000 rows of ``id int64, price float64, name string (12 chars), qty int32 (10% null),
tags list<int64> (3 elements)``, standard layout (the only one pyfory has).

Peers do the same job with their own paths:
- Arrow -> rows: pyfory has no Arrow-to-rows path, so ``pyfory`` = ``RecordBatch.to_pylist()`` + ``to_row`` per
  row; ``pyfory_from_dicts`` = ``to_row`` per row from Python dicts built beforehand (pyfory's own part only).
  ``paimon_engine_reuse`` encodes into one caller buffer reused between calls (``out=``, memory already backed);
  ``fresh_bytes_floor`` writes as many bytes as the rows take into a new array (``np.empty`` + ``fill``): the
  page faults and zeroing any encoder into fresh memory pays, whatever its speed.
- rows -> Arrow: ``pyfory`` = ``ArrowWriter.write(row)`` per row + ``finish()``.
- single-field access: ``RowView.get_int64`` / ``get_string`` vs pyfory ``RowData.get_int64`` / ``get_str`` over
  100,000 row objects, with the Python call floor alongside.

Every figure is per core: :func:`one_thread` runs the engine's kernels on the calling thread (pyfory has one).
"""
import os

import numpy as np

N = 1_000_000
VIEWS = 100_000


def one_thread():
    """The engine's pools off (``PAIMON_ENGINE_THREADS=1``: encoding and decoding run on the calling thread), read
    at every call; asv runs every benchmark in a fresh process, so this holds for the whole measurement."""
    os.environ["PAIMON_ENGINE_THREADS"] = "1"


def _batch(n):
    import pyarrow as pa
    rng = np.random.default_rng(7)
    qty = pa.array(rng.integers(0, 1000, n).astype(np.int32), mask=rng.random(n) < 0.1)
    tags = pa.ListArray.from_arrays(np.arange(0, 3 * n + 1, 3, dtype=np.int32),
                                    pa.array(rng.integers(0, 1 << 40, 3 * n)))
    return pa.record_batch({"id": np.arange(n, dtype=np.int64), "price": rng.random(n) * 100,
                            "name": pa.array([f"item-{i:07d}" for i in range(n)]), "qty": qty, "tags": tags})


def _pyfory_schema():
    from pyfory import format as ff
    return ff.schema([ff.field("id", ff.int64()), ff.field("price", ff.float64()), ff.field("name", ff.utf8()),
                      ff.field("qty", ff.int32()), ff.field("tags", ff.list_(ff.int64()))])


def _pyfory_encoder():
    import warnings

    from pyfory import format as ff
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ff.create_row_encoder(_pyfory_schema())


def _pyfory_rows(buf, offsets):
    """pyfory ``RowData`` objects over the rows ``buf[offsets[i]:offsets[i + 1]]``."""
    import pyfory
    from pyfory import format as ff
    schema = _pyfory_schema()
    raw = bytes(buf)
    return [ff.RowData(schema, pyfory.Buffer(raw, int(offsets[i]), int(offsets[i + 1] - offsets[i])))
            for i in range(len(offsets) - 1)]


class ArrowToRows:
    params = (["paimon_engine", "paimon_engine_reuse", "fresh_bytes_floor", "pyfory", "pyfory_from_dicts"],)
    param_names = ["impl"]
    number = 1
    # steady state: the first calls of a fresh process pay for backing new memory (100 MB of rows), which on
    # this class of VM costs more than the encoding itself; asv reports the median of the samples
    repeat = (7, 10, 60.0)
    warmup_time = 0
    timeout = 900

    def setup(self, impl):
        one_thread()
        self.batch = _batch(N)
        if impl.startswith("pyfory"):
            self.encoder = _pyfory_encoder()
        if impl in ("paimon_engine_reuse", "fresh_bytes_floor"):
            from paimon_engine.formats import fory
            self.nbytes = len(fory.encode_rows(self.batch)[0])
            self.out = np.empty(self.nbytes, dtype=np.uint8)
            self.out.fill(0)
        if impl == "pyfory_from_dicts":
            self.dicts = self.batch.to_pylist()

    def time_encode(self, impl):
        if impl == "paimon_engine":
            from paimon_engine.formats import fory
            fory.encode_rows(self.batch)
        elif impl == "paimon_engine_reuse":
            from paimon_engine.formats import fory
            fory.encode_rows(self.batch, out=self.out)
        elif impl == "fresh_bytes_floor":
            np.empty(self.nbytes, dtype=np.uint8).fill(1)
        elif impl == "pyfory":
            to_row = self.encoder.to_row
            for d in self.batch.to_pylist():
                to_row(d)
        else:
            to_row = self.encoder.to_row
            for d in self.dicts:
                to_row(d)


class EncodeLayouts:
    """paimon_engine alone: standard vs compact layout (pyfory has no compact layout)."""
    params = (["standard", "compact"],)
    param_names = ["layout"]

    def setup(self, layout):
        one_thread()
        self.batch = _batch(N)

    def time_encode(self, layout):
        from paimon_engine.formats import fory
        fory.encode_rows(self.batch, layout=layout)

    def time_decode(self, layout):
        from paimon_engine.formats import fory
        fory.decode_rows(*self.rows(layout), self.batch.schema, layout)

    def rows(self, layout):
        key = "_rows_" + layout
        if not hasattr(self, key):
            from paimon_engine.formats import fory
            setattr(self, key, fory.encode_rows(self.batch, layout=layout))
        return getattr(self, key)


class RowsToArrow:
    params = (["paimon_engine", "pyfory"],)
    param_names = ["impl"]
    number = 1
    repeat = (7, 10, 60.0)
    warmup_time = 0
    timeout = 900

    def setup(self, impl):
        one_thread()
        from paimon_engine.formats import fory
        self.batch = _batch(N)
        self.buf, self.offsets = fory.encode_rows(self.batch)
        if impl == "pyfory":
            self.rows = _pyfory_rows(self.buf, self.offsets)

    def time_decode(self, impl):
        if impl == "paimon_engine":
            from paimon_engine.formats import fory
            fory.decode_rows(self.buf, self.offsets, self.batch.schema)
        else:
            from pyfory import format as ff
            writer = ff.ArrowWriter(self.batch.schema)
            for row in self.rows:
                writer.write(row)
            writer.finish()

    def peakmem_decode(self, impl):
        self.time_decode(impl)


class Projection:
    """paimon_engine alone: one projected field vs every field, from the same rows."""
    params = (["price", "all"],)
    param_names = ["columns"]

    def setup(self, columns):
        one_thread()
        from paimon_engine.formats import fory
        self.batch = _batch(N)
        self.buf, self.offsets = fory.encode_rows(self.batch)

    def time_decode(self, columns):
        from paimon_engine.formats import fory
        fory.decode_rows(self.buf, self.offsets, self.batch.schema, columns=None if columns == "all" else [columns])


class FieldAccess:
    """One field of each of 100,000 rows: ``get_int64`` of ``id`` and ``get_string`` of ``name`` (12 ASCII
    characters; pyfory: ``get_str``). ``call_floor`` is the cost of the Python loop and one one-argument method
    call per row that allocates nothing (the engine's ``is_null(0)``): no per-row getter called from Python can
    go below it."""
    params = (["paimon_engine", "pyfory", "call_floor"],)
    param_names = ["impl"]

    def setup(self, impl):
        from paimon_engine.formats import fory
        batch = _batch(VIEWS)
        buf, offsets = fory.encode_rows(batch)
        raw = bytes(buf)
        if impl == "pyfory":
            self.views = _pyfory_rows(raw, offsets)
        else:
            schema = fory.ForySchema(batch.schema)
            self.views = [fory.RowView(raw, schema, "standard", 0, int(offsets[i]), int(offsets[i + 1]))
                          for i in range(VIEWS)]

    def time_get_int64(self, impl):
        if impl == "call_floor":
            for v in self.views:
                v.is_null(0)
        else:
            for v in self.views:
                v.get_int64(0)

    def time_get_string(self, impl):
        if impl == "call_floor":
            for v in self.views:
                v.is_null(2)
        elif impl == "pyfory":
            for v in self.views:
                v.get_str(2)
        else:
            for v in self.views:
                v.get_string(2)
