"""Varint and bitmap kernels: compiled vs pure-Python twin vs a NumPy-only baseline."""
import numpy as np

from paimon_engine import _speedups

N = 200_000


def _numpy_delta_zigzag_varint(values):
    """NumPy-only baseline: vectorised delta + zigzag, LEB128 by byte planes."""
    d = np.diff(values, prepend=np.int64(0))
    z = ((d << 1) ^ (d >> 63)).view(np.uint64)
    nbytes = np.ones(len(z), dtype=np.int64)
    t = z >> np.uint64(7)
    while t.any():
        nbytes += (t > 0)
        t >>= np.uint64(7)
    out = np.zeros(int(nbytes.sum()), dtype=np.uint8)
    starts = np.concatenate(([0], np.cumsum(nbytes)[:-1]))
    for k in range(int(nbytes.max())):
        sel = nbytes > k
        byte = ((z[sel] >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        byte |= np.where(nbytes[sel] > k + 1, 0x80, 0).astype(np.uint8)
        out[starts[sel] + k] = byte
    return out.tobytes()


class DeltaVarint:
    params = ["cython", "python", "numpy"]
    param_names = ["impl"]

    def setup(self, impl):
        rng = np.random.default_rng(0)
        self.values = np.cumsum(rng.integers(0, 5000, size=N)).astype(np.int64)
        if impl == "cython" and _speedups.compiled("varint") is None:
            raise NotImplementedError("compiled kernels not built")
        self.k = _speedups.compiled("varint") if impl == "cython" else _speedups.twin("varint")
        self.blob = self.k.encode_delta_varint(self.values)
        self.out = np.empty(N, dtype=np.int64)
        if impl == "python":
            self.values = self.values[: N // 20]  # the twin is slow: time a twentieth
            self.blob = self.k.encode_delta_varint(self.values)

    def time_encode(self, impl):
        if impl == "numpy":
            _numpy_delta_zigzag_varint(self.values)
        else:
            self.k.encode_delta_varint(self.values)



class DeltaVarintDecode:
    params = ["cython", "python"]
    param_names = ["impl"]
    setup = DeltaVarint.setup

    def time_decode(self, impl):
        self.k.decode_delta_varint(self.blob, 0, len(self.values), self.out)


class NullBitmap:
    params = ["cython", "python", "numpy"]
    param_names = ["impl"]

    def setup(self, impl):
        rng = np.random.default_rng(0)
        self.bits = np.packbits(rng.random(N * 8) < 0.1, bitorder="little").tobytes()
        self.count = N * 8
        self.out = np.empty((self.count + 7) // 8, dtype=np.uint8)
        if impl == "cython" and _speedups.compiled("bitmap") is None:
            raise NotImplementedError("compiled kernels not built")
        self.k = _speedups.compiled("bitmap") if impl == "cython" else _speedups.twin("bitmap")

    def time_nulls_to_validity(self, impl):
        if impl == "numpy":
            bits = np.unpackbits(np.frombuffer(self.bits, np.uint8), bitorder="little")
            np.packbits(bits ^ 1, bitorder="little")
            int(bits.sum())
        else:
            self.k.nulls_to_validity(self.bits, 0, self.count, False, self.out)


class DictionaryColumn:
    """One dictionary-encoded, uncompressed Parquet column chunk of 2M rows (1000 distinct values, 10-bit indices,
    pages of 1 MB; strings of 2-4 bytes, ``s0`` .. ``s999``) decoded into an Arrow array: the engine's page decoder
    (its vector paths as the processor allows, and with them off) against pyarrow reading the same column from the
    same bytes in memory."""
    params = (["paimon_engine", "paimon_engine_scalar", "pyarrow"], ["int32", "int64", "string"])
    param_names = ["impl", "type"]
    ROWS = 2_000_000

    def setup(self, impl, type_):
        import io
        import pyarrow as pa
        import pyarrow.parquet as pq
        from paimon_engine.scan import parquet_columns as PC
        rng = np.random.default_rng(0)
        ints = rng.integers(0, 1000, self.ROWS)
        values = pa.array(np.char.add("s", ints.astype(str)) if type_ == "string" else ints.astype(type_))
        sink = io.BytesIO()
        pq.write_table(pa.table({"k": values}), sink, compression="none", use_dictionary=True,
                       row_group_size=self.ROWS)
        self.buf = pa.py_buffer(sink.getvalue())
        pf = pq.ParquetFile(pa.BufferReader(self.buf))
        md = pf.metadata
        self.chunk = PC.chunk_of(md.row_group(0).column(0), pf.schema.column(0), md.num_rows)
        self.type = values.type
        self.pa, self.pq = pa, pq
        self.k = _speedups.compiled("parquet")
        if impl.startswith("paimon_engine") and self.k is None:
            raise NotImplementedError("compiled kernels not built")
        self.read = PC.read_column_chunk
        if impl == "paimon_engine_scalar":
            self.before = self.k.vector_paths(False)
        got = self.decode(impl, type_)
        got = got if isinstance(got, pa.ChunkedArray) else pa.chunked_array([got])
        assert got.equals(pa.chunked_array([values])), "the decoded column differs"

    def teardown(self, impl, type_):
        if impl == "paimon_engine_scalar":
            self.k.vector_paths(self.before)

    def decode(self, impl, type_):
        if impl == "pyarrow":
            return self.pq.read_table(self.pa.BufferReader(self.buf), use_threads=False).column(0)
        buf = self.buf
        return self.read("bench", lambda size, off: buf[off:off + size], buf.size, self.chunk, self.type)

    def time_decode(self, impl, type_):
        self.decode(impl, type_)
