"""Parquet page headers: which column chunks are dictionary-encoded on every data page, and string columns read
as dictionaries made plain by a kernel (with deletes applied in the same copy), equal to the ordinary read."""
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st

from paimon_engine.expressions import col
from paimon_engine.scan import parquet_pages as PP
from paimon_engine.scan import reader as R
from paimon_engine.catalog import SqlCatalog

N = 60_000
PREFIX = "user-with-a-long-prefix-so-that-the-dictionary-grows-past-its-limit-"


def _table():
    i = np.arange(N)
    return pa.table({
        "low": pa.array(np.char.add("v", (i % 50).astype(str))),                # dictionary all the way
        "unique": pa.array(np.char.add(PREFIX, i.astype(str))),               # dictionary outgrows 1 MiB: PLAIN
        "bin": pa.array([bytes([j % 7]) * (j % 5) for j in range(N)], pa.binary()),
        "n": pa.array(i, pa.int64()),
    })


def _chunks(path):
    md = pq.ParquetFile(path).metadata
    f = pa.OSFile(str(path))
    out = {}
    for j in range(md.num_columns):
        c = md.row_group(0).column(j)
        start = c.dictionary_page_offset if c.has_dictionary_page else c.data_page_offset
        out[c.path_in_schema] = (f.read_at, start, start + c.total_compressed_size)
    return out


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_dictionary_detection_tells_fallback_apart(tmp_path, version):
    p = tmp_path / "t.parquet"
    pq.write_table(_table(), p, compression="zstd", data_page_version=version, data_page_size=64 << 10,
                   dictionary_pagesize_limit=256 << 10)
    ch = _chunks(p)
    # the footer cannot tell them apart: both list a dictionary and PLAIN
    md = pq.ParquetFile(p).metadata.row_group(0)
    assert set(md.column(0).encodings) == set(md.column(1).encodings)
    assert PP.all_data_pages_dictionary_encoded(*ch["low"])
    assert PP.all_data_pages_dictionary_encoded(*ch["bin"])
    assert not PP.all_data_pages_dictionary_encoded(*ch["unique"])
    pages = PP.page_encodings(*ch["unique"])
    assert pages[0][0] == PP.DICTIONARY_PAGE and len(pages) > 3
    data_type = PP.DATA_PAGE if version == "1.0" else PP.DATA_PAGE_V2
    assert {t for t, _ in pages[1:]} == {data_type}
    assert {e for _, e in pages[1:]} == {PP.RLE_DICTIONARY, 0}          # 0: PLAIN after the fallback


def test_no_dictionary_page_is_not_dictionary(tmp_path):
    p = tmp_path / "t.parquet"
    pq.write_table(_table(), p, use_dictionary=False)
    ch = _chunks(p)
    assert not PP.all_data_pages_dictionary_encoded(*ch["low"])
    assert PP.page_encodings(*ch["low"])                                # walkable, just not dictionary


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_malformed_headers_never_raise(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("pages") / "t.parquet"
    if not p.exists():
        pq.write_table(_table().slice(0, 5000), p, data_page_size=4 << 10)
    read_at, start, end = _chunks(p)["low"]
    raw = bytearray(read_at(end - start, start))
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["flip", "cut", "byte"]))
        if kind == "flip" and raw:
            i = data.draw(st.integers(0, min(len(raw), 400) - 1))
            raw[i] ^= 1 << data.draw(st.integers(0, 7))
        elif kind == "cut":
            del raw[data.draw(st.integers(0, len(raw))):]
        elif raw:
            raw[data.draw(st.integers(0, min(len(raw), 400) - 1))] = data.draw(st.integers(0, 255))
    blob = bytes(raw)

    def mutated(n, off):
        return blob[off - start:off - start + n]
    got = PP.page_encodings(mutated, start, start + len(blob))
    assert got is None or isinstance(got, list)
    assert PP.all_data_pages_dictionary_encoded(mutated, start, start + len(blob)) in (True, False)


def test_absurd_headers_are_refused():
    # a header declaring a negative page size, and one nesting structs past any sane depth
    neg = bytes([0x15, 0x00, 0x15, 0x02, 0x15, 0x01, 0x00])           # type 0, sizes 1 and -1
    deep = bytes([0x1C] * 200)
    for blob in (neg, deep, b"", b"\x00", b"\xff" * 64):
        assert PP.page_encodings(lambda n, o, b=blob: b[o:o + n], 0, max(len(blob), 1)) is None


# -- reads --------------------------------------------------------------------------------------------------

@pytest.fixture
def table(tmp_path):
    cat = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    data = _table()
    t = cat.create_table("db.t", data.schema)
    t.append(data.slice(0, N // 2))
    t.append(data.slice(N // 2))
    return t


def _dense(monkeypatch):
    monkeypatch.setattr(R.TaskReader, "_dictionary_names", lambda self, *a: frozenset())


def _reads(t, **scan):
    s = t.scan(**scan)
    return {"arrow": s.to_arrow(), "batches": pa.Table.from_batches(list(s.to_batches(batch_size=7001)))}


def test_dictionary_reads_equal_ordinary_reads(table, monkeypatch):
    seen = []
    orig = R.TaskReader._dictionary_names

    def spy(self, *a):
        got = orig(self, *a)
        seen.append(got)
        return got
    monkeypatch.setattr(R.TaskReader, "_dictionary_names", spy)
    table.delete(col("n").isin(list(range(0, N, 17))))                  # position deletes
    table.delete(col("low") == "v7", mode="equality", equality_columns=["low"])   # keyed on a dictionary column
    cases = [dict(), dict(columns=["low", "n"]), dict(filter="low = 'v3' or unique = '" + PREFIX + "5'"),
             dict(columns=["unique"]), dict(columns=["bin", "low"])]
    fast = [_reads(table, **c) for c in cases]
    assert frozenset({"low", "bin"}) in seen and not any("unique" in s for s in seen)
    with monkeypatch.context() as m:
        _dense(m)
        slow = [_reads(table, **c) for c in cases]
    for f, s in zip(fast, slow):
        for k in f:
            assert f[k].schema == s[k].schema
            assert f[k].sort_by("n" if "n" in f[k].column_names else f[k].column_names[0]).equals(
                s[k].sort_by("n" if "n" in s[k].column_names else s[k].column_names[0]))
    everything = fast[0]["arrow"]
    assert everything.num_rows == N - len(range(0, N, 17)) - sum(
        1 for j in range(N) if j % 17 and j % 50 == 7)
    assert everything.column("low").type == pa.string() and everything.column("bin").type == pa.binary()
