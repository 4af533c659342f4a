"""Malformed .row files raise CorruptFileError naming file and offset; never crash, hang or over-allocate."""
import io
import struct

import numpy as np
import pyarrow as pa
import pytest
import zstandard

from paimon_engine import _speedups
from paimon_engine.encoding import encode_delta_varint, encode_uvarint32
from paimon_engine.errors import CorruptFileError, PaimonEngineError
from paimon_engine.formats.row import RowFileReader, RowFileWriter

from .util import schema_of

SCHEMA = schema_of([("id", "BIGINT"), ("s", "STRING"), ("d", "DECIMAL(30, 2)"), ("t", "TIMESTAMP(9)"),
                    ("a", "ARRAY<INT>"), ("b", "BOOLEAN")])


def sample_file(n=40, block_size=256):
    table = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "s": pa.array([None if i % 7 == 0 else f"v{i}" for i in range(n)]),
        "d": pa.array([None if i % 5 == 0 else __import__("decimal").Decimal(i) / 4 for i in range(n)],
                      pa.decimal128(30, 2)),
        "t": pa.array([i * 1_000_001 for i in range(n)], pa.timestamp("ns")),
        "a": pa.array([None if i % 3 == 0 else list(range(i % 4)) for i in range(n)], pa.list_(pa.int32())),
        "b": pa.array([i % 2 == 0 for i in range(n)]),
    })
    buf = io.BytesIO()
    with RowFileWriter(buf, SCHEMA, block_size=block_size) as w:
        w.write(table)
    return buf.getvalue(), table


def read_everything(data, kernel=None):
    r = RowFileReader(io.BytesIO(data), SCHEMA)
    if kernel is not None:
        r._kernel = kernel
    r.read_all()
    r.read_all(columns=["s"])
    if r.num_rows:
        r.take([r.num_rows - 1, 0])


def expect_corrupt(data, kernel=None):
    with pytest.raises(CorruptFileError) as ei:
        read_everything(data, kernel)
    assert ei.value.path is not None and ei.value.offset is not None
    return ei.value


def test_sample_is_valid():
    data, table = sample_file()
    r = RowFileReader(io.BytesIO(data), SCHEMA)
    assert r.num_blocks > 3
    assert r.read_all().to_pylist() == table.to_pylist()


def test_every_truncation_is_an_error():
    data, _ = sample_file()
    for cut in range(len(data)):
        expect_corrupt(data[:cut])


KERNELS = ["compiled", "twin"]


@pytest.mark.parametrize("impl", KERNELS)
def test_bit_flips_never_crash(impl):
    data, _ = sample_file()
    kernel = _speedups.twin("rowcodec") if impl == "twin" else _speedups.kernel("rowcodec")
    rng = np.random.default_rng(3)
    positions = range(len(data)) if impl == "compiled" else rng.integers(0, len(data), 150)
    for pos in positions:
        for bit in ((0, 7) if impl == "compiled" else (int(rng.integers(8)),)):
            bad = bytearray(data)
            bad[pos] ^= 1 << bit
            try:
                read_everything(bytes(bad), kernel)
            except PaimonEngineError:
                pass


def build(blocks, csizes=None, usizes=None, starts=None, rows=None, nblocks=None, index=None, version=1,
          magic=0x524F5753, ioff=None, ilen=None):
    """A .row file from raw block payloads, with any index/footer field overridden."""
    cctx = zstandard.ZstdCompressor()
    comp = [cctx.compress(b) for b in blocks]
    counts = [struct.unpack("<i", b[-4:])[0] for b in blocks]
    csizes = [len(c) for c in comp] if csizes is None else csizes
    usizes = [len(b) for b in blocks] if usizes is None else usizes
    starts = list(np.cumsum([0] + counts[:-1])) if starts is None and blocks else (starts or [])
    rows = sum(counts) if rows is None else rows
    if index is None:
        index = b""
        for arr in (csizes, usizes, starts):
            enc = encode_delta_varint(arr)
            index += encode_uvarint32(len(enc)) + enc
    body = b"".join(comp)
    ioff = len(body) if ioff is None else ioff
    ilen = len(index) if ilen is None else ilen
    footer = struct.pack("<qiqib3xI", rows, len(blocks) if nblocks is None else nblocks, ioff, ilen, version, magic)
    return body + index + footer


def raw_block(row_payloads):
    data = b"".join(row_payloads)
    offs, pos = [], 0
    for p in row_payloads:
        offs.append(pos)
        pos += len(p)
    return data + struct.pack("<%di" % len(offs), *offs) + struct.pack("<i", len(offs))


ONE = schema_of([("x", "INT")])
ROW = b"\x00" + struct.pack("<i", 7)


def read_one(data):
    return RowFileReader(io.BytesIO(data), ONE).read_all().to_pylist()


def test_builder_makes_valid_files():
    assert read_one(build([raw_block([ROW, ROW]), raw_block([ROW])])) == [{"x": 7}] * 3


@pytest.mark.parametrize("kwargs, words", [
    (dict(magic=0x11223344), "magic"),
    (dict(version=2), "version"),
    (dict(rows=-1), "negative row count"),
    (dict(nblocks=-1), "negative block count"),
    (dict(nblocks=3), "cannot fit"),
    (dict(ioff=5), "index"),
    (dict(ilen=1 << 30), "index"),
    (dict(starts=[1, 2]), "row starts"),
    (dict(starts=[0, 0]), "row starts"),
    (dict(starts=[0, 3]), "row starts"),
    (dict(rows=5), "rows"),
    (dict(csizes=[-5, 100]), "negative"),
    (dict(usizes=[10 << 30, 9]), "bytes cannot hold"),
    (dict(usizes=[13, 9]), "declares"),
    (dict(usizes=[30, 8]), "declares"),
    (dict(index=b"\x03\x80\x80\x80\x00\x00"), "truncated"),
    (dict(index=b"\x00\x00\x00"), "cannot fit"),
])
def test_index_and_footer_invariants(kwargs, words):
    blocks = [raw_block([ROW, ROW]), raw_block([ROW])]
    data = build(blocks, **kwargs)
    with pytest.raises(CorruptFileError) as ei:
        read_one(data)
    assert words in str(ei.value), str(ei.value)
    assert "file" in str(ei.value) and "offset" in str(ei.value)


def test_compressed_sizes_must_sum_to_the_index_offset():
    blocks = [raw_block([ROW, ROW]), raw_block([ROW])]
    good = build(blocks)
    cctx = zstandard.ZstdCompressor()
    c0 = len(cctx.compress(blocks[0]))
    c1 = len(cctx.compress(blocks[1]))
    with pytest.raises(CorruptFileError, match="sum"):
        read_one(build(blocks, csizes=[c0 - 1, c1]))
    assert read_one(good)


def test_empty_index_only_for_empty_file():
    data = build([], rows=3)
    with pytest.raises(CorruptFileError):
        read_one(data)


@pytest.mark.parametrize("payload, words", [
    (b"\x00\x01", "truncated"),                      # INT cut short
    (b"\x00" + struct.pack("<i", 7) + b"zz", None),   # trailing bytes inside a row are tolerated
])
def test_bad_rows(payload, words):
    data = build([raw_block([ROW, payload])])
    if words is None:
        assert read_one(data) == [{"x": 7}, {"x": 7}]
        return
    with pytest.raises(CorruptFileError) as ei:
        read_one(data)
    assert words in str(ei.value) and "block 0" in str(ei.value) and "row 1" in str(ei.value)
    assert "field x" in str(ei.value)


def test_bad_row_offsets():
    block = bytearray(raw_block([ROW, ROW]))
    struct.pack_into("<i", block, len(block) - 8, 999)  # row 1 starts past the data
    with pytest.raises(CorruptFileError, match="row 0|row 1"):
        read_one(build([bytes(block)]))


def test_absurd_string_length_and_invalid_utf8():
    schema = schema_of([("s", "STRING")])
    bad_len = build([raw_block([b"\x00\xff\xff\xff\xff\x07ab"])])
    with pytest.raises(CorruptFileError, match="exceeds|range"):
        RowFileReader(io.BytesIO(bad_len), schema).read_all()
    bad_utf8 = build([raw_block([b"\x00\x02\xc3\x28"])])
    with pytest.raises(CorruptFileError, match="UTF-8"):
        RowFileReader(io.BytesIO(bad_utf8), schema).read_all()


def test_get_row_names_the_bad_field():
    """get_row reads one row field by field: a bad value raises CorruptFileError naming the field, the row and
    the byte offset in the block, as read_all does."""
    schema = schema_of([("i", "INT"), ("s", "STRING"), ("b", "BYTES")])
    good = b"\x00" + struct.pack("<i", 7) + b"\x02hi\x01\xff"
    r = RowFileReader(io.BytesIO(build([raw_block([good])])), schema)
    assert r.get_row(0) == {"i": 7, "s": "hi", "b": b"\xff"}
    for row, words, field, offset in [
            (b"\x00\x07\x00", "truncated", "i", 1),                                  # 2 of the int's 4 bytes
            (b"\x00" + struct.pack("<i", 7) + b"\x02\xc3\x28\x00", "UTF-8", "s", 6),  # not UTF-8
            (b"\x00" + struct.pack("<i", 7) + b"\xff\xff\xff\xff\x07", "exceeds", "s", 10),
            (b"\x00" + struct.pack("<i", 7) + b"\x00\x05ab", "exceeds", "b", 7)]:   # 5 bytes, 2 left
        r = RowFileReader(io.BytesIO(build([raw_block([good, row])])), schema)
        assert r.get_row(0)["s"] == "hi"
        with pytest.raises(CorruptFileError, match=words) as ei:
            r.get_row(1)
        e = ei.value
        assert (e.field, e.row, e.block) == (field, 1, 0)
        assert e.offset == len(good) + offset


PLAIN = schema_of([("b", "BOOLEAN"), ("i8", "TINYINT"), ("i16", "SMALLINT"), ("i", "INT"), ("l", "BIGINT"),
                   ("f", "FLOAT"), ("d", "DOUBLE"), ("s", "STRING"), ("y", "BYTES"), ("c", "CHAR(2)")])


def _plain_row(rng, nulls):
    """One encoded row of PLAIN: its null bitmap (fields in ``nulls`` null), then each other field's value."""
    bits = sum(1 << i for i in nulls)
    out = struct.pack("<H", bits)
    values = [struct.pack("<B", int(rng.integers(0, 2))), struct.pack("<b", int(rng.integers(-128, 128))),
              struct.pack("<h", int(rng.integers(-2**15, 2**15))), struct.pack("<i", int(rng.integers(-2**31, 2**31))),
              struct.pack("<q", int(rng.integers(-2**63, 2**63))), struct.pack("<f", float(rng.normal())),
              struct.pack("<d", float(rng.normal())), b"\x05h\xc3\xa9lo", b"\x03\x00\xff\x80", b"\x02ab"]
    return out + b"".join(v for i, v in enumerate(values) if i not in nulls)


def _get_row(data, n, field_by_field):
    """get_row(n) of ``data`` as the row_values kernel reads it, or (``field_by_field``) as the general path does:
    the row, or the error's message, field, row, block and offset."""
    from paimon_engine.formats.row.reader import _SchemaFacts
    r = RowFileReader(io.BytesIO(data), PLAIN)
    if field_by_field:
        r._facts = _SchemaFacts(PLAIN)
        r._facts.row_kinds = None
    try:
        return r.get_row(n)
    except CorruptFileError as e:
        return (e.reason, e.field, e.row, e.block, e.offset)


def _same(a, b):
    """The same outcome: a row with the same fields in the same order, each of the same type and value (a float
    by its bits, so a NaN is the same NaN), or the same error."""
    if isinstance(a, dict) and isinstance(b, dict):
        def items(row):
            return [(k, type(v), struct.pack("<d", v) if type(v) is float else v) for k, v in row.items()]
        return items(a) == items(b)
    return a == b


def test_get_row_in_one_call_reads_every_row_as_field_by_field():
    """A row of integers, floats, booleans, text and bytes is read in one kernel call: every byte of a three-row block
    (rows, offsets, row count) set to other values gives, for each row, what reading it field by field gives: the
    same values, or the same error at the same field and offset."""
    rng = np.random.default_rng(3)
    rows = [_plain_row(rng, ()), _plain_row(rng, (0, 3, 7)), _plain_row(rng, (9, 4))]
    block = raw_block(rows)
    good = build([block])
    for n in range(3):
        got = _get_row(good, n, False)
        assert isinstance(got, dict) and _same(got, _get_row(good, n, True))
    assert _get_row(good, 1, False)["s"] is None and _get_row(good, 0, False)["s"] == "h\xe9lo"
    outcomes = set()
    for at in range(len(block) - 4):  # the row count itself is checked when the block is read
        for value in (0x00, 0x01, 0x02, 0x7F, 0x80, 0xFF, block[at] ^ 0x04):
            bad = bytearray(block)
            bad[at] = value
            data = build([bytes(bad)])
            for n in range(3):
                one, each = _get_row(data, n, False), _get_row(data, n, True)
                assert _same(one, each), (at, value, n, one, each)
                outcomes.add("ok" if isinstance(one, dict) else " ".join(one[0].split(" ")[:2]))
    assert len(outcomes) >= 8, outcomes  # the mutations reach most checks


def test_nested_counts_bounded():
    schema = schema_of([("a", "ARRAY<INT>")])
    data = build([raw_block([b"\x00\xff\xff\xff\xff\x07"])])   # 2**31-1 elements in 0 bytes
    with pytest.raises(CorruptFileError):
        RowFileReader(io.BytesIO(data), schema).read_all()
    data = build([raw_block([b"\x00\xff\xff\xff\x0f\x00"])])   # 2**31-1 elements, bitmap does not fit
    with pytest.raises(CorruptFileError):
        RowFileReader(io.BytesIO(data), schema).read_all()


def test_block_limit_is_configurable():
    data, _ = sample_file(block_size=4096)
    with pytest.raises(CorruptFileError, match="limit"):
        RowFileReader(io.BytesIO(data), SCHEMA, max_block_size=100)


def test_java_style_frames_without_content_size():
    block = raw_block([ROW, ROW])
    cctx = zstandard.ZstdCompressor(write_content_size=False)
    comp = cctx.compress(block)
    data = build([block])
    # swap in a frame without content size (same length bookkeeping)
    index = b""
    for arr in ([len(comp)], [len(block)], [0]):
        enc = encode_delta_varint(arr)
        index += encode_uvarint32(len(enc)) + enc
    footer = struct.pack("<qiqib3xI", 2, 1, len(comp), len(index), 1, 0x524F5753)
    assert read_one(comp + index + footer) == [{"x": 7}, {"x": 7}]
    assert data


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_corrupt_block_in_a_threaded_read_names_the_first_bad_block(threads):
    """Reads of many blocks run in parts on several threads; the error is the first bad block in file order,
    whichever thread meets it, and the other parts' work is discarded."""
    data, _ = sample_file(n=600, block_size=256)
    r = RowFileReader(io.BytesIO(data), SCHEMA)
    assert r.num_blocks >= 32
    bad = bytearray(data)
    late, early = r.num_blocks - 3, r.num_blocks // 4   # in the last part and in the first
    for b in (late, early):
        off = int(r.index.offsets[b])
        bad[off + 4:off + 12] = b"\xff" * 8        # inside the zstd frame header/data
    r = RowFileReader(io.BytesIO(bytes(bad)), SCHEMA, threads=threads)
    with pytest.raises(CorruptFileError) as ei:
        r.read_all()
    assert ei.value.block == early and ei.value.offset is not None
    with pytest.raises(CorruptFileError):
        r.take(np.arange(r.num_rows))


@pytest.mark.parametrize("kwargs", [
    dict(rows=2 ** 63 - 1),                                  # 4 * rows + 4 would wrap around
    dict(rows=2 ** 63 - 8),
    dict(rows=2 ** 62 + 3),
    dict(starts=[0, 2 ** 62], rows=2 ** 62 + 1),
    dict(starts=[0, -2 ** 63 + 1]),                          # a start that wraps the row-start differences
    dict(csizes=[2 ** 62, 2 ** 62, 2 ** 62, 2 ** 62]),       # sizes whose int64 sum wraps around
    dict(usizes=[2 ** 62, 9]),                               # c * 32768 would wrap around
    dict(usizes=[2 ** 63 - 1, 9]),
])
def test_footer_and_index_counts_near_int64_limits(kwargs):
    blocks = [raw_block([ROW, ROW]), raw_block([ROW])]
    if "csizes" in kwargs:
        blocks = blocks + blocks
        kwargs = dict(kwargs, starts=[0, 2, 3, 5])
    data = build(blocks, **kwargs)
    with pytest.raises(CorruptFileError) as ei:
        read_one(data)
    assert ei.value.path is not None and ei.value.offset is not None


def _decimal_row(type_text, unscaled):
    """A one-field row holding ``unscaled`` in the encoding of ``type_text`` (8-byte LE, or length + BE bytes)."""
    if int(type_text.split("(")[1].split(",")[0]) <= 18:
        return b"\x00" + struct.pack("<q", unscaled)
    n = 1
    while not -(1 << (8 * n - 1)) <= unscaled < (1 << (8 * n - 1)):
        n += 1
    return b"\x00" + bytes([n]) + unscaled.to_bytes(n, "big", signed=True)


@pytest.mark.parametrize("type_text", ["DECIMAL(4, 2)", "DECIMAL(18, 0)", "DECIMAL(20, 3)", "DECIMAL(38, 0)"])
@pytest.mark.parametrize("impl", ["compiled", "twin"])
def test_decimal_beyond_its_precision_is_corrupt(type_text, impl):
    """An unscaled value outside (-10**p, 10**p) has no DECIMAL(p, s) value: read_all, take, get_row and a nested
    value reject it with the field, row and byte offset, rather than return an Arrow array that is not valid."""
    p = int(type_text.split("(")[1].split(",")[0])
    edge = 10 ** p - 1
    good = [_decimal_row(type_text, v) for v in (edge, -edge, 0)]
    schema = schema_of([("x", type_text)])
    kernel = _speedups.twin("rowcodec") if impl == "twin" else _speedups.kernel("rowcodec")
    r = RowFileReader(io.BytesIO(build([raw_block(good)])), schema)
    r._kernel = kernel
    got = r.read_all().to_arrow()
    got.validate(full=True)
    assert [d.as_tuple().digits.count(9) for d in got.column(0).to_pylist()[:2]] == [p, p]
    for bad in (10 ** p, -10 ** p, (1 << 63) - 1 if p <= 18 else (1 << 127) - 1):
        data = build([raw_block(good[:1] + [_decimal_row(type_text, bad)])])
        r = RowFileReader(io.BytesIO(data), schema)
        r._kernel = kernel
        for read in (r.read_all, lambda: r.take([1]), lambda: r.get_row(1)):
            with pytest.raises(CorruptFileError, match="precision") as ei:
                read()
            e = ei.value
            assert (e.field, e.row, e.block) == ("x", 1, 0)
            assert e.offset == len(good[0]) + 1   # after row 0 and row 1's null bitmap
        assert r.read_all(columns=[]).num_rows == 2
    # inside an array (decoded value by value)
    nested = schema_of([("a", f"ARRAY<{type_text}>")])
    elem = _decimal_row(type_text, 10 ** p)[1:]
    data = build([raw_block([b"\x00\x01\x00" + elem])])
    with pytest.raises(CorruptFileError, match="precision") as ei:
        RowFileReader(io.BytesIO(data), nested).read_all()
    assert ei.value.field == "a" and ei.value.offset == 3


@pytest.mark.parametrize("impl", ["compiled", "twin"])
def test_time_of_day_outside_a_day_is_corrupt(tmp_path, impl, monkeypatch):
    from paimon_engine.types import parse_paimon_type
    k = _speedups.compiled("rowcodec") if impl == "compiled" else _speedups.twin("rowcodec")
    if k is None:
        pytest.skip("compiled kernels not built")
    monkeypatch.setitem(_speedups._loaded, "rowcodec", k)
    from paimon_engine.formats.row import writer
    schema = parse_paimon_type("ROW<t TIME(3), i INT>")
    # the writer refuses such values; bad bytes on disk are made by writing the raw milliseconds as they are
    monkeypatch.setattr(writer, "_time_millis", lambda arr, field: arr)
    for bad in (86_400_000, 1_056_966_304, -1):
        path = str(tmp_path / f"t{bad}.row")
        w = RowFileWriter(path, schema)
        w.write(pa.table({"t": pa.array([1000, None, bad], pa.time32("ms")), "i": pa.array([1, 2, 3], pa.int32())}))
        w.close()
        with pytest.raises(CorruptFileError, match="outside a day") as ei:
            RowFileReader(path, schema).read_all()
        assert ei.value.field == "t" and ei.value.row == 2
    # the last millisecond of the day is a valid value
    path = str(tmp_path / "ok.row")
    w = RowFileWriter(path, schema)
    w.write(pa.table({"t": pa.array([86_399_999], pa.time32("ms")), "i": pa.array([1], pa.int32())}))
    w.close()
    got = RowFileReader(path, schema).read_all().to_arrow()
    got.validate(full=True)
    assert got.column("t").cast(pa.int32()).to_pylist() == [86_399_999]


def test_the_writer_refuses_a_time_outside_a_day(tmp_path):
    from paimon_engine.errors import SchemaError
    from paimon_engine.types import parse_paimon_type
    schema = parse_paimon_type("ROW<t TIME(3)>")
    w = RowFileWriter(str(tmp_path / "t.row"), schema)
    with pytest.raises(SchemaError, match="outside a day"):
        w.write(pa.table({"t": pa.array([5, None, 86_400_000], pa.time32("ms"))}))
