"""The engine's Parquet page decoder (scan/parquet_columns.py and the ``parquet`` kernel): every column chunk it
reads equals pyarrow's read of the same file, for files written by pyarrow (data pages v1 and v2, every codec it
takes, dictionary and PLAIN pages, a dictionary that falls back to PLAIN mid-chunk, nulls, several row groups),
DuckDB and Polars; what it does not read raises ``Unsupported``; a damaged chunk raises ``CorruptFileError``
naming the file and an offset inside the chunk, with the compiled kernel and its twin alike."""
import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_engine.errors import CorruptFileError
from paimon_engine.scan import parquet_columns as PC
from tests.kernels.impls import check_vector_paths_live, implementations

N = 3000


@pytest.fixture(params=implementations("parquet"))
def impl(request, monkeypatch):
    monkeypatch.setattr(PC, "kernel", lambda name: request.param)
    return request.param


def _table(n=N, nulls=True, seed=0):
    rng = np.random.default_rng(seed)
    i = np.arange(n)
    mask = (rng.random(n) < 0.2) if nulls else None

    def arr(values, t=None):
        return pa.array(values, t, mask=mask)
    return pa.table({
        "i32": arr(rng.integers(-1000, 1000, n).astype(np.int32)),
        "i64": arr(i.astype(np.int64) * 7919 - 10**12),
        "low": arr((i % 13).astype(np.int64)),
        "f32": arr(rng.random(n).astype(np.float32)),
        "f64": arr(rng.random(n)),
        "d": arr(i.astype(np.int32), pa.int32()).cast(pa.date32()),
        "ts": arr(i.astype(np.int64) * 1_000_003, pa.int64()).cast(pa.timestamp("us")),
        "tz": arr(i.astype(np.int64), pa.int64()).cast(pa.timestamp("us", tz="UTC")),
        "t": arr(i.astype(np.int64) * 1000, pa.int64()).cast(pa.time64("us")),
        "s": arr(np.char.add("s", (i % 97).astype(str)).astype(object)),
        "u": arr([f"ünïcode-{j}-" + "x" * (j % 40) for j in range(n)]),
        "e": arr([""] * n),
        "bin": arr([bytes([j % 251]) * (j % 23) for j in range(n)], pa.binary()),
    })


def _read(path, as_dictionary=(), skip_unsupported=False):
    """{column: our array} of every row group of a file, chunks concatenated."""
    pf = pq.ParquetFile(path)
    md, sch, sa = pf.metadata, pf.schema, pf.schema_arrow
    f = pa.OSFile(str(path))
    out = {}
    for j in range(md.num_columns):
        name = md.schema.column(j).path
        chunks = []
        try:
            for g in range(md.num_row_groups):
                rg = md.row_group(g)
                chunk = PC.chunk_of(rg.column(j), sch.column(j), rg.num_rows)
                t = sa.field(name).type
                if name in as_dictionary:
                    t = pa.dictionary(pa.int32(), t)
                chunks.append(PC.read_column_chunk(str(path), f.read_at, f.size(), chunk, t))
        except PC.Unsupported:
            if skip_unsupported:
                continue
            raise
        out[name] = pa.chunked_array(chunks, type=t)
    return out


def _check(path, as_dictionary=()):
    want = pq.read_table(path)
    got = _read(path, as_dictionary)
    assert list(got) == want.column_names
    for name, col in got.items():
        col.validate(full=True)
        if name in as_dictionary:
            col = col.cast(col.type.value_type)
        assert col.equals(want.column(name)), name
    return got


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("compression", ["none", "zstd", "snappy", "gzip"])
@pytest.mark.parametrize("dictionary", [True, False])
def test_pyarrow_files(tmp_path, impl, version, compression, dictionary):
    p = tmp_path / "t.parquet"
    pq.write_table(_table(), p, data_page_version=version, compression=compression, use_dictionary=dictionary,
                   data_page_size=2048, row_group_size=1100)
    assert pq.ParquetFile(p).metadata.num_row_groups == 3
    _check(p)


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_without_nulls_and_required_columns(tmp_path, impl, version):
    t = _table(nulls=False)
    p = tmp_path / "t.parquet"
    pq.write_table(t, p, data_page_version=version, data_page_size=4096)
    assert _check(p)["i64"].null_count == 0
    # required (non-nullable) columns have no definition levels
    req = tmp_path / "req.parquet"
    pq.write_table(t.cast(pa.schema([f.with_nullable(False) for f in t.schema])), req, data_page_version=version)
    assert pq.ParquetFile(req).schema.column(0).max_definition_level == 0
    _check(req)


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_dictionary_falls_back_to_plain_mid_chunk(tmp_path, impl, version):
    p = tmp_path / "t.parquet"
    pq.write_table(_table(), p, data_page_version=version, data_page_size=1024, dictionary_pagesize_limit=512)
    from paimon_engine.scan.parquet_pages import page_encodings
    c = pq.ParquetFile(p).metadata.row_group(0).column(1)
    f = pa.OSFile(str(p))
    encodings = {e for _, e in page_encodings(f.read_at, c.dictionary_page_offset,
                                               c.dictionary_page_offset + c.total_compressed_size)[1:]}
    assert encodings == {PC.RLE_DICTIONARY, PC.PLAIN}
    _check(p)


@pytest.mark.parametrize("nulls", [True, False])
def test_strings_as_dictionary_indices(tmp_path, impl, nulls):
    p = tmp_path / "t.parquet"
    pq.write_table(_table(nulls=nulls), p, data_page_size=2048, row_group_size=1500)
    got = _check(p, as_dictionary=("s", "u", "e", "bin"))
    assert pa.types.is_dictionary(got["s"].type)
    # a PLAIN page cannot be read as indices: the caller reads such a column through pyarrow
    plain = tmp_path / "plain.parquet"
    pq.write_table(_table(nulls=nulls), plain, use_dictionary=False)
    with pytest.raises(PC.Unsupported):
        _read(plain, as_dictionary=("s",))


def test_all_null_and_empty(tmp_path, impl):
    t = pa.table({"a": pa.nulls(100, pa.int64()), "s": pa.nulls(100, pa.string()), "f": pa.nulls(100, pa.float64())})
    for version in ("1.0", "2.0"):
        p = tmp_path / f"n{version}.parquet"
        pq.write_table(t, p, data_page_version=version)
        _check(p)
        _check(p, as_dictionary=("s",))
    p = tmp_path / "empty.parquet"
    pq.write_table(_table().slice(0, 0), p)
    _check(p)


def test_wide_dictionary_indices(tmp_path, impl):
    """Index bit widths up to 17 (131,072 distinct values) and long bit-packed runs."""
    n = 140_000 if impl.__name__.startswith("paimon_engine._kernels") else 9000
    rng = np.random.default_rng(3)
    t = pa.table({"v": pa.array(rng.permutation(n).astype(np.int64)), "w": pa.array(rng.integers(0, 5, n))})
    p = tmp_path / "t.parquet"
    pq.write_table(t, p, dictionary_pagesize_limit=8 << 20)
    _check(p)


def test_duckdb_files(tmp_path, impl):
    duckdb = pytest.importorskip("duckdb")
    p = tmp_path / "duck.parquet"
    con = duckdb.connect()
    con.execute(f"""COPY (SELECT i::INTEGER AS i32, (i * 1000003)::BIGINT AS i64, (i % 7)::BIGINT AS low,
                                 i / 3.0 AS f64, CASE WHEN i % 5 = 0 THEN NULL ELSE 'v' || (i % 50) END AS s,
                                 repeat('x', i % 30) AS u, DATE '2020-01-01' + (i % 400)::INTEGER AS d
                          FROM range(5000) t(i))
                    TO '{p}' (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE 2048)""")
    _check(p)


def test_polars_files(tmp_path, impl):
    pl = pytest.importorskip("polars")
    t = _table(nulls=True).drop_columns(["tz", "t"])
    for stats, comp in ((True, "zstd"), (False, "snappy"), (True, "uncompressed")):
        p = tmp_path / f"pl-{comp}.parquet"
        pl.from_arrow(t).write_parquet(p, compression=comp, statistics=stats, row_group_size=1000,
                                       data_page_size=4096)
        want = pq.read_table(p)
        got = _read(p, skip_unsupported=True)
        # Polars stores large strings in its Arrow schema: pyarrow reads those columns
        assert {"s", "u", "bin"} - set(got) == {"s", "u", "bin"} - {n for n in want.column_names
                                                                     if want.schema.field(n).type == pa.binary()}
        assert {"i32", "i64", "f64", "d", "ts"} <= set(got)
        for name, col in got.items():
            assert col.equals(want.column(name)), name


def _unsupported(tmp_path, table, **kw):
    p = tmp_path / "u.parquet"
    pq.write_table(table, p, **kw)
    with pytest.raises(PC.Unsupported):
        _read(p)


def test_what_it_leaves_to_pyarrow(tmp_path, impl):
    n = 50
    _unsupported(tmp_path, pa.table({"b": pa.array([True, False] * 25)}))
    _unsupported(tmp_path, pa.table({"x": pa.array(range(n), pa.int8())}))
    _unsupported(tmp_path, pa.table({"x": pa.array(range(n), pa.uint32())}))
    _unsupported(tmp_path, pa.table({"x": pa.array([1] * n, pa.decimal128(10, 2))}))
    _unsupported(tmp_path, pa.table({"x": pa.array([b"ab"] * n, pa.binary(2))}))
    _unsupported(tmp_path, pa.table({"x": pa.array([[1, 2]] * n)}))
    _unsupported(tmp_path, pa.table({"x": pa.array(["a"] * n, pa.large_string())}))
    _unsupported(tmp_path, pa.table({"x": pa.array(["a", "bc"] * 25)}), use_dictionary=False,
                 column_encoding={"x": "DELTA_LENGTH_BYTE_ARRAY"})
    _unsupported(tmp_path, pa.table({"x": pa.array(np.arange(n, dtype=np.float64))}), use_dictionary=False,
                 column_encoding={"x": "BYTE_STREAM_SPLIT"})
    _unsupported(tmp_path, pa.table({"x": pa.array(range(n), pa.int64())}), compression="lz4")
    _unsupported(tmp_path, pa.table({"x": pa.array(range(n), pa.int64())}), compression="brotli")
    _unsupported(tmp_path, pa.table({"ts": pa.array([dt.datetime(2020, 1, 1)] * n, pa.timestamp("ms"))}))


def _chunk_bytes(tmp_path, nulls=True, **kw):
    p = tmp_path / "c.parquet"
    pq.write_table(_table(n=600, nulls=nulls), p, data_page_size=512, **kw)
    raw = p.read_bytes()
    pf = pq.ParquetFile(p)
    return raw, pf


def _decode_all(raw, pf, path="bad.parquet"):
    """Read every column chunk of the first row group whole, then every fifth row by selection."""
    md, sch, sa = pf.metadata, pf.schema, pf.schema_arrow
    for j in range(md.num_columns):
        rg = md.row_group(0)
        name = md.schema.column(j).path
        chunk = PC.chunk_of(rg.column(j), sch.column(j), rg.num_rows)
        read_at = lambda size, off: raw[off:off + size]   # noqa: E731
        try:
            arr = PC.read_column_chunk(path, read_at, len(raw), chunk, sa.field(name).type)
        except PC.Unsupported:
            continue
        arr.validate()
        sel = np.arange(0, rg.num_rows, 5, dtype=np.int64)
        PC.read_column_chunk(path, read_at, len(raw), chunk, sa.field(name).type, selection=sel).validate()


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("compression", ["none", "zstd"])
@pytest.mark.parametrize("nulls", [True, False])
def test_damaged_chunks_raise_corrupt_file_error(tmp_path, impl, version, compression, nulls):
    # without nulls, dictionary pages are decoded by the one-pass kernels (dictionary_fixed, dictionary_byte_array)
    raw, pf = _chunk_bytes(tmp_path, nulls=nulls, data_page_version=version, compression=compression)
    _decode_all(raw, pf)   # the intact file decodes
    md = pf.metadata.row_group(0)
    starts = [md.column(j).dictionary_page_offset or md.column(j).data_page_offset for j in range(md.num_columns)]
    lo = min(starts)
    hi = max(s + md.column(j).total_compressed_size for j, s in enumerate(starts))
    rng = np.random.default_rng(7)
    n_bad = 0
    trials = 300 if impl.__name__.startswith("paimon_engine._kernels") else 40
    for trial in range(trials):
        b = bytearray(raw)
        kind = trial % 3
        at = int(rng.integers(lo, hi))
        if kind == 0:
            b[at] ^= 1 << int(rng.integers(0, 8))
        elif kind == 1:
            b[at] = int(rng.integers(0, 256))
        else:
            b[at:at + 4] = rng.integers(0, 256, 4).astype(np.uint8).tobytes()
        try:
            _decode_all(bytes(b), pf)
        except CorruptFileError as exc:
            n_bad += 1
            assert exc.path == "bad.parquet" and exc.offset is not None and lo <= exc.offset < hi, exc
    assert n_bad > trials // 10


def test_truncated_chunk_and_absurd_sizes(tmp_path, impl):
    raw, pf = _chunk_bytes(tmp_path, compression="zstd")
    md, sch, sa = pf.metadata, pf.schema, pf.schema_arrow
    c = md.row_group(0).column(1)
    chunk = PC.chunk_of(c, sch.column(1), md.row_group(0).num_rows)
    t = sa.field("i64").type
    for cut in (1, 10, chunk.size // 2, chunk.size - 1):
        with pytest.raises(CorruptFileError) as e:
            PC.read_column_chunk("f", lambda size, off: raw[off:off + size - cut], len(raw), chunk, t)
        assert e.value.offset == chunk.start
    short = PC.ColumnChunk(chunk.physical, chunk.codec, chunk.start, chunk.size - 5, chunk.num_values,
                           chunk.uncompressed, chunk.max_def, chunk.rows)
    with pytest.raises(CorruptFileError):
        PC.read_column_chunk("f", lambda size, off: raw[off:off + size], len(raw), short, t)
    outside = PC.ColumnChunk(chunk.physical, chunk.codec, len(raw) - 10, 1 << 40, chunk.num_values,
                             chunk.uncompressed, chunk.max_def, chunk.rows)
    with pytest.raises(CorruptFileError, match="outside the file"):
        PC.read_column_chunk("f", lambda size, off: raw[off:off + size], len(raw), outside, t)
    more_rows = PC.ColumnChunk(chunk.physical, chunk.codec, chunk.start, chunk.size, chunk.num_values + 1,
                               chunk.uncompressed, chunk.max_def, chunk.rows + 1)
    with pytest.raises(CorruptFileError, match="ends after"):
        PC.read_column_chunk("f", lambda size, off: raw[off:off + size], len(raw), more_rows, t)
    small = PC.ColumnChunk(chunk.physical, chunk.codec, chunk.start, chunk.size, chunk.num_values,
                           100, chunk.max_def, chunk.rows)
    with pytest.raises(CorruptFileError, match="decompressed bytes"):
        PC.read_column_chunk("f", lambda size, off: raw[off:off + size], len(raw), small, t)


# ---------------------------------------------------------------- the kernel functions, both implementations

K = implementations("parquet")


def _hybrid_rle(value, count, width):
    return _uvarint(count << 1) + int(value).to_bytes((width + 7) // 8, "little")


def _hybrid_packed(values, width):
    groups = (len(values) + 7) // 8
    word = 0
    for i, v in enumerate(values):
        word |= int(v) << (i * width)
    return _uvarint((groups << 1) | 1) + word.to_bytes(groups * width, "little")


def _uvarint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


@pytest.mark.parametrize("k", K)
@pytest.mark.parametrize("width", [1, 3, 8, 10, 17, 25, 26, 31, 32])
def test_dictionary_indices_runs(k, width):
    rng = np.random.default_rng(width)
    top = min((1 << width) - 1, 2**31 - 2)
    packed = rng.integers(0, top + 1, 48, dtype=np.int64)        # 6 groups of 8
    tail = rng.integers(0, top + 1, 13, dtype=np.int64)          # 2 groups, the last one padded
    data = bytes([width]) + _hybrid_rle(top, 5, width) + _hybrid_packed(packed, width) + \
        _hybrid_rle(1, 20, width) + _hybrid_packed(tail, width)
    want = np.concatenate([[top] * 5, packed, np.ones(20, np.int64), tail])
    out = np.full(len(want) + 2, -7, np.int32)
    dict_size = 2**31 - 1
    end = k.dictionary_indices(data, 0, len(data), len(want), dict_size, out, 2)
    assert end == len(data)
    assert out[:2].tolist() == [-7, -7] and out[2:].tolist() == want.tolist()
    # an index outside the dictionary, a short buffer, a bit width above 32, a short output
    assert k.dictionary_indices(data, 0, len(data), len(want), top, out, 0) == -3
    assert k.dictionary_indices(data, 0, len(data) - 1, len(want), dict_size, out, 0) == -1
    assert k.dictionary_indices(bytes([33]) + data[1:], 0, len(data), 3, dict_size, out, 0) == -5
    assert k.dictionary_indices(data, 0, len(data), len(out) + 1, dict_size, out, 0) == -4


@pytest.mark.parametrize("k", K)
@pytest.mark.parametrize("width", [0, 1, 3, 8, 10, 17, 25, 26, 31, 32])
def test_dictionary_indices_at(k, width):
    """The indices of chosen rows only, against the whole page's decode; the position returned is after the
    run holding the last row chosen (the runs after it are not read)."""
    rng = np.random.default_rng(100 + width)
    top = min((1 << width) - 1, 2**31 - 2)
    runs = [_hybrid_rle(top, 5, width), _hybrid_packed(rng.integers(0, top + 1, 48), width),
            _hybrid_rle(0, 20, width), _hybrid_packed(rng.integers(0, top + 1, 13), width)]
    data = bytes([width]) + b"".join(runs)
    n = 5 + 48 + 20 + 13
    whole = np.empty(n, np.int32)
    assert k.dictionary_indices(data, 0, len(data), n, 2**31 - 1, whole, 0) == len(data)
    ends = np.cumsum([1] + [len(r) for r in runs])       # the position after each run
    firsts = [0, 5, 53, 73]                               # the first row of each run
    choices = [np.arange(n), np.array([0]), np.array([4]), np.array([5, 6, 52]), np.array([n - 1]),
               np.array([3, 3, 60, 60, 61]), np.sort(rng.choice(n, 17, replace=False))]
    for rows in choices:
        rows = rows.astype(np.int32)
        out = np.full(len(rows) + 3, -7, np.int32)
        end = k.dictionary_indices_at(data, 0, len(data), n, 2**31 - 1, rows, out)
        assert end == ends[np.searchsorted(firsts, rows[-1], side="right")]
        assert out[:len(rows)].tolist() == whole[rows].tolist() and out[len(rows):].tolist() == [-7] * 3
    none = np.zeros(0, np.int32)
    assert k.dictionary_indices_at(data, 0, len(data), n, 2**31 - 1, none, none) == 0
    if width:
        # an index outside the dictionary fails when it is read, not otherwise
        assert k.dictionary_indices_at(data, 0, len(data), n, top, np.array([0], np.int32), out) == -3
        assert k.dictionary_indices_at(data, 0, len(data), n, top, np.array([60], np.int32), out) == ends[3]
    # rows past the page, rows out of order, a short output, a short buffer, a bit width above 32
    for rows in ([n], [n + 100], [10, 9], [-1]):
        assert k.dictionary_indices_at(data, 0, len(data), n, 2**31 - 1, np.array(rows, np.int32), out) == -4
    assert k.dictionary_indices_at(data, 0, len(data), n, 2**31 - 1, np.arange(3, dtype=np.int32),
                                   np.zeros(2, np.int32)) == -4
    if width:
        assert k.dictionary_indices_at(data, 0, len(data) - 1, n, 2**31 - 1, np.array([n - 1], np.int32),
                                       out) == -1
    assert k.dictionary_indices_at(data, 0, 0, n, 2**31 - 1, np.array([0], np.int32), out) == -1
    assert k.dictionary_indices_at(bytes([33]) + data[1:], 0, len(data), n, 2**31 - 1,
                                   np.array([0], np.int32), out) == -5


def _hybrid_stream(width, seed=0):
    """A dictionary-index stream of ``width`` bits (RLE and bit-packed runs, the last group padded) and its
    indices."""
    rng = np.random.default_rng(seed)
    top = min((1 << width) - 1, 2**31 - 2)
    packed = rng.integers(0, top + 1, 48, dtype=np.int64)
    tail = rng.integers(0, top + 1, 13, dtype=np.int64)
    data = bytes([width]) + _hybrid_rle(top, 5, width) + _hybrid_packed(packed, width) + \
        _hybrid_rle(1, 20, width) + _hybrid_packed(tail, width)
    return data, np.concatenate([[top] * 5, packed, np.ones(20, np.int64), tail])


@pytest.mark.parametrize("k", K)
@pytest.mark.parametrize("width", [1, 3, 8, 10, 17, 20])
@pytest.mark.parametrize("vwidth", [4, 8, 3])
def test_dictionary_fixed(k, width, vwidth):
    data, idx = _hybrid_stream(width)
    ndict = int(idx.max()) + 1
    dictionary = np.random.default_rng(1).integers(0, 256, ndict * vwidth, dtype=np.uint8)
    out = np.full((len(idx) + 2) * vwidth, 0xAB, np.uint8)
    assert k.dictionary_fixed(data, 0, len(data), len(idx), dictionary, vwidth, out, 2) == len(data)
    want = dictionary.reshape(-1, vwidth)[idx].ravel()
    assert (out[:2 * vwidth] == 0xAB).all() and out[2 * vwidth:].tolist() == want.tolist()
    # fewer values than the stream holds stop inside a run
    part = np.zeros(30 * vwidth, np.uint8)
    assert k.dictionary_fixed(data, 0, len(data), 30, dictionary, vwidth, part, 0) > 0
    assert part.tolist() == want[:30 * vwidth].tolist()
    # an index outside the dictionary, a short buffer, a bit width above 32, a short output, a bad width
    assert k.dictionary_fixed(data, 0, len(data), len(idx), dictionary[:-vwidth], vwidth, out, 0) == -3
    assert k.dictionary_fixed(data, 0, len(data) - 1, len(idx), dictionary, vwidth, out, 0) == -1
    assert k.dictionary_fixed(bytes([33]) + data[1:], 0, len(data), 3, dictionary, vwidth, out, 0) == -5
    assert k.dictionary_fixed(data, 0, len(data), len(idx), dictionary, vwidth, out, 3) == -4
    assert k.dictionary_fixed(data, 0, len(data), len(idx), dictionary, 0, out, 0) == -4


def _string_dictionary(ndict, seed=0):
    rng = np.random.default_rng(seed)
    values = [bytes(rng.integers(97, 123, int(rng.integers(0, 30)), dtype=np.uint8)) for _ in range(ndict)]
    offsets = np.zeros(ndict + 1, np.int32)
    offsets[1:] = np.cumsum([len(v) for v in values])
    return values, offsets, np.frombuffer(b"".join(values) or b"\0", np.uint8)


@pytest.mark.parametrize("k", K)
@pytest.mark.parametrize("width", [1, 3, 8, 10, 17])
def test_dictionary_byte_array(k, width):
    data, idx = _hybrid_stream(width)
    for ndict in (int(idx.max()) + 1, 200_000):       # smaller and larger than the page (two code paths)
        values, d_off, d_data = _string_dictionary(ndict) if ndict < 100 else _string_dictionary(ndict, 3)
        want = [values[x] for x in idx]
        offs = np.zeros(len(idx) + 3, np.int32)
        offs[2] = 5                                     # the values follow 5 bytes already written
        room = 5 + sum(len(v) for v in want)
        out = np.zeros(room, np.uint8)
        assert k.dictionary_byte_array(data, 0, len(data), len(idx), d_off, d_data, offs, 2, out) == len(data)
        assert offs[3:].tolist() == (5 + np.cumsum([len(v) for v in want])).tolist()
        assert bytes(out[5:]) == b"".join(want)
        # an output one byte short, an index outside the dictionary, a truncated stream
        assert k.dictionary_byte_array(data, 0, len(data), len(idx), d_off, d_data, offs, 2, out[:-1]) == -4
        assert k.dictionary_byte_array(data, 0, len(data), len(idx), d_off[:int(idx.max()) + 1], d_data, offs,
                                       2, out) == -3
        assert k.dictionary_byte_array(data, 0, len(data) - 1, len(idx), d_off, d_data, offs, 2, out) == -1
    # offsets that fall or leave the data are refused, not followed
    values, d_off, d_data = _string_dictionary(int(idx.max()) + 1)
    for bad in (np.array(d_off[::-1]), d_off + np.int32(len(d_data) + 1), d_off - np.int32(len(d_data) + 1)):
        offs = np.zeros(len(idx) + 1, np.int32)
        out = np.zeros(64 * len(idx), np.uint8)
        assert k.dictionary_byte_array(data, 0, len(data), len(idx), bad, d_data, offs, 0, out) == -3


def test_one_pass_kernels_match_the_twin():
    """The compiled one-pass kernels and their twins give the same status and output for damaged streams and
    dictionaries (bytes changed, cut, indices past the dictionary)."""
    impls = [p.values[0] for p in K]
    if len(impls) < 2:
        pytest.skip("pure-Python build: only the twin")
    cy, py = impls
    rng = np.random.default_rng(11)
    for trial in range(400):
        width = int(rng.integers(1, 21))
        data, idx = _hybrid_stream(width, seed=trial)
        b = bytearray(data)
        for _ in range(int(rng.integers(1, 4))):
            b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
        end = len(b) - int(rng.integers(0, 3))
        n = len(idx) + int(rng.integers(-5, 3))
        ndict = max(int(idx.max()) + 1 - int(rng.integers(0, 2)), 1)
        vw = (4, 8, 2)[trial % 3]
        dic = rng.integers(0, 256, ndict * vw, dtype=np.uint8)
        outs = [np.zeros(max(n, 0) * vw + 8, np.uint8) for _ in impls]
        got = [k.dictionary_fixed(bytes(b), 0, end, n, dic, vw, o, 0) for k, o in zip(impls, outs)]
        assert got[0] == got[1], (trial, got)
        if got[0] >= 0:
            assert outs[0].tolist() == outs[1].tolist()
        # (a string dictionary of at most 4096 values: wider indices test the out-of-range status)
        values, d_off, d_data = _string_dictionary(min(ndict, 4096), trial)
        if trial % 5 == 0:
            d_off = d_off.copy()
            d_off[int(rng.integers(0, len(d_off)))] = int(rng.integers(-3, len(d_data) + 3))
        room = int(rng.integers(0, 40 * max(n, 1)))
        offs = [np.zeros(max(n, 0) + 1, np.int32) for _ in impls]
        outs = [np.zeros(room, np.uint8) for _ in impls]
        got = [k.dictionary_byte_array(bytes(b), 0, end, n, d_off, d_data, o, 0, x)
               for k, o, x in zip(impls, offs, outs)]
        assert got[0] == got[1], (trial, got)
        if got[0] >= 0:
            assert offs[0].tolist() == offs[1].tolist()
            assert bytes(outs[0][:offs[0][-1]]) == bytes(outs[1][:offs[1][-1]])


@pytest.mark.parametrize("k", K)
def test_levels_validity(k):
    levels = [1] * 11 + [0] * 3 + [1, 0, 1, 1, 0, 0, 1, 0, 1]
    data = _hybrid_rle(1, 11, 1) + _hybrid_rle(0, 3, 1) + _hybrid_packed(levels[14:], 1)
    v = np.full(6, 0xAA, np.uint8)
    got = k.levels_validity(data, 0, len(data), 1, 1, len(levels), v, 5)
    assert got == sum(levels)
    bits = np.unpackbits(v, bitorder="little")
    assert bits[5:5 + len(levels)].tolist() == levels
    assert bits[:5].tolist() == [0, 1, 0, 1, 0]                  # bits before the offset are left alone
    assert k.levels_validity(_hybrid_rle(2, 4, 2), 0, 2, 2, 1, 4, v, 0) == -5   # a level above the maximum
    assert k.levels_validity(data, 0, 3, 1, 1, len(levels), v, 0) == -1
    assert k.levels_validity(data, 0, len(data), 1, 1, 100, v, 0) == -4


@pytest.mark.parametrize("k", K)
def test_page_header_fields_and_damage(k, tmp_path):
    raw, pf = _chunk_bytes(tmp_path, data_page_version="2.0", compression="zstd")
    c = pf.metadata.row_group(0).column(0)
    out = np.empty(12, np.int64)
    end = k.page_header(raw, c.dictionary_page_offset, len(raw), out)
    assert end > c.dictionary_page_offset and out[0] == PC.DICTIONARY_PAGE and out[3] > 0
    pos = end + int(out[2])
    end = k.page_header(raw, pos, len(raw), out)
    assert out[0] == PC.DATA_PAGE_V2 and out[3] > 0 and out[8] == out[3] and out[11] == 1
    # every cut of the header is truncated; every single-byte change gives a status or a header, never more
    for cut in range(pos, end):
        assert k.page_header(raw, pos, cut, out) < 0
    twin = implementations("parquet")[-1].values[0]
    b = bytearray(raw[pos:end + 64])
    for i in range(end - pos):
        for v in (0, 0x0F, 0x15, 0x19, 0x1C, 0xFF):
            bb = bytearray(b)
            bb[i] = v
            a, want = np.empty(12, np.int64), np.empty(12, np.int64)
            assert k.page_header(bytes(bb), 0, len(bb), a) == twin.page_header(bytes(bb), 0, len(bb), want)
            assert a.tolist() == want.tolist()
    # nesting deeper than 64 structs is refused, not followed
    deep = b"\x1c" * 200 + b"\x00" * 200
    assert k.page_header(deep, 0, len(deep), out) == -5


@pytest.mark.parametrize("k", K)
def test_value_kernels(k):
    d = np.arange(5, dtype=np.int64).view(np.uint8) * 1
    idx = np.array([4, 0, 3, 3], np.int32)
    out = np.zeros(6 * 8, np.uint8)
    assert k.gather_fixed(d, 8, idx, 0, 4, out, 2) == 4
    assert out.view(np.int64).tolist() == [0, 0, 4, 0, 3, 3]
    assert k.gather_fixed(d, 8, np.array([5], np.int32), 0, 1, out, 0) == -3
    assert k.gather_fixed(d, 8, idx, 0, 4, out, 3) == -4
    valid = np.array([0b1101], np.uint8)
    dense = np.array([7, 8, 9], np.int32).view(np.uint8)
    o = np.full(16, 0xFF, np.uint8)
    assert k.expand_fixed(dense, 4, valid, 0, 4, o, 0) == 3
    assert o.view(np.int32).tolist() == [7, 0, 8, 9]
    assert k.expand_fixed(dense[:8], 4, valid, 0, 4, o, 0) == -4
    # PLAIN byte arrays with a null, then dictionary strings after them
    page = b"".join(len(s).to_bytes(4, "little") + s for s in (b"ab", b"", b"xyz"))
    offs = np.zeros(8, np.int32)
    data = np.zeros(32, np.uint8)
    assert k.plain_byte_array(page, 0, len(page), 4, np.array([0b1011], np.uint8), 0, offs, 0, data) == len(page)
    assert offs[:5].tolist() == [0, 2, 2, 2, 5] and bytes(data[:5]) == b"abxyz"
    d_off = np.array([0, 1, 3], np.int32)
    d_data = np.frombuffer(b"pqr", np.uint8)
    assert k.dictionary_bytes(d_off, np.array([1, 0, 1], np.int32), 0, 3) == 5
    assert k.gather_byte_array(d_off, d_data, np.array([1, 0], np.int32), 0, 3, np.array([0b101], np.uint8), 0,
                               offs, 4, data) == 2
    assert offs[:8].tolist() == [0, 2, 2, 2, 5, 7, 7, 8] and bytes(data[:8]) == b"abxyzqrp"
    assert k.gather_byte_array(d_off, d_data, np.array([2], np.int32), 0, 1, np.zeros(0, np.uint8), 0, offs, 0,
                               data) == -3
    assert k.plain_byte_array(page, 0, len(page) - 1, 3, np.zeros(0, np.uint8), 0, offs, 0, data) == -1
    assert k.plain_byte_array(page, 0, len(page), 3, np.zeros(0, np.uint8), 0, offs, 0, data[:3]) == -4


@pytest.mark.parametrize("window, peek", [(64, 8), (1, 1), (4096, 3)])
def test_small_windows(tmp_path, monkeypatch, window, peek):
    """Pages read through windows smaller than a page and peeks shorter than a header: the same values, and the
    header read grows until it fits."""
    monkeypatch.setattr(PC, "WINDOW", window)
    monkeypatch.setattr(PC, "_HEADER_PEEK", peek)
    p = tmp_path / "t.parquet"
    pq.write_table(_table(), p, data_page_size=2048, row_group_size=1100, compression="zstd")
    _check(p)


def _count_decompressions(monkeypatch):
    """A list the decoder appends each decompressed page's size to."""
    pages = []
    real, real_into = PC._Decoder.decompress, PC._Decoder.decompress_into

    def counting(self, body, size):
        pages.append(size)
        return real(self, body, size)

    def counting_into(self, body, dst):
        pages.append(len(dst))
        return real_into(self, body, dst)
    monkeypatch.setattr(PC._Decoder, "decompress", counting)
    monkeypatch.setattr(PC._Decoder, "decompress_into", counting_into)
    return pages


def _first_group_chunks(pf):
    """(name, column chunk, Arrow type) of every column of the first row group of the ``pq.ParquetFile``."""
    md, sch, sa = pf.metadata, pf.schema, pf.schema_arrow
    for j in range(md.num_columns):
        name = md.schema.column(j).path
        yield name, PC.chunk_of(md.row_group(0).column(j), sch.column(j), md.row_group(0).num_rows), \
            sa.field(name).type


def _whole_columns(p, f, dictionary, pages):
    """(name, chunk, Arrow type, read as dictionary indices, the whole column, the pages its read decompressed)
    for every column of the first row group of the file at ``p`` (``f`` open on it); string columns of a
    dictionary-encoded file also as indices, except where the dictionary falls back to PLAIN pages (a column
    read as indices then raises Unsupported). ``pages``: the list ``_count_decompressions`` fills."""
    for name, chunk, plain in _first_group_chunks(pq.ParquetFile(p)):
        for as_dict in ((False, True) if plain == pa.string() and dictionary else (False,)):
            t = pa.dictionary(pa.int32(), plain) if as_dict else plain
            del pages[:]
            try:
                whole = PC.read_column_chunk(str(p), f.read_at, f.size(), chunk, t)
            except PC.Unsupported:          # a PLAIN page in a column read as indices (dictionary fallback)
                assert as_dict
                continue
            yield name, chunk, t, as_dict, whole, len(pages)


def _read_modes_match_pyarrow(p, keep):
    """Every column of the first row group of the file at ``p``, read with ``keep`` flags, with the selection of
    the rows ``keep`` drops, and page by page (333 rows a batch), equals pyarrow's read of it."""
    f = pa.OSFile(str(p))
    want_all = pq.read_table(p)
    sel = np.flatnonzero(~keep)
    for name, chunk, t in _first_group_chunks(pq.ParquetFile(p)):
        want = want_all.column(name).chunk(0)
        assert PC.read_column_chunk(str(p), f.read_at, f.size(), chunk, t, keep=keep).equals(
            want.filter(pa.array(keep))), name
        assert PC.read_column_chunk(str(p), f.read_at, f.size(), chunk, t, selection=sel).equals(
            want.take(pa.array(sel))), name
        assert pa.concat_arrays(list(PC.iter_column_chunk(str(p), f.read_at, f.size(), chunk, t, 333))).equals(
            want), name


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", [True, False])
@pytest.mark.parametrize("nulls", [True, False])
def test_selected_rows(tmp_path, impl, version, dictionary, nulls, monkeypatch):
    """Only the selected rows, equal to taking them from the whole column; pages without a selected row are not
    decompressed. Without nulls, the rows are gathered from the page's values or dictionary indices."""
    p = tmp_path / "t.parquet"
    pq.write_table(_table(nulls=nulls), p, data_page_version=version, use_dictionary=dictionary,
                   data_page_size=1024, write_batch_size=128, compression="zstd", dictionary_pagesize_limit=4096)
    gathered = []
    real = PC._Decoder.gathered

    def counting(self, *a):
        got = real(self, *a)
        gathered.append(got is not None)
        return got
    monkeypatch.setattr(PC._Decoder, "gathered", counting)
    f = pa.OSFile(str(p))
    rows = pq.ParquetFile(p).metadata.num_rows
    rng = np.random.default_rng(1)
    pages = _count_decompressions(monkeypatch)
    skipped = set()
    selections = [np.array([], np.int64), np.arange(rows), np.array([0, rows - 1]), np.arange(100, 140),
                  np.sort(rng.choice(rows, 37, replace=False))]
    for name, chunk, t, as_dict, whole, all_pages in _whole_columns(p, f, dictionary, pages):
        for sel in selections:
            del pages[:]
            got = PC.read_column_chunk(str(p), f.read_at, f.size(), chunk, t, selection=sel.astype(np.int64))
            got.validate(full=True)
            assert got.equals(whole.take(pa.array(sel, pa.int64()))), (name, as_dict, sel[:5])
            if len(sel) == 40 and all_pages > 4:   # rows 100..139 lie on a few pages of many
                assert len(pages) < all_pages / 2
                skipped.add(name)
    assert "i64" in skipped
    assert any(gathered) != nulls     # a page with nulls is decoded whole
    with pytest.raises(ValueError):
        PC.read_column_chunk(str(p), f.read_at, f.size(), chunk, t, selection=np.array([rows]))


def test_row_counts_beyond_the_chunk_bytes_go_to_pyarrow(tmp_path, impl):
    """A footer's row count far beyond what its chunk's bytes plausibly hold is not used to size a large output:
    the column is left to pyarrow. A constant column run-length encoded into a few bytes, with a moderate
    output, is read here."""
    n = 3_000_000
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"c": pa.array(np.zeros(n, np.int64))}), p, row_group_size=n)
    pf = pq.ParquetFile(p)
    rg = pf.metadata.row_group(0)
    chunk = PC.chunk_of(rg.column(0), pf.schema.column(0), rg.num_rows)
    assert chunk.size * PC._ROWS_PER_BYTE + (1 << 20) < n
    f = pa.OSFile(str(p))
    assert PC.read_column_chunk(str(p), f.read_at, f.size(), chunk, pa.int64()).equals(
        pq.read_table(p).column("c").combine_chunks())     # 24 MB of output: read here
    small = PC.ColumnChunk(chunk.physical, chunk.codec, chunk.start, chunk.size, 1 << 36, chunk.uncompressed,
                           chunk.max_def, 1 << 36)
    with pytest.raises(PC.Unsupported):                     # 512 GiB of output for a chunk of a few KB
        PC.read_column_chunk(str(p), f.read_at, f.size(), small, pa.int64())


# ---------------------------------------------------------------- page mode (batches)

def _iter_all(path, batch_size, as_dictionary=()):
    """{column: [arrays]} of every row group, from iter_column_chunk."""
    pf = pq.ParquetFile(path)
    md, sch, sa = pf.metadata, pf.schema, pf.schema_arrow
    f = pa.OSFile(str(path))
    out = {}
    for j in range(md.num_columns):
        name = md.schema.column(j).path
        t = sa.field(name).type
        if name in as_dictionary:
            t = pa.dictionary(pa.int32(), t)
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            chunk = PC.chunk_of(rg.column(j), sch.column(j), rg.num_rows)
            out.setdefault(name, []).append(list(PC.iter_column_chunk(str(path), f.read_at, f.size(), chunk, t,
                                                                      batch_size)))
    return out


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", [True, False])
@pytest.mark.parametrize("batch_size", [1, 7, 1000, 2999, 5000])
def test_page_mode_batches_equal_the_whole_read(tmp_path, impl, version, dictionary, batch_size):
    p = tmp_path / "t.parquet"
    t = _table()
    pq.write_table(t, p, data_page_version=version, use_dictionary=dictionary, data_page_size=2048,
                   row_group_size=1200)
    whole = _read(p)
    got = _iter_all(p, batch_size)
    for name, groups in got.items():
        for g, arrays in enumerate(groups):
            rows = pq.ParquetFile(p).metadata.row_group(g).num_rows
            # every batch has batch_size rows but the row group's last
            assert [len(a) for a in arrays] == [batch_size] * (rows // batch_size) + \
                ([rows % batch_size] if rows % batch_size else [])
            for a in arrays:
                a.validate(full=True)
        col = pa.chunked_array([a for arrays in groups for a in arrays], type=whole[name].type)
        assert col.equals(whole[name]), name


def test_page_mode_dictionary_indices_and_damage(tmp_path, impl):
    p = tmp_path / "t.parquet"
    pq.write_table(_table(), p, data_page_size=512)
    got = _iter_all(p, 333, as_dictionary=("s",))["s"][0]
    assert all(pa.types.is_dictionary(a.type) for a in got)
    assert pa.chunked_array(got).cast(pa.string()).equals(pq.read_table(p).column("s"))
    # a PLAIN page in a column read as dictionary indices: Unsupported, after the batches before it
    q = tmp_path / "fallback.parquet"
    pq.write_table(_table(), q, data_page_size=1024, dictionary_pagesize_limit=512)
    qf = pq.ParquetFile(q)
    c = qf.metadata.row_group(0).column(qf.schema_arrow.get_field_index("s"))
    f = pa.OSFile(str(q))
    given = []
    with pytest.raises(PC.Unsupported):
        for a in PC.iter_column_chunk(str(q), f.read_at, f.size(), PC.chunk_of(c, qf.schema.column(9), N),
                                      pa.dictionary(pa.int32(), pa.string()), 100):
            given.append(a)
    assert given and all(len(a) == 100 for a in given)
    # damaged chunks raise CorruptFileError in page mode too
    raw, pf = _chunk_bytes(tmp_path, nulls=False)
    md = pf.metadata.row_group(0)
    rng = np.random.default_rng(3)
    bad = 0
    for trial in range(60):
        b = bytearray(raw)
        j = trial % md.num_columns
        c = md.column(j)
        lo = c.dictionary_page_offset or c.data_page_offset
        at = int(rng.integers(lo, lo + c.total_compressed_size))
        b[at] ^= 1 << int(rng.integers(0, 8))
        chunk = PC.chunk_of(c, pf.schema.column(j), md.num_rows)
        try:
            for a in PC.iter_column_chunk("bad.parquet", lambda size, off: bytes(b[off:off + size]), len(b), chunk,
                                          pf.schema_arrow.field(j).type, 64):
                a.validate(full=True)
        except CorruptFileError as exc:
            bad += 1
            assert exc.path == "bad.parquet" and lo <= exc.offset <= lo + c.total_compressed_size
        except PC.Unsupported:
            pass
    assert bad > 6
    with pytest.raises(ValueError):
        list(PC.iter_column_chunk("f", None, 0, PC.chunk_of(md.column(0), pf.schema.column(0), 1), pa.int32(), 0))


@pytest.mark.parametrize("batch_size", [64, 1000])
def test_file_batches_mix_decoders_and_fall_back_mid_column(tmp_path, batch_size):
    """_ParquetFile.iter_batches: flat columns from the page decoder, nested ones from pyarrow, one batch of the
    same rows of every column; a column that turns out to need pyarrow midway (a PLAIN page in a column read as
    dictionary indices) goes on through pyarrow from the next row."""
    from paimon_engine.io import FileIO
    from paimon_engine.scan.reader import _ParquetFile
    t = _table()
    t = t.append_column("nested", pa.StructArray.from_arrays([t.column("i32").combine_chunks()], ["x"]))
    p = tmp_path / "t.parquet"
    pq.write_table(t, p, data_page_size=1024, dictionary_pagesize_limit=512, row_group_size=1300)
    pf = _ParquetFile(FileIO(), str(p))
    names = ["i64", "s", "nested", "u", "f64"]
    asked = []
    real = pf._pyarrow_batches

    def spy(cols, *a):
        asked.append(tuple(cols))
        return real(cols, *a)
    pf._pyarrow_batches = spy
    batches = list(pf.iter_batches(names, batch_size, dict_names=frozenset({"s"})))
    assert ("nested",) in asked and ("s",) in asked and all(x in (("nested",), ("s",)) for x in asked)
    sizes = [b.num_rows for b in batches]
    assert sum(sizes) == N and max(sizes) == batch_size
    got = pa.Table.from_batches(batches)
    want = pq.read_table(p, columns=names)
    assert got.column("s").cast(pa.string()).equals(want.column("s"))
    for name in ("i64", "nested", "u", "f64"):
        assert got.column(name).equals(want.column(name)), name


def _keep_patterns(rows, pages_of=None):
    rng = np.random.default_rng(5)
    pats = [np.ones(rows, bool), np.zeros(rows, bool), rng.random(rows) > 0.05, rng.random(rows) > 0.5,
            np.arange(rows) % 2 == 0]
    cut = np.ones(rows, bool)
    cut[rows // 3:2 * rows // 3] = False           # whole pages without a kept row
    pats.append(cut)
    return pats


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", [True, False])
@pytest.mark.parametrize("nulls", [True, False])
def test_kept_rows(tmp_path, impl, version, dictionary, nulls, monkeypatch):
    """Keep flags: the kept rows of every column equal the whole column filtered by the flags, for dictionary
    and PLAIN pages, with and without nulls, read as values or as dictionary indices; pages without a kept row
    are not decompressed."""
    p = tmp_path / "t.parquet"
    pq.write_table(_table(nulls=nulls), p, data_page_version=version, use_dictionary=dictionary,
                   data_page_size=1024, write_batch_size=128, compression="zstd", dictionary_pagesize_limit=4096)
    f = pa.OSFile(str(p))
    rows = pq.ParquetFile(p).metadata.num_rows
    pages = _count_decompressions(monkeypatch)
    fewer = set()
    for name, chunk, t, as_dict, whole, all_pages in _whole_columns(p, f, dictionary, pages):
        for keep in _keep_patterns(rows):
            del pages[:]
            for flags in (keep, keep.astype(np.uint8)):
                got = PC.read_column_chunk(str(p), f.read_at, f.size(), chunk, t, keep=flags)
                got.validate(full=True)
                assert got.equals(whole.filter(pa.array(keep))), (name, as_dict)
            if not keep[rows // 3:2 * rows // 3].any() and len(pages) < 2 * all_pages:
                fewer.add(name)
            if not keep.any():              # at most the dictionary page, once per read
                assert len(pages) <= 2
    assert "i64" in fewer
    with pytest.raises(ValueError):
        PC.read_column_chunk(str(p), f.read_at, f.size(), chunk, t, keep=np.ones(rows + 1, bool))


def test_kept_rows_of_required_columns_and_damage(tmp_path, impl):
    """Keep flags on columns without definition levels; a damaged page read with keep flags raises
    CorruptFileError like a whole read."""
    t = _table(nulls=False)
    req = tmp_path / "req.parquet"
    pq.write_table(t.cast(pa.schema([fl.with_nullable(False) for fl in t.schema])), req, data_page_size=2048)
    pf = pq.ParquetFile(req)
    f = pa.OSFile(str(req))
    keep = np.random.default_rng(2).random(pf.metadata.num_rows) > 0.1
    for name, chunk, typ in _first_group_chunks(pf):
        got = PC.read_column_chunk(str(req), f.read_at, f.size(), chunk, typ, keep=keep)
        assert got.equals(t.column(name).combine_chunks().filter(pa.array(keep))), name
    raw, pf = _chunk_bytes(tmp_path, nulls=True)
    md = pf.metadata
    chunks = list(_first_group_chunks(pf))
    rng = np.random.default_rng(4)
    for trial in range(60):
        bad = bytearray(raw)
        for _ in range(3):
            bad[int(rng.integers(4, len(bad) - 8))] ^= 1 << int(rng.integers(0, 8))
        src = pa.BufferReader(bytes(bad))
        for _, chunk, typ in chunks:
            try:
                got = PC.read_column_chunk("bad.parquet", src.read_at, len(bad), chunk, typ,
                                           keep=keep[:md.num_rows] if len(keep) >= md.num_rows else
                                           np.ones(md.num_rows, bool))
                got.validate()
            except CorruptFileError as exc:
                assert exc.path == "bad.parquet" and exc.offset is not None
            except PC.Unsupported:
                pass


def test_keep_fixed_sparse_and_dense_drops():
    """keep_fixed moves 8-byte values eight rows at a time when at most one row in 48 is dropped and one row at a
    time otherwise: both give the kept rows in order, on both sides of that threshold, with a row count that is not
    a multiple of eight, drops at the ends, and nothing written before the output position."""
    rng = np.random.default_rng(29)
    n = 1003
    src = rng.integers(0, 256, n * 8, dtype=np.uint8)
    for k in [p.values[0] for p in K]:
        # 20 of 1003 dropped is the most the eight-row path takes, 21 the fewest the other one does
        for drops in (0, 1, 2, 3, 20, 21, 60, 500, n):
            keep = np.ones(n, np.uint8)
            if 2 <= drops < n:
                keep[[0, n - 1]] = 0
                keep[1 + rng.choice(n - 2, drops - 2, replace=False)] = 0
            else:
                keep[rng.choice(n, drops, replace=False)] = 0
            kept = int(keep.sum())
            assert n - kept == drops
            out = np.full((kept + 4) * 8, 0xEE, np.uint8)
            assert k.keep_fixed(src, 8, n, keep, out, 3) == kept, drops
            assert out[:24].tolist() == [0xEE] * 24
            want = src.reshape(n, 8)[keep.astype(bool)].ravel()
            assert out[24:24 + kept * 8].tolist() == want.tolist(), drops


@pytest.fixture(params=["vector", "scalar"])
def vector_state(request):
    """The compiled kernel's AVX-512 paths on ("vector", where the processor has them) or off ("scalar"); the
    setting before is put back afterwards."""
    impls = [p.values[0] for p in K]
    before = [k.vector_paths() for k in impls]
    for k in impls:
        k.vector_paths(request.param == "vector")
    yield request.param
    for k, b in zip(impls, before):
        k.vector_paths(b)


def test_the_vector_path_is_live_where_the_processor_has_it():
    """The compiled kernel takes its AVX-512 paths exactly where the processor has AVX-512 F, BW and VL."""
    check_vector_paths_live([p.values[0] for p in K])


def test_the_vector_unpack_is_live_where_the_processor_has_it(vector_state):
    """Indices are unpacked 16 at a time exactly where the vector paths are on and the processor has AVX-512
    VBMI too; never by the twin."""
    from tests.kernels.impls import AVX512, avx512_expected
    impls = [p.values[0] for p in K]
    if len(impls) < 2:
        pytest.skip("pure-Python build: only the twin")
    want = avx512_expected(AVX512 | {"avx512vbmi"})
    if want is None:
        pytest.skip("no /proc/cpuinfo to compare with")
    assert impls[0].vector_unpack() is (want and vector_state == "vector")
    assert impls[1].vector_unpack() is False


@pytest.mark.parametrize("width", list(range(1, 33)))
def test_long_bit_packed_runs_on_the_vector_and_scalar_paths(vector_state, width):
    """Long bit-packed runs (16 indices a group on the vector path, up to 25 bits) decode the same on both paths
    and in the twin: indices, and 4-, 8- and 3-byte dictionary values, of every row or of the rows flagged (keep
    mode, from none to all dropped); a run cut short by the page's row count;
    runs whose last group or load ends at the run's end; an index outside the dictionary at the start, middle
    or end of a group, or in the scalar tail, fails with -3 however the run is read."""
    rng = np.random.default_rng(width)
    top = min((1 << width) - 1, 4999)
    for count in (8, 64, 128, 504, 1000, 1024, 4096 + 8):
        vals = rng.integers(0, top + 1, count)
        vals[rng.integers(0, count)] = top              # the largest index appears
        data = bytes([width]) + _hybrid_packed(vals, width) + _hybrid_rle(top, 3, width)
        n = count + 3
        want = np.concatenate([vals, [top] * 3])
        for k in [p.values[0] for p in K]:
            # a dictionary of exactly the indices' range, and one larger than the bit width can address (an
            # index's bits must not take in its neighbour's)
            for ndict in (top + 1, top + 1 + 3000):
                for size in (ndict, 2**31 - 1):
                    out = np.full(n + 1, -9, np.int32)
                    assert k.dictionary_indices(data, 0, len(data), n, size, out, 1) == len(data)
                    assert out[0] == -9 and out[1:].tolist() == want.tolist(), (k, count, size)
                for vwidth in (4, 8, 3):
                    dictionary = rng.integers(0, 256, ndict * vwidth, dtype=np.uint8)
                    values = dictionary.reshape(-1, vwidth)[want]
                    got = np.full((n + 1) * vwidth, 0xCD, np.uint8)
                    assert k.dictionary_fixed(data, 0, len(data), n, dictionary, vwidth, got, 1) == len(data)
                    assert (got[:vwidth] == 0xCD).all()
                    assert got[vwidth:].tolist() == values.ravel().tolist(), (k, count, ndict, vwidth)
                    # keep flags: only the kept rows' values, one after another, nothing written past the room for
                    # the kept rows and one value more (any non-zero flag keeps)
                    for drop in (0.0, 0.05, 0.3, 0.5, 0.95, 1.0):
                        keep = (rng.random(n) >= drop).astype(np.uint8) * rng.integers(1, 256, n, dtype=np.uint8)
                        kept = int(np.count_nonzero(keep))
                        got = np.full((1 + kept + 1 + 20) * vwidth, 0xCD, np.uint8)
                        room = got[:(1 + kept + 1) * vwidth]
                        assert k.dictionary_fixed(data, 0, len(data), n, dictionary, vwidth, room, 1, keep) == \
                            len(data)
                        assert (got[:vwidth] == 0xCD).all() and (got[(kept + 2) * vwidth:] == 0xCD).all()
                        assert got[vwidth:(kept + 1) * vwidth].tolist() == values[keep != 0].ravel().tolist(), \
                            (k, count, ndict, drop, vwidth)
            ndict = top + 1
            # fewer rows than the run holds: the run's first values only, nothing past them written
            part = count - 17 if count > 17 else count - 1
            out = np.full(count + 1, -9, np.int32)
            assert k.dictionary_indices(data, 0, len(data), part, ndict, out, 0) > 0
            assert out[:part].tolist() == vals[:part].tolist() and (out[part:] == -9).all()
            d8 = rng.integers(0, 256, ndict * 8, dtype=np.uint8)
            got = np.full((count + 1) * 8, 0xCD, np.uint8)
            assert k.dictionary_fixed(data, 0, len(data), part, d8, 8, got, 0) > 0
            assert got[:part * 8].tolist() == d8.reshape(-1, 8)[vals[:part]].ravel().tolist()
            assert (got[part * 8:] == 0xCD).all()
            # one index outside the dictionary, wherever it is
            for at in sorted({0, 15, 16, 17, count // 2, count - 1} & set(range(count))):
                bad_vals = vals.copy()
                bad_vals[bad_vals == top] = top - 1
                bad_vals[at] = top                      # the dictionary below holds indices < top only
                bad = bytes([width]) + _hybrid_packed(bad_vals, width)
                out = np.zeros(count, np.int32)
                assert k.dictionary_indices(bad, 0, len(bad), count, top, out, 0) == -3, (k, count, at)
                d4 = np.zeros(top * 4, np.uint8)
                assert k.dictionary_fixed(bad, 0, len(bad), count, d4, 4, np.zeros(count * 4, np.uint8), 0) \
                    == -3, (k, count, at)
                d8 = np.zeros(top * 8, np.uint8)
                assert k.dictionary_fixed(bad, 0, len(bad), count, d8, 8, np.zeros(count * 8, np.uint8), 0) \
                    == -3, (k, count, at)
                flags = np.ones(count, np.uint8)
                flags[at] = 0                           # a dropped row's index is checked all the same
                assert k.dictionary_fixed(bad, 0, len(bad), count, d4, 4, np.zeros(count * 4, np.uint8), 0,
                                          flags) == -3, (k, count, at)
                # the same index read with a dictionary that holds it passes
                assert k.dictionary_indices(bad, 0, len(bad), count, top + 1, out, 0) == len(bad)
                assert out.tolist() == bad_vals.tolist()


@pytest.mark.parametrize("width", list(range(1, 33)))
def test_long_bit_packed_runs_of_strings_on_the_vector_and_scalar_paths(vector_state, width):
    """dictionary_byte_array over long bit-packed runs (on the vector path, with a dictionary checked once for the
    page, indices up to 25 bits are unpacked 16 at a time, 256 a batch, and their values then moved) writes the same
    offsets and bytes on both paths and in the twin: values of 0 to 23 bytes (16-byte moves and longer copies),
    dictionaries smaller and larger than the page, an output with room to spare (the once-checked path) and one
    of exactly the values' size (each value checked), runs cut short by the page's row count; an index outside
    the dictionary at the start, middle or end of a group or a batch, or in the scalar tail, fails with -3."""
    rng = np.random.default_rng(1000 + width)
    top = min((1 << width) - 1, 4999)
    impls = [p.values[0] for p in K]

    def kernels(count):
        # the compiled kernel on both paths; the twin (the last, and the only one of a pure-Python build) once,
        # on runs it reads in reasonable time
        twin = impls[-1] if (vector_state == "scalar" or len(impls) == 1) and count <= 1024 else None
        return [k for k in impls[:-1]] + ([twin] if twin is not None else [])

    def dictionary(ndict):
        lens = rng.integers(0, 24, ndict)
        d_off = np.zeros(ndict + 1, np.int32)
        d_off[1:] = np.cumsum(lens)
        return d_off, rng.integers(0, 256, int(d_off[-1]) + 16, dtype=np.uint8)

    def expected(d_off, d_data, want):
        lens = (d_off[1:] - d_off[:-1])[want]
        ends = np.cumsum(lens)
        at = np.repeat(d_off[want], lens) + np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - lens, lens)
        return ends, d_data[at]

    for count in (8, 64, 504, 1024, 6000 + 8):
        vals = rng.integers(0, top + 1, count)
        vals[rng.integers(0, count)] = top              # the largest index appears
        data = bytes([width]) + _hybrid_packed(vals, width) + _hybrid_rle(top, 3, width)
        for n in (count + 3, count - 9 if count > 9 else count - 1):
            want = np.concatenate([vals, [top] * 3])[:n]
            for ndict in (top + 1, top + 1 + 3000):
                d_off, d_data = dictionary(ndict)
                ends, values = expected(d_off, d_data, want)
                total = int(ends[-1])
                for room in (7 + total, 7 + 24 * n + 64):
                    for k in kernels(count):
                        offs = np.full(n + 3, -1, np.int32)
                        offs[1] = 7                     # the values follow 7 bytes already written
                        out = np.full(room, 0xCD, np.uint8)
                        rc = k.dictionary_byte_array(data, 0, len(data), n, d_off, d_data, offs, 1, out)
                        assert rc > 0, (k, count, n, ndict, room, rc)
                        assert offs[0] == -1 and offs[2:n + 2].tolist() == (7 + ends).tolist(), (k, count, ndict)
                        assert offs[n + 2] == -1
                        assert (out[:7] == 0xCD).all() and out[7:7 + total].tolist() == values.tolist()
                        # only the rows flagged (none, some, nearly all), as many values after the 7 bytes
                        for rate in (0.0, 0.3, 0.97):
                            keep = (rng.random(n) < rate).astype(np.uint8) * rng.integers(1, 256, n, dtype=np.uint8)
                            kept = np.flatnonzero(keep)
                            kends, kvalues = expected(d_off, d_data, want[kept]) if len(kept) else ([], [])
                            koffs = np.full(len(kept) + 3, -1, np.int32)
                            koffs[1] = 7
                            kout = np.full(room, 0xCD, np.uint8)
                            assert k.dictionary_byte_array(data, 0, len(data), n, d_off, d_data, koffs, 1, kout,
                                                           keep) == rc, (k, count, n, ndict, room, rate)
                            assert koffs[0] == -1 and koffs[2:len(kept) + 2].tolist() == (7 + np.asarray(
                                kends, np.int64)).tolist(), (k, count, n, ndict, room, rate)
                            kend = 7 + (int(kends[-1]) if len(kept) else 0)
                            assert (kout[:7] == 0xCD).all() and kout[7:kend].tolist() == list(kvalues)
        # one index outside the dictionary, wherever it is
        for at in sorted({0, 15, 16, 17, 255, 256, 257, count // 2, count - 1} & set(range(count))):
            bad_vals = vals.copy()
            bad_vals[bad_vals == top] = top - 1
            bad_vals[at] = top                          # the dictionary below holds indices < top only
            bad = bytes([width]) + _hybrid_packed(bad_vals, width)
            d_off, d_data = dictionary(top)
            for room in (24 * count, 24 * count + 64):
                for k in kernels(count):
                    offs = np.zeros(count + 1, np.int32)
                    out = np.zeros(room, np.uint8)
                    assert k.dictionary_byte_array(bad, 0, len(bad), count, d_off, d_data, offs, 0, out) == -3, \
                        (k, count, at, room)
                    # the same with flags: a dropped row's index is checked all the same
                    keep = (np.arange(count) % 2).astype(np.uint8)
                    keep[at] = 0
                    offs = np.zeros(count + 2, np.int32)
                    assert k.dictionary_byte_array(bad, 0, len(bad), count, d_off, d_data, offs, 0, out,
                                                   keep) == -3, (k, count, at, room)


def test_kept_values_and_counts_on_the_vector_and_scalar_paths(vector_state):
    """keep_fixed compacts 8-byte values eight rows and 4-byte values sixteen rows at a time on the vector path,
    and counts flags 64 at a time (count_flags, and the room tests of every kernel taking flags): on both paths
    the kept rows come out in order, nothing is written before the output position or past the room asked for
    (the kept rows and one value more), any non-zero flag keeps, and the counts are those of numpy, for every
    drop rate from none to all and row counts around the group sizes."""
    rng = np.random.default_rng(41)
    for k in [p.values[0] for p in K]:
        for trial in range(600):
            w = (8, 4, 3, 8, 4, 2)[trial % 6]
            n = int(rng.integers(0, 90)) if trial % 10 else int(rng.integers(1000, 5000))
            drop = (0.0, 0.01, 0.05, 0.5, 0.95, 1.0, 0.2)[trial % 7]
            keep = (rng.random(n) >= drop).astype(np.uint8)
            if trial % 4 == 1:
                keep *= rng.integers(1, 256, n, dtype=np.uint8)
            kept = int(np.count_nonzero(keep))
            src = rng.integers(0, 256, n * w, dtype=np.uint8)
            pos = int(rng.integers(0, 4))
            out = np.full((pos + kept + 1 + 20) * w, 0xA5, np.uint8)
            room = out[:(pos + kept + 1) * w]
            assert k.keep_fixed(src, w, n, keep, room, pos) == kept, trial
            assert (out[:pos * w] == 0xA5).all(), trial
            assert out[pos * w:(pos + kept) * w].tolist() == src.reshape(n, w)[keep != 0].ravel().tolist(), trial
            assert (out[(pos + kept + 1) * w:] == 0xA5).all(), trial
            if n:
                assert k.keep_fixed(src, w, n, keep, out[:(pos + kept) * w], pos) == -4, trial
            start = int(rng.integers(0, n + 1))
            m = int(rng.integers(0, n - start + 1))
            assert k.count_flags(keep, start, m) == int(np.count_nonzero(keep[start:start + m])), trial
            assert k.count_flags(keep, 0, n) == kept, trial
            assert k.count_flags(keep, start, n - start + 1) == -4
            assert k.count_flags(keep, -1, 0) == -4


def test_keep_kernels_match_the_twin_and_a_filter(vector_state):
    """The kernels that write only kept rows (dictionary_fixed / dictionary_byte_array with flags, keep_fixed,
    keep_bits, keep_byte_array) against the twin and against filtering what the kernels write without flags;
    damaged streams give the same status; with the compiled kernel's vector paths on and off."""
    impls = [p.values[0] for p in K]
    rng = np.random.default_rng(13)
    for trial in range(300):
        width = int(rng.integers(1, 21))
        data, idx = _hybrid_stream(width, seed=trial)
        n = len(idx)
        keep = (rng.random(n) > (0.05, 0.5, 0.95)[trial % 3]).astype(np.uint8)
        if trial % 7 == 0:
            keep[:] = 0
        kept = int(keep.sum())
        damaged = trial % 4 == 3
        b = bytearray(data)
        if damaged:
            b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
        ndict = int(idx.max()) + 1 - (1 if damaged and trial % 8 == 3 else 0)
        vw = (4, 8, 3)[trial % 3]
        dic = rng.integers(0, 256, max(ndict, 1) * vw, dtype=np.uint8)
        res = []
        for k in impls:
            out = np.zeros((kept + 1) * vw, np.uint8)
            rc = k.dictionary_fixed(bytes(b), 0, len(b), n, dic, vw, out, 0, keep)
            full = np.zeros(n * vw, np.uint8)
            rc_full = k.dictionary_fixed(bytes(b), 0, len(b), n, dic, vw, full, 0)
            assert rc == rc_full, trial
            if rc >= 0:
                want = full.reshape(n, vw)[keep.astype(bool)].ravel()
                assert out[:kept * vw].tolist() == want.tolist(), trial
            # no room for the value past the kept ones
            assert k.dictionary_fixed(bytes(b), 0, len(b), n, dic, vw, out[:kept * vw], 0, keep) == -4
            res.append(rc)
            values, d_off, d_data = _string_dictionary(min(max(ndict, 1), 4096), trial)
            d_data = np.concatenate([d_data, np.zeros(16, np.uint8)])
            room = 64 * n + 64
            offs, od = np.zeros(kept + 2, np.int32), np.zeros(room, np.uint8)
            rc = k.dictionary_byte_array(bytes(b), 0, len(b), n, d_off, d_data, offs, 0, od, keep)
            foffs, fod = np.zeros(n + 1, np.int32), np.zeros(room, np.uint8)
            rc_full = k.dictionary_byte_array(bytes(b), 0, len(b), n, d_off, d_data, foffs, 0, fod)
            assert rc == rc_full, trial
            if rc >= 0:
                whole = pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(foffs), pa.py_buffer(fod)])
                got = pa.Array.from_buffers(pa.binary(), kept, [None, pa.py_buffer(offs), pa.py_buffer(od)])
                assert got.equals(whole.filter(pa.array(keep.astype(bool)))), trial
            assert k.dictionary_byte_array(bytes(b), 0, len(b), n, d_off, d_data, offs[:kept + 1], 0, od,
                                           keep) == -4
            res.append(rc)
        if len(impls) == 2:
            assert res[:2] == res[2:], trial
    for k in impls:
        n = 45
        keep = (np.arange(n) % 3 != 0).astype(np.uint8)
        keep[8:24] = 1
        kept = int(keep.sum())
        for w in (1, 4, 8):
            src = rng.integers(0, 256, n * w, dtype=np.uint8)
            out = np.full((kept + 3) * w, 7, np.uint8)
            assert k.keep_fixed(src, w, n, keep, out, 2) == kept
            assert out[:2 * w].tolist() == [7] * 2 * w
            assert out[2 * w:(2 + kept) * w].tolist() == src.reshape(n, w)[keep.astype(bool)].ravel().tolist()
            assert k.keep_fixed(src, w, n, keep, out[:(kept + 2) * w], 2) == -4
            assert k.keep_fixed(src[:-1], w, n, keep, out, 2) == -4
        bits = rng.integers(0, 256, 6, dtype=np.uint8)
        out = np.full(8, 0x5A, np.uint8)
        ones = k.keep_bits(bits, n, keep, out, 3)
        src_bits = np.unpackbits(bits, bitorder="little")[:n].astype(bool)
        got = np.unpackbits(out, bitorder="little").astype(bool)
        assert ones == int(src_bits[keep.astype(bool)].sum())
        assert got[3:3 + kept].tolist() == src_bits[keep.astype(bool)].tolist()
        assert got[:3].tolist() == np.unpackbits(np.array([0x5A], np.uint8), bitorder="little")[:3].astype(
            bool).tolist()
        assert k.keep_bits(bits, n, keep, out[:1], 3) == -4
        values = [bytes([j % 251]) * (j % 23) for j in range(n)]
        arr = pa.array(values, pa.binary())
        s_off = np.frombuffer(arr.buffers()[1], np.int32)[:n + 1].copy()
        s_data = np.frombuffer(arr.buffers()[2], np.uint8).copy()
        offs = np.zeros(kept + 3, np.int32)
        offs[2] = 4
        od = np.zeros(4 + len(s_data), np.uint8)
        assert k.keep_byte_array(s_off, s_data, n, keep, offs, 2, od) == kept
        want = [v for v, x in zip(values, keep) if x]
        assert offs[3:3 + kept].tolist() == (4 + np.cumsum([len(v) for v in want])).tolist()
        assert bytes(od[4:offs[2 + kept]]) == b"".join(want)
        assert k.keep_byte_array(s_off, s_data, n, keep, offs, 2, od[:int(offs[2 + kept]) - 1]) == -4
        bad = s_off.copy()
        bad[5] = len(s_data) + 9
        assert k.keep_byte_array(bad, s_data, n, np.ones(n, np.uint8), offs[:n + 3], 2, od) == -4


def test_kept_rows_of_an_array():
    """``kept_rows`` equals Arrow's filter for fixed-width arrays (sliced, chunked, time-zoned) and for the types
    it leaves to the filter (nulls, strings, booleans, decimals); a flag count that is not the row count is
    refused."""
    rng = np.random.default_rng(8)
    keep = rng.random(1000) > 0.3
    arrays = [pa.array(np.arange(1000)), pa.array(rng.random(1000)),
              pa.array(np.arange(1010, dtype=np.int32))[5:1005],
              pa.chunked_array([pa.array(np.arange(600)), pa.array(np.arange(400))]),
              pa.array(np.arange(1000), pa.int64()).cast(pa.timestamp("us", tz="UTC")),
              pa.array(rng.random(1000).astype(np.float32)),
              pa.array([None if i % 7 == 0 else i for i in range(1000)]),
              pa.array([f"v{i}" for i in range(1000)]), pa.array([i % 3 == 0 for i in range(1000)]),
              pa.array(range(1000), pa.int64()).cast(pa.decimal128(20, 0))]
    for arr in arrays:
        whole = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
        for flags in (keep, keep.astype(np.uint8), np.zeros(1000, bool), np.ones(1000, bool)):
            got = PC.kept_rows(arr, flags)
            got.validate(full=True)
            assert got.equals(whole.filter(pa.array(flags.astype(bool)))), arr.type
    with pytest.raises(ValueError):
        PC.kept_rows(arrays[0], keep[:-1])


def _pages_into(monkeypatch):
    """A list the decoder appends the size of each page it decompresses straight into its output to."""
    sizes = []
    real = PC._Decoder.decompress_into

    def counting(self, body, dst):
        sizes.append(len(dst))
        return real(self, body, dst)
    monkeypatch.setattr(PC._Decoder, "decompress_into", counting)
    return sizes


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("kind", ["optional", "required", "one null a page", "nulls"])
def test_plain_pages_decompressed_into_the_output(tmp_path, impl, version, kind, monkeypatch):
    """PLAIN zstd pages of fixed-width values without nulls are decompressed straight into the column (a v1
    page's definition levels land in the room before its first row, and the previous page's last values are
    put back): the same columns as pyarrow's, whole, in pages, with keep flags and with a selection. Pages with
    nulls are read the ordinary way."""
    n = 5000
    t = _table(n=n, nulls=kind == "nulls", seed=3)
    if kind == "one null a page":     # the levels and values then almost fill a page of that many rows
        mask = np.zeros(n, bool)
        mask[::97] = True
        t = pa.table({c: pa.array(t.column(c).to_numpy(zero_copy_only=False), t.column(c).type, mask=mask)
                      for c in ("i32", "i64", "f64", "d", "ts")})
    if kind == "required":
        t = t.cast(pa.schema([f.with_nullable(False) for f in t.schema]))
    p = tmp_path / "t.parquet"
    pq.write_table(t, p, data_page_version=version, use_dictionary=False, compression="zstd",
                   data_page_size=1000, write_batch_size=97, row_group_size=3000)
    into = _pages_into(monkeypatch)
    got = _check(p)
    if kind in ("optional", "required"):
        assert len(into) > 40 and got["i64"].null_count == 0
    elif kind == "nulls":
        assert into == []
    keep = np.random.default_rng(1).random(pq.ParquetFile(p).metadata.row_group(0).num_rows) < 0.9
    keep[:400] = True                 # whole pages kept go through the direct path too
    _read_modes_match_pyarrow(p, keep)


def test_a_zstd_frame_that_does_not_fill_its_page(tmp_path):
    """A page's frames holding fewer or more bytes than its header declares make a corrupt page, named by file
    and offset; so does a frame that is not zstd. Several frames that add up are read."""
    import zstandard
    chunk = PC.ColumnChunk("INT64", "ZSTD", 100, 1000, 10, 80, 0, 10)
    dec = PC._Decoder("f.parquet", chunk, pa.int64(), None)
    dst = np.zeros(80, np.uint8)
    dec.decompress_into(zstandard.ZstdCompressor().compress(bytes(range(80))), dst)
    assert bytes(dst) == bytes(range(80))
    # a page of several frames (the format allows them)
    dst[:] = 0
    dec.decompress_into(zstandard.ZstdCompressor().compress(bytes(range(30))) +
                        zstandard.ZstdCompressor().compress(bytes(range(30, 80))), dst)
    assert bytes(dst) == bytes(range(80))
    for body in (zstandard.ZstdCompressor().compress(bytes(79)), zstandard.ZstdCompressor().compress(bytes(81)),
                 zstandard.ZstdCompressor(write_content_size=False).compress(bytes(81)), b"not zstd at all", b""):
        with pytest.raises(CorruptFileError, match="page") as e:
            dec.decompress_into(body, dst)
        assert e.value.path == "f.parquet" and e.value.offset == 100


def _zigzag(v):
    return (v << 1) if v >= 0 else ((-v) << 1) - 1


def _delta_stream(values, width, block=128, minis=4, pad_last=True):
    """A DELTA_BINARY_PACKED stream of ``values`` (``width`` 4 or 8 bytes), deltas wrapping at that width."""
    bits = 8 * width
    mask = (1 << bits) - 1
    out = bytearray(_uvarint(block) + _uvarint(minis) + _uvarint(len(values)))
    if not values:
        return bytes(out + _uvarint(0))
    out += _uvarint(_zigzag(values[0]))
    deltas = []
    for a, b in zip(values, values[1:]):
        d = (b - a) & mask
        deltas.append(d - (1 << bits) if d >> (bits - 1) else d)
    vpm = block // minis
    for s in range(0, len(deltas), block):
        chunk = deltas[s:s + block]
        lo = min(chunk)
        out += _uvarint(_zigzag(lo))
        packed = [(d - lo) & mask for d in chunk]
        groups = [packed[m * vpm:(m + 1) * vpm] for m in range(minis)]
        widths = [max(g).bit_length() if g else 0 for g in groups]
        out += bytes(widths)
        for g, w in zip(groups, widths):
            if not g:
                break
            word = 0
            for i, x in enumerate(g):
                word |= x << (i * w)
            size = vpm * w // 8 if pad_last or len(g) == vpm else (len(g) * w + 7) // 8
            out += word.to_bytes(size, "little")
    return bytes(out)


def _int_values(rng, n, width):
    lo, hi = (-2**31, 2**31) if width == 4 else (-2**63, 2**63)
    kind = rng.integers(0, 5)
    if kind == 4:                     # deltas of every bit width up to the type's (a value across two words)
        bits = 8 * width
        out, v = [], 0
        for i in range(n):
            b = int(rng.integers(1, bits + 1))
            v = (v + int(rng.integers(0, 2**min(b, 62))) * 2**max(b - 62, 0)) % 2**bits
            out.append(v - 2**bits if v >> (bits - 1) else v)
        return out
    if kind == 0:
        return [int(x) for x in rng.integers(lo, hi, n, dtype=np.int64 if width == 8 else np.int32)]
    if kind == 1:
        return [int(x) for x in np.cumsum(rng.integers(0, 5, n))]
    if kind == 2:
        return [int(x) for x in rng.choice([lo, hi - 1, 0, -1, 1], n)]
    return [int(x) for x in rng.integers(-1000, 1000, n)]


def test_delta_binary_packed_kernel_matches_the_twin_and_the_values():
    """DELTA_BINARY_PACKED: both implementations decode streams of random, sorted and extreme values (bit widths
    up to 64, deltas wrapping), block sizes and miniblock counts, a last miniblock padded or not, and give the
    same status on every damaged stream."""
    impls = [p.values[0] for p in K]
    k = impls[0]
    rng = np.random.default_rng(5)
    for trial in range(200):
        width = (4, 8)[trial % 2]
        n = int(rng.choice([0, 1, 2, 31, 127, 128, 129, 500, 1025]))
        values = _int_values(rng, n, width)
        block, minis = [(128, 4), (128, 1), (256, 8), (1024, 32)][trial % 4]
        raw = np.frombuffer(_delta_stream(values, width, block, minis, pad_last=trial % 3 != 0), np.uint8)
        want = np.array(values, np.int32 if width == 4 else np.int64)
        for impl in impls:
            out = np.zeros((n + 2) * width, np.uint8)
            end = impl.delta_binary_packed(raw, 0, len(raw), n, width, out, 1)
            assert end == len(raw), (impl, trial)
            assert (out[width:(n + 1) * width].view(want.dtype) == want).all()
            assert not out[:width].any() and not out[(n + 1) * width:].any()
        assert k.delta_binary_packed(raw, 0, len(raw), n + 1, width, np.zeros((n + 2) * width, np.uint8), 0) \
            == -5                             # the stream holds another count
        assert k.delta_binary_packed(raw, 0, len(raw), n, width, np.zeros(max(n * width - 1, 0), np.uint8),
                                     0) == (-4 if n else len(raw))
        if len(raw) < 2:
            continue
        for d in range(8):
            bad = raw.copy()
            if d < 6:
                bad[int(rng.integers(0, len(bad)))] ^= 1 << int(rng.integers(0, 8))
            else:
                bad = bad[:int(rng.integers(0, len(bad)))]
            outs = [np.zeros(max(n, 1) * width, np.uint8) for _ in impls]
            got = [impl.delta_binary_packed(bad, 0, len(bad), n, width, o, 0) for impl, o in zip(impls, outs)]
            assert got[0] == got[-1], (trial, d, got)
            if got[0] >= 0:
                assert (outs[0] == outs[-1]).all()
    for bad_header in (_uvarint(100) + _uvarint(4) + _uvarint(1) + _uvarint(0),       # block not a multiple of 128
                       _uvarint(128) + _uvarint(3) + _uvarint(1) + _uvarint(0),       # 128 / 3 miniblocks
                       _uvarint(128) + _uvarint(8) + _uvarint(1) + _uvarint(0),       # 16 values a miniblock
                       _uvarint(1 << 40) + _uvarint(4) + _uvarint(1) + _uvarint(0),   # an absurd block
                       _uvarint(128) + _uvarint(0) + _uvarint(1) + _uvarint(0)):
        for impl in impls:
            assert impl.delta_binary_packed(np.frombuffer(bad_header, np.uint8), 0, len(bad_header), 1, 8,
                                            np.zeros(8, np.uint8), 0) == -5
    too_wide = _uvarint(128) + _uvarint(4) + _uvarint(2) + _uvarint(0) + _uvarint(0) + bytes([33, 0, 0, 0]) + \
        bytes(32 * 33 // 8)
    out_of_range = _uvarint(128) + _uvarint(4) + _uvarint(1) + _uvarint(_zigzag(2**31))
    for impl in impls:
        buf = np.frombuffer(too_wide, np.uint8)
        assert impl.delta_binary_packed(buf, 0, len(buf), 2, 4, np.zeros(8, np.uint8), 0) == -5
        assert impl.delta_binary_packed(buf, 0, len(buf), 2, 8, np.zeros(16, np.uint8), 0) == len(buf)
        buf = np.frombuffer(out_of_range, np.uint8)
        assert impl.delta_binary_packed(buf, 0, len(buf), 1, 4, np.zeros(4, np.uint8), 0) == -3
        assert impl.delta_binary_packed(buf, 0, len(buf), 1, 8, np.zeros(8, np.uint8), 0) == len(buf)
        assert impl.delta_binary_packed(buf, 0, 0, 1, 8, np.zeros(8, np.uint8), 0) == -1


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("nulls", [True, False])
def test_delta_encoded_files(tmp_path, impl, version, nulls, monkeypatch):
    """INT32/INT64 columns written DELTA_BINARY_PACKED by pyarrow (random, sorted and extreme values, dates and
    timestamps, several pages and row groups) read as pyarrow reads them: whole, with keep flags, with a
    selection and in pages; damaged pages raise CorruptFileError."""
    n = 4000
    rng = np.random.default_rng(11)
    mask = (rng.random(n) < 0.2) if nulls else None
    t = pa.table({
        "r64": pa.array(rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64), mask=mask),
        "r32": pa.array(rng.integers(-2**31, 2**31 - 1, n, dtype=np.int32), mask=mask),
        "pos": pa.array(np.cumsum(rng.integers(0, 40, n)), pa.int64(), mask=mask),
        "ext": pa.array(rng.choice([-2**63, 2**63 - 1, 0], n), pa.int64(), mask=mask),
        "d": pa.array(np.arange(n, dtype=np.int32), pa.int32(), mask=mask).cast(pa.date32()),
        "ts": pa.array(np.arange(n, dtype=np.int64) * 1_000_003, pa.int64(), mask=mask).cast(pa.timestamp("us")),
    })
    p = tmp_path / "t.parquet"
    pq.write_table(t, p, data_page_version=version, use_dictionary=False, compression="zstd",
                   column_encoding={c: "DELTA_BINARY_PACKED" for c in t.column_names}, data_page_size=2000,
                   row_group_size=1500)
    assert "DELTA_BINARY_PACKED" in pq.ParquetFile(p).metadata.row_group(0).column(0).encodings
    _check(p)
    pf = pq.ParquetFile(p)
    md = pf.metadata
    _read_modes_match_pyarrow(p, np.random.default_rng(2).random(md.row_group(0).num_rows) < 0.7)
    raw = p.read_bytes()
    rg = md.row_group(0)
    lo = min(rg.column(j).data_page_offset for j in range(md.num_columns))
    hi = max(rg.column(j).data_page_offset + rg.column(j).total_compressed_size for j in range(md.num_columns))
    trials = 100 if impl.__name__.startswith("paimon_engine._kernels") else 20
    for trial in range(trials):
        b = bytearray(raw)
        b[int(rng.integers(lo, hi))] ^= 1 << int(rng.integers(0, 8))
        try:
            _decode_all(bytes(b), pf)
        except CorruptFileError as exc:
            assert exc.path == "bad.parquet" and lo <= exc.offset < hi


def test_delta_encoded_uncompressed_pages(tmp_path, impl):
    """Uncompressed DELTA_BINARY_PACKED pages: a bit flip in a page's values decodes to other values or raises
    CorruptFileError, never anything else."""
    n = 3000
    t = pa.table({"x": pa.array(np.cumsum(np.arange(n) % 7), pa.int64()),
                  "y": pa.array(np.arange(n, dtype=np.int32) * -3, pa.int32())})
    p = tmp_path / "t.parquet"
    pq.write_table(t, p, use_dictionary=False, compression="none",
                   column_encoding={"x": "DELTA_BINARY_PACKED", "y": "DELTA_BINARY_PACKED"}, data_page_size=1000)
    _check(p)
    raw, pf = p.read_bytes(), pq.ParquetFile(p)
    rg = pf.metadata.row_group(0)
    rng = np.random.default_rng(4)
    for trial in range(200 if impl.__name__.startswith("paimon_engine._kernels") else 30):
        b = bytearray(raw)
        j = trial % 2
        at = int(rng.integers(rg.column(j).data_page_offset,
                              rg.column(j).data_page_offset + rg.column(j).total_compressed_size))
        b[at] ^= 1 << int(rng.integers(0, 8))
        try:
            _decode_all(bytes(b), pf)
        except CorruptFileError:
            pass


def test_page_mode_reads_moving_between_threads(tmp_path):
    """Page-by-page reads of zstd pages advanced from whichever pool thread is free, several at once: each
    page is decompressed with the decompressor of the thread reading it, and every column comes out whole."""
    from concurrent.futures import ThreadPoolExecutor
    t = _table(n=20000, nulls=False)
    p = tmp_path / "t.parquet"
    pq.write_table(t, p, use_dictionary=False, compression="zstd", data_page_size=2000)
    f = pa.OSFile(str(p))
    iters = {}
    for name, chunk, typ in _first_group_chunks(pq.ParquetFile(p)):
        if name in ("i32", "i64", "f32", "f64", "d", "ts"):
            iters[name] = iter(PC.iter_column_chunk(str(p), f.read_at, f.size(), chunk, typ, 700))
    got = {name: [] for name in iters}
    with ThreadPoolExecutor(4) as pool:
        live = dict(iters)
        while live:
            futures = {name: pool.submit(next, it, None) for name, it in live.items()}
            for name, fut in futures.items():
                arr = fut.result()
                if arr is None:
                    del live[name]
                else:
                    got[name].append(arr)
    for name, pieces in got.items():
        assert pa.concat_arrays(pieces).equals(t.column(name).combine_chunks()), name


def test_a_zstd_page_of_several_frames(tmp_path):
    """A data page whose zstd body is two frames and a skippable frame (as valid as one frame) reads as pyarrow
    reads it, through the path that decompresses straight into the column."""
    import io
    import struct
    import zstandard
    from paimon_engine._speedups import kernel
    n = 20000
    values = np.random.default_rng(0).choice(np.array([1, 10**12, 77, -5, 123456789], np.int64), n)
    t = pa.table({"x": pa.array(values)}).cast(pa.schema([pa.field("x", pa.int64(), nullable=False)]))
    buf = io.BytesIO()
    pq.write_table(t, buf, compression="zstd", compression_level=1, use_dictionary=False, data_page_version="2.0",
                   data_page_size=1 << 30, write_statistics=False)
    raw = bytearray(buf.getvalue())
    cc = pq.ParquetFile(io.BytesIO(bytes(raw))).metadata.row_group(0).column(0)
    hdr = np.empty(12, np.int64)
    at = kernel("parquet").page_header(np.frombuffer(bytes(raw), np.uint8), cc.data_page_offset, len(raw), hdr)
    size = int(hdr[2])
    plain = pa.Codec("zstd").decompress(bytes(raw[at:at + size]), decompressed_size=int(hdr[1]), asbytes=True)
    c = zstandard.ZstdCompressor(level=19)
    frames = c.compress(plain[:len(plain) // 2]) + c.compress(plain[len(plain) // 2:])
    assert size - len(frames) >= 8
    frames += struct.pack("<II", 0x184D2A50, size - len(frames) - 8) + bytes(size - len(frames) - 8)
    raw[at:at + size] = frames
    p = tmp_path / "frames.parquet"
    p.write_bytes(bytes(raw))
    assert pq.read_table(p).equals(t)
    _check(p)
