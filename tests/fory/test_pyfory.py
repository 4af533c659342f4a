"""Interop with pyfory 1.7.7 (standard layout): its rows decode with us, ours with it, bytes match."""

import datetime as dt
import os
import time

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.formats import fory

from .util import equal_except_null_slots

ff = pytest.importorskip("pyfory.format")


@pytest.fixture(autouse=True, scope="module")
def utc():
    # pyfory stores naive timestamps as local time: pin the zone so both sides agree
    old = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


def pyfory_schema():
    return ff.schema([
        ff.field("b", ff.boolean()), ff.field("i8", ff.int8()), ff.field("i16", ff.int16()),
        ff.field("i32", ff.int32()), ff.field("i64", ff.int64()), ff.field("f32", ff.float32()),
        ff.field("f64", ff.float64()), ff.field("s", ff.utf8()), ff.field("bin", ff.binary()),
        ff.field("d", ff.date32()), ff.field("ts", ff.timestamp()),
        ff.field("l", ff.list_(ff.int32())), ff.field("ls", ff.list_(ff.utf8())),
        ff.field("ll", ff.list_(ff.list_(ff.int64()))),
        ff.field("m", ff.map_(ff.utf8(), ff.int64())),
        ff.field("st", ff.struct([ff.field("x", ff.int32()), ff.field("y", ff.utf8()),
                                  ff.field("z", ff.list_(ff.float64()))])),
        ff.field("lst", ff.list_(ff.struct([ff.field("k", ff.int16()), ff.field("v", ff.utf8())]))),
    ])


def arrow_schema():
    return pa.schema([
        ("b", pa.bool_()), ("i8", pa.int8()), ("i16", pa.int16()), ("i32", pa.int32()), ("i64", pa.int64()),
        ("f32", pa.float32()), ("f64", pa.float64()), ("s", pa.string()), ("bin", pa.binary()),
        ("d", pa.date32()), ("ts", pa.timestamp("us")), ("l", pa.list_(pa.int32())),
        ("ls", pa.list_(pa.string())), ("ll", pa.list_(pa.list_(pa.int64()))),
        ("m", pa.map_(pa.string(), pa.int64())),
        ("st", pa.struct([("x", pa.int32()), ("y", pa.string()), ("z", pa.list_(pa.float64()))])),
        ("lst", pa.list_(pa.struct([("k", pa.int16()), ("v", pa.string())]))),
    ])


def rows():
    full = {"b": True, "i8": -3, "i16": 300, "i32": -70000, "i64": 1 << 40, "f32": 1.5, "f64": -2.25,
            "s": "héllo wörld, longer than eight", "bin": b"\x00\x01\xff", "d": dt.date(2024, 2, 29),
            "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 6), "l": [1, None, 3], "ls": ["a", None, ""],
            "ll": [[1, 2], None, []], "m": {"k": 1, "z": None}, "st": {"x": 5, "y": None, "z": [0.5]},
            "lst": [{"k": 1, "v": "one"}, None, {"k": None, "v": None}]}
    empty = {"b": False, "i8": 0, "i16": 0, "i32": 0, "i64": 0, "f32": 0.0, "f64": 0.0, "s": "",
             "bin": b"\x00", "d": dt.date(1970, 1, 1), "ts": dt.datetime(1970, 1, 1), "l": [], "ls": [],
             "ll": [], "m": {}, "st": {"x": None, "y": "", "z": None}, "lst": []}
    nulls = {k: None for k in full}
    many = dict(full, l=list(range(70)), ls=["x" * i for i in range(67)], i64=-(1 << 62))
    return [full, empty, nulls, many]


def as_arrow(value):
    out = dict(value)
    if isinstance(out.get("m"), dict):
        out["m"] = list(out["m"].items())
    return out


def test_pyfory_rows_decode_identically():
    ps = pyfory_schema()
    enc = ff.create_row_encoder(ps)
    schema = arrow_schema()
    data = [enc.to_row(r).to_bytes() for r in rows()]
    offsets = np.cumsum([0] + [len(d) for d in data])
    rb = fory.decode_rows(b"".join(data), offsets, schema)
    assert rb.to_pylist() == [as_arrow(r) for r in rows()]
    for d, r in zip(data, rows()):
        assert fory.RowView(d, fory.ForySchema(schema)).to_dict() == as_arrow(r)


def test_our_rows_decode_with_pyfory_and_match_its_bytes():
    ps = pyfory_schema()
    enc = ff.create_row_encoder(ps)
    schema = arrow_schema()
    batch = pa.RecordBatch.from_pylist([as_arrow(r) for r in rows()], schema=schema)
    buf, offsets = fory.encode_rows(batch)
    for i, r in enumerate(rows()):
        ours = bytes(buf[offsets[i]:offsets[i + 1]])
        theirs = enc.to_row(r).to_bytes()
        assert equal_except_null_slots(ours, theirs, schema), i
        import pyfory
        decoded = enc.from_row(ff.RowData(ps, pyfory.Buffer(ours, 0, len(ours))))
        for name in ("b", "i8", "i16", "i32", "i64", "f32", "f64", "s", "bin", "d", "ts", "l", "ls", "ll", "m"):
            assert getattr(decoded, name) == r[name], (i, name)


def test_pyfory_arrow_writer_reads_our_rows():
    simple = ff.schema([ff.field(n, t) for n, t in [("id", ff.int64()), ("name", ff.utf8()),
                                                     ("tags", ff.list_(ff.int64()))]])
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("tags", pa.list_(pa.int64()))])
    batch = pa.record_batch({"id": [1, None, 3], "name": ["a", "b", None], "tags": [[1], [], None]}, schema=schema)
    buf, offsets = fory.encode_rows(batch)
    import pyfory
    writer = ff.ArrowWriter(schema)
    for i in range(3):
        raw = bytes(buf[offsets[i]:offsets[i + 1]])
        writer.write(ff.RowData(simple, pyfory.Buffer(raw, 0, len(raw))))
    assert writer.finish().to_pylist() == batch.to_pylist()
