"""rowcodec kernel: compiled and twin agree on encoding, decoding and every failure status/location."""
import io
import itertools
import struct

import numpy as np
import pyarrow as pa
import pytest
import zstandard

from paimon_engine import _speedups
from paimon_engine._pykernels import status
from paimon_engine.formats.row import RowFileReader, RowFileWriter
from paimon_engine.formats.row import values as V
from paimon_engine.types import parse_paimon_type, DataField, RowType

from .impls import implementations

IMPLS = implementations("rowcodec")

SCHEMA = RowType([DataField(i, n, parse_paimon_type(t)) for i, (n, t) in enumerate([
    ("b", "BOOLEAN"), ("i8", "TINYINT"), ("i16", "SMALLINT"), ("i", "INT"), ("l", "BIGINT"), ("f", "FLOAT"),
    ("d", "DOUBLE"), ("s", "STRING"), ("dc", "DECIMAL(12, 3)"), ("db", "DECIMAL(30, 3)"), ("t3", "TIMESTAMP(3)"),
    ("t9", "TIMESTAMP(9)"), ("a", "ARRAY<STRING>"), ("m", "MAP<INT NOT NULL, STRING>")])])


def block_bytes(n=30):
    rng = np.random.default_rng(5)
    import decimal
    cols = {
        "b": [bool(x) for x in rng.integers(0, 2, n)], "i8": rng.integers(-128, 127, n).astype(np.int8),
        "i16": rng.integers(-999, 999, n).astype(np.int16), "i": pa.array(rng.integers(-9, 9, n).astype(np.int32), mask=np.arange(n) % 6 == 1),
        "l": rng.integers(-2**62, 2**62, n), "f": rng.random(n).astype(np.float32), "d": rng.random(n),
        "s": [None if i % 4 == 0 else "x" * i for i in range(n)],
        "dc": pa.array([decimal.Decimal(i) / 8 for i in range(n)], pa.decimal128(12, 3)),
        "db": pa.array([None if i % 3 else decimal.Decimal(-i * 10**20) / 8 for i in range(n)], pa.decimal128(30, 3)),
        "t3": pa.array(rng.integers(-10**12, 10**12, n), pa.timestamp("ms"), mask=np.arange(n) % 4 == 2),
        "t9": pa.array(rng.integers(-10**18, 10**18, n), pa.timestamp("ns")),
        "a": [[None, "q"] if i % 2 else [] for i in range(n)],
        "m": pa.array([[(1, "v")] if i % 5 else None for i in range(n)], pa.map_(pa.int32(), pa.string())),
    }
    return first_block(SCHEMA, cols), n


def first_block(schema, cols):
    """The decompressed first (only) block of a .row file of ``cols`` written with ``schema``."""
    buf = io.BytesIO()
    with RowFileWriter(buf, schema, block_size=1 << 20) as w:
        w.write(pa.table(cols))
    data = buf.getvalue()
    r = RowFileReader(io.BytesIO(data), schema)
    return zstandard.ZstdDecompressor().decompress(data[:int(r.index.compressed_sizes[0])])


def outs_for(n, blen, project):
    outs = []
    for i, f in enumerate(SCHEMA.fields):
        if i not in project:
            outs.append(None)
            continue
        k = V.kind_of(f.type)
        val = np.zeros((n + 7) // 8, np.uint8)
        if k in V.NESTED_KINDS:
            outs.append((V.O_SPAN, 0, val, np.zeros(2 * n, np.int64), None, None))
        elif k == V.K_BOOL:
            outs.append((k, 0, val, np.zeros((n + 7) // 8, np.uint8), None, None))
        elif k == V.K_BYTES:
            outs.append((k, 0, val, None, np.zeros(n + 1, np.int32), np.zeros(blen, np.uint8)))
        elif k in (V.K_DEC_COMPACT, V.K_DEC_BIG):
            outs.append((k, 10 ** f.type.precision, val, np.zeros(16 * n, np.uint8), None, None))
        elif k == V.K_TS_NANO:
            outs.append((k, 1_000_000, val, np.zeros(n, np.int64), None, None))
        else:
            outs.append((k, 0, val, np.zeros(8 * n, np.uint8), None, None))
    return outs


def run(kernel, block, n, project, rows=None):
    outs = outs_for(n if rows is None else len(rows), len(block), project)
    datapos = np.zeros(len(outs), np.int64)
    state = np.zeros(3, np.int64)
    r = kernel.decode_block(block, n, V.program(SCHEMA), outs, rows, n if rows is None else len(rows), 0,
                            datapos, state)
    # a bytes column's data is compared up to its write position (past it, the buffer is scratch space)
    flat = [None if o is None else [None if x is None else np.asarray(x)[:datapos[i]].tobytes() if j == 3 else
                                    np.asarray(x).tobytes() for j, x in enumerate(o[2:])]
            for i, o in enumerate(outs)]
    return r, (state.tolist() if r < 0 else None), flat, datapos.tolist()


@pytest.mark.parametrize("kernel", IMPLS)
def test_twin_agrees_on_valid_blocks(kernel):
    block, n = block_bytes()
    twin = _speedups.twin("rowcodec")
    for project in (range(14), [7], [], [12, 13, 0], [9, 11]):
        assert run(kernel, block, n, set(project)) == run(twin, block, n, set(project))
    rows = np.array([5, 0, 5, 29], np.int32)
    assert run(kernel, block, n, set(range(14)), rows) == run(twin, block, n, set(range(14)), rows)
    assert run(kernel, block, n, set(range(14)), rows)[0] == 4


@pytest.mark.parametrize("kernel", IMPLS)
def test_twin_agrees_on_corrupt_blocks(kernel):
    block, n = block_bytes()
    twin = _speedups.twin("rowcodec")
    rng = np.random.default_rng(11)
    failures = 0
    for trial in range(300):
        bad = bytearray(block)
        for _ in range(int(rng.integers(1, 4))):
            bad[int(rng.integers(0, len(bad) - 4))] ^= 1 << int(rng.integers(8))
        project = set(rng.choice(14, int(rng.integers(0, 15)), replace=False).tolist())
        a = run(kernel, bytes(bad), n, project)
        assert a == run(twin, bytes(bad), n, project)
        failures += a[0] < 0
    assert failures > 20


@pytest.mark.parametrize("kernel", IMPLS)
def test_decode_rejects_bad_arguments(kernel):
    block, n = block_bytes()
    st = np.zeros(3, np.int64)
    dp = np.zeros(14, np.int64)
    outs = outs_for(n, len(block), set(range(14)))
    # an output too small for the rows asked for
    small = [None] * 14
    small[3] = (V.K_I32, 0, np.zeros(4, np.uint8), np.zeros(n - 1, np.int32), None, None)
    assert kernel.decode_block(block, n, V.program(SCHEMA), small, None, n, 0, dp, st) == status.BAD_LENGTH
    # more rows than the block holds
    assert kernel.decode_block(block[:40], 100, V.program(SCHEMA), outs, None, n, 0, dp, st) == status.BAD_LENGTH
    # a selected row out of range
    rows = np.array([n], np.int32)
    assert kernel.decode_block(block, n, V.program(SCHEMA), outs, rows, 1, 0, dp, st) == status.OUT_OF_RANGE


@pytest.mark.parametrize("kernel", IMPLS)
def test_encode_stops_at_the_java_flush_point(kernel):
    nulls = np.array([0, 1, 0, 0], np.uint8)
    vals = np.arange(4, dtype=np.int64)
    cols = [(V.K_I64, nulls, vals, None, None)]
    out = np.zeros(100, np.uint8)
    offs = np.zeros(10, np.int32)
    state = np.zeros(3, np.int64)
    # row 0: 9 bytes -> 9 + 4 + 4 = 17 < 18; row 1 (null): 10 bytes -> 10 + 8 + 4 = 22 >= 18: flush after row 1
    assert kernel.encode_rows(cols, 0, 4, out, offs, state, 18) == 2
    assert state.tolist() == [10, 2, 2]
    assert out[:10].tobytes() == b"\x00" + struct.pack("<q", 0) + b"\x01"
    assert offs[:2].tolist() == [0, 9]


@pytest.mark.parametrize("kernel", IMPLS)
def test_skip_values(kernel):
    prog = V.program(RowType([DataField(0, "a", parse_paimon_type("ARRAY<STRING>"))]))
    buf = b"\x02\x01\x01q"   # two elements, first null, second "q"
    assert kernel.skip_values(buf, 0, len(buf), prog, 0) == 4
    assert kernel.skip_values(buf, 0, 3, prog, 0) == status.BAD_LENGTH
    assert kernel.skip_values(b"\x80\x80", 0, 2, prog, 0) == status.TRUNCATED


def _raw_block(payloads):
    offs = np.cumsum([0] + [len(p) for p in payloads[:-1]]).tolist() if payloads else []
    return b"".join(payloads) + struct.pack("<%di" % len(offs), *offs) + struct.pack("<i", len(offs))


UTF8_CASES = [b"", b"plain", "é😀€".encode(), ("x" * 20 + "é").encode(), b"\xc3\x28", b"\xc0\x80",
              b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xe2\x82", b"a" * 17 + b"\xff",
              b"\xef\xbf\xbf", b"\xf0\x90\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xe0\x9f\xbf", b"\x80"]


@pytest.mark.parametrize("kernel", IMPLS)
@pytest.mark.parametrize("value", UTF8_CASES)
def test_utf8_is_checked_only_for_string_columns(kernel, value):
    prog = V.program(RowType([DataField(0, "s", parse_paimon_type("STRING"))]))
    block = _raw_block([b"\x00\x01z", b"\x00" + bytes([len(value)]) + value])
    try:
        value.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    for check in (1, 0):
        outs = [(V.K_BYTES, check, np.zeros(1, np.uint8), None, np.zeros(3, np.int32), np.zeros(64, np.uint8))]
        state = np.zeros(3, np.int64)
        dp = np.zeros(1, np.int64)
        r = kernel.decode_block(block, 2, prog, outs, None, 2, 0, dp, state)
        if check and not valid:
            assert r == status.INVALID_UTF8 and state.tolist() == [1, 0, 4]
        else:
            assert r == 2 and outs[0][5][:dp[0]].tobytes() == b"z" + value


@pytest.mark.parametrize("kernel", IMPLS)
def test_null_values_are_written_as_zeros(kernel):
    """Outputs may start uninitialised: every fixed-width value of a null row is written (as zero)."""
    block, n = block_bytes()
    outs = outs_for(n, len(block), set(range(14)))
    garbage = []
    for o in outs:
        if o[0] not in (V.O_SPAN, V.K_BOOL, V.K_BYTES):
            o[3][:] = 0xAB
        garbage.append(o)
    dp = np.zeros(14, np.int64)
    st = np.zeros(3, np.int64)
    assert kernel.decode_block(block, n, V.program(SCHEMA), garbage, None, n, 0, dp, st) == n
    clean = run(_speedups.twin("rowcodec"), block, n, set(range(14)))[2]
    width = {V.K_I8: 1, V.K_I16: 2, V.K_I32: 4, V.K_F32: 4, V.K_I64: 8, V.K_F64: 8, V.K_TS_MILLIS: 8,
             V.K_TS_NANO: 8, V.K_DEC_COMPACT: 16, V.K_DEC_BIG: 16}
    for f, o in enumerate(garbage):
        if o[0] in width:
            w = width[o[0]] * n
            assert np.asarray(o[3]).view(np.uint8)[:w].tobytes() == clean[f][1][:w]


@pytest.mark.parametrize("kernel", IMPLS)
def test_block_decoder_writes_parts_of_one_output(kernel):
    """A decoder per part (disjoint rows, disjoint data ranges) fills one set of buffers like one call."""
    block, n = block_bytes()
    whole = run(kernel, block, n, set(range(14)))
    assert whole[0] == n
    outs = outs_for(n, 2 * len(block), set(range(14)))
    prog = V.program(SCHEMA)
    cut = 16
    dp1, dp2 = np.zeros(14, np.int64), np.full(14, len(block), np.int64)
    st = np.zeros(3, np.int64)
    d1 = kernel.BlockDecoder(prog, outs, n, dp1, st)
    d2 = kernel.BlockDecoder(prog, outs, n, dp2, st)
    assert d2.decode(block, n, np.arange(cut, n, dtype=np.int32), n - cut, cut) == n - cut
    assert d1.decode(block, n, None, cut, 0) == cut
    s = 7  # the string column: move part 2's bytes down behind part 1's and shift its offsets
    data, offs = outs[s][5], outs[s][4]
    end = int(dp1[s])
    data[end:end + int(dp2[s]) - len(block)] = data[len(block):int(dp2[s])].copy()
    offs[cut + 1:] -= len(block) - end
    assert np.asarray(offs).tobytes() == whole[2][s][2]
    assert data[:int(dp2[s]) - len(block) + end].tobytes() == whole[2][s][3]
    for f in (0, 3, 6, 9, 12):
        assert np.asarray(outs[f][3]).tobytes() == whole[2][f][1]
    # a decoder checks its buffers once, and every call against its capacity
    assert kernel.BlockDecoder(prog, outs, n + 1, dp1, st).status == status.BAD_LENGTH
    assert d1.decode(block, n, None, n, 1) == status.BAD_LENGTH


@pytest.mark.parametrize("kernel", IMPLS)
def test_decimal_bound_is_checked_per_value(kernel):
    """A decimal output carries its bound 10**precision; a value outside (-bound, bound) is OUT_OF_RANGE at the
    field's offset, and a missing or impossible bound is a bad argument."""
    for type_text, kind, enc in (("DECIMAL(3, 1)", V.K_DEC_COMPACT, lambda u: struct.pack("<q", u)),
                                 ("DECIMAL(38, 2)", V.K_DEC_BIG,
                                  lambda u: bytes([16]) + u.to_bytes(16, "big", signed=True))):
        prog = V.program(RowType([DataField(0, "x", parse_paimon_type(type_text))]))
        p = int(type_text[8:10].strip(","))
        for u, ok in ((10 ** p - 1, True), (-(10 ** p - 1), True), (10 ** p, False), (-(10 ** p), False)):
            block = _raw_block([b"\x00" + enc(7), b"\x00" + enc(u)])
            outs = [(kind, 10 ** p, np.zeros(1, np.uint8), np.zeros(32, np.uint8), None, None)]
            state = np.zeros(3, np.int64)
            r = kernel.decode_block(block, 2, prog, outs, None, 2, 0, np.zeros(1, np.int64), state)
            if ok:
                assert r == 2 and int.from_bytes(outs[0][3][16:].tobytes(), "little", signed=True) == u
            else:
                assert r == status.OUT_OF_RANGE and state.tolist() == [1, 0, len(enc(7)) + 2]
        for bound in (0, -5, 10 ** 19 if kind == V.K_DEC_COMPACT else 10 ** 39, "10", None):
            outs = [(kind, bound, np.zeros(1, np.uint8), np.zeros(32, np.uint8), None, None)]
            st = np.zeros(3, np.int64)
            assert kernel.BlockDecoder(prog, outs, 2, np.zeros(1, np.int64), st).status == status.BAD_VALUE
            assert kernel.decode_block(block, 2, prog, outs, None, 2, 0, np.zeros(1, np.int64), st) \
                == status.BAD_VALUE


def _bytes_column(values):
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([0 if v is None else len(v) for v in values])
    data = np.frombuffer(b"".join(v for v in values if v is not None) or b"\0", dtype=np.uint8)
    nulls = np.array([v is None for v in values], dtype=np.uint8)
    return offsets, data, nulls


def _expected_min_max(values):
    present = [(v, i) for i, v in enumerate(values) if v is not None]
    if not present:
        return 0, -1, -1
    lo = min(v for v, _ in present)
    hi = max(v for v, _ in present)
    return len(present), values.index(lo), values.index(hi)


@pytest.mark.parametrize("kernel", IMPLS)
def test_bytes_min_max_orders_bytes_and_prefixes(kernel):
    """Unsigned byte order with prefixes first, around the 8- and 16-byte words the kernel compares first
    (long values with equal first words, zero bytes, values at the very end of the data), first row on ties."""
    rng = np.random.default_rng(17)
    alphabet = [b"\0", b"\x01", b"a", b"b", b"\x7f", b"\x80", b"\xff"]
    for trial in range(300):
        n = int(rng.integers(1, 25))
        stem = bytes(rng.choice([0, 97, 255], size=int(rng.integers(0, 20))).astype(np.uint8))
        values = []
        for _ in range(n):
            if rng.random() < 0.15:
                values.append(None)
                continue
            cut = int(rng.integers(0, len(stem) + 1))
            tail = b"".join(alphabet[j] for j in rng.integers(0, len(alphabet), int(rng.integers(0, 4))))
            values.append(stem[:cut] + tail)
        offsets, data, nulls = _bytes_column(values)
        out = np.full(2, -7, dtype=np.int64)
        got = kernel.bytes_min_max(offsets, data, nulls if trial % 2 else None if None not in values else nulls,
                                   n, out)
        assert (got, int(out[0]), int(out[1])) == _expected_min_max(values), values


@pytest.mark.parametrize("kernel", IMPLS)
def test_bytes_min_max_orders_long_values_past_their_first_16_bytes(kernel):
    """Values longer than 16 bytes whose first 16 bytes are equal are ordered by the bytes after them: a
    difference far past byte 16, a value that is a prefix of another, a zero byte after the shared part."""
    stem = b"https://example.com/path/"
    values = [stem + b"b", stem + b"a" * 30, stem + b"a" * 30 + b"\0", stem, stem + b"a" * 29 + b"\xff",
              stem + b"a" * 30, stem[:16], stem[:16] + b"\0"]
    rng = np.random.default_rng(23)
    for trial in range(40):
        order = values if trial == 0 else [values[i] for i in rng.permutation(len(values))]
        offsets, data, nulls = _bytes_column(order)
        out = np.full(2, -7, dtype=np.int64)
        got = kernel.bytes_min_max(offsets, data, None, len(order), out)
        assert (got, int(out[0]), int(out[1])) == _expected_min_max(order), order


@pytest.mark.parametrize("kernel", IMPLS)
def test_bytes_min_max_rejects_bad_offsets(kernel):
    offsets, data, nulls = _bytes_column([b"abc", b"de"])
    out = np.zeros(2, dtype=np.int64)
    assert kernel.bytes_min_max(offsets, data, None, 2, out) == 2
    bad = offsets.copy()
    bad[2] = len(data) + 1
    assert kernel.bytes_min_max(bad, data, None, 2, out) == status.BAD_LENGTH
    bad = offsets.copy()
    bad[1] = 4
    bad[2] = 3
    assert kernel.bytes_min_max(bad, data, None, 2, out) == status.BAD_LENGTH
    assert kernel.bytes_min_max(offsets, data, None, 3, out) == status.BAD_LENGTH
    assert kernel.bytes_min_max(offsets, data, nulls[:1], 2, out) == status.BAD_LENGTH
    assert kernel.bytes_min_max(offsets, data, np.ones(2, dtype=np.uint8), 2, out) == 0
    assert list(out) == [-1, -1]


_NUM_FORMATS = {V.K_I8: "b", V.K_I16: "h", V.K_I32: "i", V.K_I64: "q", V.K_F32: "f", V.K_F64: "d"}


def _expected_numeric_min_max(kind, values):
    """(count, packed smallest + largest) in plain Python: NaN and None skipped, -0.0 before 0.0."""
    import math
    present = [v for v in values if v is not None and v == v]
    if not present:
        return 0, None
    key = (lambda v: (v, math.copysign(1.0, v) > 0)) if kind in (V.K_F32, V.K_F64) else (lambda v: v)
    return len(present), struct.pack("<2" + _NUM_FORMATS[kind], min(present, key=key), max(present, key=key))


@pytest.mark.parametrize("kernel", IMPLS)
def test_numeric_min_max_of_every_width(kernel):
    """Integers at their type's limits, floats with NaN, infinities and both zeros, nulls, values at odd
    (unaligned) byte positions: the count of values compared and the two extremes in the column's width."""
    rng = np.random.default_rng(23)
    floats = [0.0, -0.0, float("nan"), 1.5, -2.25, float("inf"), float("-inf"), 3e30, -7.0]
    for kind, fmt in _NUM_FORMATS.items():
        w = struct.calcsize(fmt)
        for trial in range(150):
            n = int(rng.integers(0, 30))
            if kind in (V.K_F32, V.K_F64):
                vals = [floats[int(j)] for j in rng.integers(0, len(floats), n)]
            else:
                lo, hi = -(1 << (8 * w - 1)), (1 << (8 * w - 1)) - 1
                pool = [lo, hi, 0, -1, 1]
                vals = [pool[int(j)] if j < len(pool) else int(rng.integers(lo, hi, endpoint=True))
                        for j in rng.integers(0, len(pool) + 3, n)]
            nulls = (rng.random(n) < 0.25).astype(np.uint8)
            use_nulls = trial % 3 != 0
            raw = np.frombuffer(b"\0" + struct.pack(f"<{n}{fmt}", *vals), np.uint8)[1:]   # unaligned start
            out = np.full(16, 0xAB, np.uint8)
            got = kernel.numeric_min_max(raw, kind, nulls if use_nulls else None, n, out)
            present = [None if use_nulls and nulls[i] else v for i, v in enumerate(vals)]
            count, packed = _expected_numeric_min_max(kind, present)
            assert got == count, (kind, present)
            if count:
                assert out[:2 * w].tobytes() == packed, (kind, present)
            else:
                assert (out == 0xAB).all()


@pytest.mark.parametrize("kernel", IMPLS)
def test_numeric_min_max_rejects_short_arrays_and_other_kinds(kernel):
    raw = np.arange(16, dtype=np.uint8)
    out = np.zeros(16, np.uint8)
    assert kernel.numeric_min_max(raw, V.K_I64, None, 2, out) == 2
    assert kernel.numeric_min_max(raw, V.K_I64, None, 3, out) == status.BAD_LENGTH
    assert kernel.numeric_min_max(raw, V.K_I32, np.zeros(3, np.uint8), 4, out) == status.BAD_LENGTH
    assert kernel.numeric_min_max(raw, V.K_I64, None, 1, out[:15]) == status.BAD_LENGTH
    assert kernel.numeric_min_max(raw, V.K_I64, None, -1, out) == status.BAD_LENGTH
    assert kernel.numeric_min_max(raw, V.K_BOOL, None, 1, out) == status.BAD_VALUE
    assert kernel.numeric_min_max(raw, V.K_BYTES, None, 1, out) == status.BAD_VALUE
    assert kernel.numeric_min_max(raw, V.K_I8, np.ones(16, np.uint8), 16, out) == 0


def _random_encode_column(rng, kind, n):
    """A kernel descriptor ``(kind, nulls, values, offsets, data)`` of ``n`` random values of ``kind``."""
    nulls = (rng.random(n) < rng.choice([0.0, 0.1, 0.9])).astype(np.uint8) if rng.random() < 0.7 else None
    if kind in (V.K_BYTES, V.K_RAW):
        lens = rng.choice([0, 1, 3, 4, 7, 8, 12, 16, 17, 40, 130, 20000], n,
                          p=[.1, .1, .1, .1, .1, .1, .15, .1, .05, .05, .04, .01])
        data = np.frombuffer(bytes(rng.integers(0, 256, int(lens.sum())).astype(np.uint8)) or b"\0", np.uint8)
        return (kind, nulls, None, np.concatenate([[0], np.cumsum(lens)]).astype(np.int64), data)
    if kind == V.K_TS_NANO:
        nanos = rng.choice([0, 1, 127, 128, 999_999], n).astype(np.int64)
        return (kind, nulls, rng.integers(0, 256, 8 * n).astype(np.uint8), nanos, None)
    if kind == V.K_DEC_BIG:
        raw = rng.integers(0, 256, (n, 16)).astype(np.uint8)
        for i in range(n):   # short values of either sign: the minimal encoding keeps 1..16 bytes
            k = int(rng.integers(0, 16))
            raw[i, 16 - k:] = 0xFF if raw[i, 15 - k] & 0x80 else 0
        return (kind, nulls, raw.reshape(-1), None, None)
    width = {V.K_BOOL: 1, V.K_I8: 1, V.K_I16: 2, V.K_I32: 4, V.K_I64: 8, V.K_F64: 8}[kind]
    top = 2 if kind == V.K_BOOL and rng.random() < 0.5 else 256
    return (kind, nulls, rng.integers(0, top, width * n).astype(np.uint8), None, None)


def _encode_all(impl, cols, n, block_size, cap, max_rows):
    """Every row encoded in calls of ``impl.encode_rows``: the blocks (bytes + row offsets), growing ``out`` or
    ``row_offsets`` when a call stops for room, and the list of (rows taken, state) of every call."""
    out = np.zeros(cap, np.uint8)
    offs = np.zeros(max_rows, np.int32)
    state = np.zeros(3, np.int64)
    blocks, calls, r = [], [], 0
    while r < n:
        k = impl.encode_rows(cols, r, n, out, offs, state, block_size)
        assert k >= 0
        calls.append((k, state.tolist()))
        r += k
        if state[2] == 1:
            if state[1] >= len(offs):
                offs = np.concatenate([offs, np.zeros_like(offs)])
            else:
                out = np.concatenate([out, np.zeros_like(out)])
        if state[2] == 2 or r == n:
            blocks.append((out[:state[0]].tobytes(), offs[:state[1]].tolist()))
            state[:] = 0
    return blocks, calls


@pytest.mark.parametrize("kernel", IMPLS)
def test_encode_agrees_with_the_twin_on_every_kind_and_chunk(kernel):
    """Schemas of 1 to 70 columns of every kind the encoder takes (null bitmaps of one to nine bytes), up to
    700 rows (several of the compiled kernel's row chunks), small and large blocks, output buffers and row
    offset arrays that fill up mid-block: the same calls, states, bytes and row offsets as the twin."""
    twin = _speedups.twin("rowcodec")
    rng = np.random.default_rng(31)
    kinds = [V.K_BOOL, V.K_I8, V.K_I16, V.K_I32, V.K_I64, V.K_F64, V.K_BYTES, V.K_RAW, V.K_TS_NANO, V.K_DEC_BIG]
    for trial in range(40):
        ncols = int(rng.choice([1, 3, 8, 9, 17, 70]))
        n = int(rng.integers(0, 700))
        cols = [_random_encode_column(rng, int(rng.choice(kinds)), n) for _ in range(ncols)]
        block_size = int(rng.choice([64, 1000, 65536]))
        cap = int(rng.choice([64, 512, 4096, 1 << 20]))
        max_rows = int(rng.choice([3, 64, 100_000]))
        got = _encode_all(kernel, cols, n, block_size, cap, max_rows)
        assert got == _encode_all(twin, cols, n, block_size, cap, max_rows), (trial, ncols, n)
        assert sum(len(offs) for _, offs in got[0]) == n


@pytest.mark.parametrize("kernel", IMPLS)
def test_string_offsets_may_be_int32_or_int64(kernel):
    """A bytes column's offsets as an Arrow string array holds them (int32) or as int64: the same blocks, row
    offsets and bounds either way; int32 offsets one short of n + 1 are BAD_LENGTH."""
    rng = np.random.default_rng(41)
    for trial in range(30):
        n = int(rng.integers(1, 600))
        cols64 = [_random_encode_column(rng, V.K_BYTES, n), _random_encode_column(rng, V.K_I32, n),
                  _random_encode_column(rng, V.K_BYTES, n)]
        cols32 = [(k, nl, v, o.astype(np.int32) if k == V.K_BYTES else o, d) for k, nl, v, o, d in cols64]
        block_size = int(rng.choice([64, 1000, 65536]))
        assert _encode_all(kernel, cols32, n, block_size, 4096, 64) == _encode_all(kernel, cols64, n, block_size,
                                                                                   4096, 64)
        for (_, nulls, _, o64, data), (_, _, _, o32, _) in zip(cols64[::2], cols32[::2]):
            a, b = np.full(2, -7, dtype=np.int64), np.full(2, -7, dtype=np.int64)
            assert kernel.bytes_min_max(o32, data, nulls, n, a) == kernel.bytes_min_max(o64, data, nulls, n, b)
            assert a.tolist() == b.tolist()
    short = (V.K_BYTES, None, None, np.zeros(3, np.int32), np.zeros(1, np.uint8))
    out, offs, state = np.zeros(64, np.uint8), np.zeros(8, np.int32), np.zeros(3, np.int64)
    assert kernel.encode_rows([short], 0, 3, out, offs, state, 1000) == status.BAD_LENGTH
    assert kernel.encode_rows([short], 0, 2, out, offs, state, 1000) == 2


@pytest.mark.parametrize("kernel", IMPLS)
def test_finish_block_writes_row_offsets_and_count_after_the_rows(kernel):
    """The trailer goes after the rows and the state is reset; no room leaves the state as it was (NEED_MORE);
    a state that does not fit the arrays is BAD_LENGTH."""
    offsets = np.array([0, 3, 70000, 2**31 - 1, 5], np.int32)
    out = np.full(40, 0xEE, np.uint8)
    state = np.array([7, 4, 2], np.int64)
    assert kernel.finish_block(out, offsets, state) == 7 + 4 * 4 + 4
    assert out[:7].tolist() == [0xEE] * 7 and out[27:].tolist() == [0xEE] * 13
    assert out[7:27].tobytes() == struct.pack("<5i", 0, 3, 70000, 2**31 - 1, 4)
    assert state.tolist() == [0, 0, 0]
    out = np.zeros(27, np.uint8)
    for size, want in ((27, 27), (26, status.NEED_MORE)):
        state = np.array([7, 4, 2], np.int64)
        assert kernel.finish_block(out[:size], offsets, state) == want
        assert state.tolist() == ([0, 0, 0] if want > 0 else [7, 4, 2])
    for bad in ([-1, 0, 0], [28, 0, 0], [0, -1, 0], [0, 6, 0], [0, 0]):
        state = np.array(bad, np.int64)
        assert kernel.finish_block(out, offsets, state) == status.BAD_LENGTH
        assert state.tolist() == bad
    state = np.array([23, 0, 2], np.int64)
    assert kernel.finish_block(out, offsets, state) == 27
    assert out[23:27].tobytes() == bytes(4)


@pytest.mark.parametrize("kernel", IMPLS)
def test_encode_rejects_kinds_it_does_not_encode(kernel):
    fine = (V.K_I32, None, np.zeros(4, np.uint8), None, None)
    for kind in (V.K_ARRAY, V.K_MAP, V.K_ROW, V.K_VARIANT, 0, 99):
        state = np.zeros(3, np.int64)
        got = kernel.encode_rows([fine, (kind, None, np.zeros(16, np.uint8), None, None)], 0, 1,
                                 np.zeros(64, np.uint8), np.zeros(4, np.int32), state, 1 << 20)
        assert got == status.BAD_VALUE and state.tolist() == [0, 0, 0]


@pytest.mark.parametrize("kernel", IMPLS)
def test_encode_and_finish_take_any_writable_buffer(kernel):
    """NumPy arrays and other buffers (bytearray, array.array) give the same block."""
    import array
    cols = [(V.K_I32, np.array([0, 1], np.uint8), np.arange(8, dtype=np.uint8), None, None),
            (V.K_BYTES, None, None, np.array([0, 2, 5], np.int64), np.frombuffer(b"abcde", np.uint8))]
    blocks = []
    for wrap in (lambda a: a, lambda a: bytearray(a.tobytes()) if a.dtype == np.uint8 else
                 array.array({np.dtype(np.int32): "i", np.dtype(np.int64): "q"}[a.dtype], a.tolist())):
        out, offs, state = wrap(np.zeros(64, np.uint8)), wrap(np.zeros(4, np.int32)), wrap(np.zeros(3, np.int64))
        assert kernel.encode_rows(cols, 0, 2, out, offs, state, 1 << 20) == 2
        total = kernel.finish_block(out, offs, state)
        assert list(state) == [0, 0, 0]
        blocks.append(bytes(out[:total]))
    assert blocks[0] == blocks[1]
    assert blocks[0] == (b"\0" + bytes([0, 1, 2, 3]) + b"\x02ab" + b"\x01" + b"\x03cde"
                         + struct.pack("<3i", 0, 8, 2))


@pytest.mark.parametrize("kernel", IMPLS)
def test_encode_agrees_with_the_twin_on_strings_near_every_buffer_end(kernel):
    """Strings of 0..40 bytes, the last ones ending exactly at the end of their data, into output buffers that
    end at the kernel's worst-case row size (a short value's 16-byte move must not run past either buffer),
    with every fixed width beside them: the same bytes, row offsets and state as the twin."""
    twin = _speedups.twin("rowcodec")
    rng = np.random.default_rng(21)
    for trial in range(60):
        n = int(rng.integers(1, 12))
        lens = rng.integers(0, 41, n)
        data = np.frombuffer(bytes(rng.integers(0, 256, int(lens.sum())).astype(np.uint8)) or b"\0", np.uint8)
        offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        nulls = (rng.random(n) < 0.2).astype(np.uint8)
        cols = [(V.K_BYTES, nulls if trial % 2 else None, None, offsets, data),
                (V.K_I8, None, rng.integers(0, 256, n).astype(np.uint8), None, None),
                (V.K_I16, nulls, rng.integers(0, 256, 2 * n).astype(np.uint8), None, None),
                (V.K_I32, None, rng.integers(0, 256, 4 * n).astype(np.uint8), None, None),
                (V.K_BOOL, None, rng.integers(0, 2, n).astype(np.uint8), None, None),
                (V.K_I64, nulls, rng.integers(0, 256, 8 * n).astype(np.uint8), None, None)]
        worst = int(lens.sum()) + 22 * n   # the compiled kernel's room check counts 5 bytes per length
        for cap in (worst, worst + 7, 4096):
            got = []
            for impl in (kernel, twin):
                out = np.zeros(cap, np.uint8)
                offs = np.zeros(n + 1, np.int32)
                state = np.zeros(3, np.int64)
                k = impl.encode_rows(cols, 0, n, out, offs, state, 1 << 20)
                got.append((k, state.tolist(), out[:int(state[0])].tobytes(), offs[:int(state[1])].tolist()))
            assert got[0] == got[1]


FLAT = RowType([DataField(i, n, parse_paimon_type(t)) for i, (n, t) in enumerate([
    ("i8", "TINYINT"), ("s", "STRING"), ("l", "BIGINT"), ("i16", "SMALLINT"), ("bin", "BYTES"), ("i", "INT"),
    ("d", "DOUBLE"), ("f", "FLOAT"), ("dt", "DATE"), ("t3", "TIMESTAMP(3)"), ("s2", "STRING")])])


def flat_block(n=200, plain=False):
    """A block of a schema of fixed-width numbers and strings only: nulls in some rows, strings of 0 to 300
    bytes (lengths of one and two varint bytes), ASCII and not. ``plain``: a block of rows without nulls and
    of short ASCII strings only."""
    rng = np.random.default_rng(3)
    words = ["", "a", "ascii-16-bytes!!", "seventeen bytes!!", "é", "日本語テキスト", "x" * 127, "y" * 128,
             "z" * 300, "mixed ascii then ü"]
    if plain:
        words = ["", "a", "ascii-16-bytes!!", "twelve bytes"]
    cols = {
        "i8": pa.array(rng.integers(-128, 127, n).astype(np.int8), mask=np.arange(n) % 7 == 3),
        "s": [None if i % 5 == 1 else words[i % len(words)] for i in range(n)],
        "l": rng.integers(-2**62, 2**62, n), "i16": rng.integers(-999, 999, n).astype(np.int16),
        "bin": [None if i % 11 == 2 else bytes(rng.integers(0, 256, i % 40).astype(np.uint8)) for i in range(n)],
        "i": pa.array(rng.integers(-9, 9, n).astype(np.int32), mask=np.arange(n) % 10 == 9),
        "d": rng.random(n), "f": rng.random(n).astype(np.float32),
        "dt": pa.array(rng.integers(0, 20000, n).astype(np.int32), pa.date32()),
        "t3": pa.array(rng.integers(-10**12, 10**12, n), pa.timestamp("ms")),
        "s2": [words[(3 * i) % 4] for i in range(n)],
    }
    if plain:
        cols.update(i8=rng.integers(-128, 127, n).astype(np.int8), s=[words[i % 4] for i in range(n)],
                    bin=[bytes(i % 12) for i in range(n)], i=rng.integers(-9, 9, n).astype(np.int32))
    return first_block(FLAT, cols), n


def out_buffers(schema, project, m, data):
    """Output buffers for ``m`` rows of the fields of ``schema`` in ``project`` (None for the others); a bytes
    field's data buffer is ``data()``; a string field (named s...) is checked as UTF-8."""
    outs = []
    for i, f in enumerate(schema.fields):
        k = V.kind_of(f.type)
        if i not in project:
            outs.append(None)
        elif k == V.K_BYTES:
            utf8 = 1 if f.name.startswith("s") else 0
            outs.append((k, utf8, np.zeros((m + 7) // 8, np.uint8), None, np.zeros(m + 1, np.int32), data()))
        else:
            outs.append((k, 0, np.zeros((m + 7) // 8, np.uint8), np.full(8 * m, 0xAB, np.uint8), None, None))
    return outs


def written(outs, datapos):
    """Every byte the decoder wrote into ``outs``: string data up to its final position."""
    return [None if o is None else [None if x is None else np.asarray(x)[:datapos[i]].tobytes() if j == 3 else
                                    np.asarray(x).tobytes() for j, x in enumerate(o[2:])]
            for i, o in enumerate(outs)]


def run_flat(kernel, block, n, project, rows=None, data_cap=None, schema=FLAT):
    m = n if rows is None else len(rows)
    outs = out_buffers(schema, project, m, lambda: np.zeros(len(block) if data_cap is None else data_cap, np.uint8))
    datapos = np.zeros(len(outs), np.int64)
    state = np.zeros(3, np.int64)
    dec = kernel.BlockDecoder(V.program(schema), outs, m, datapos, state)
    r = dec.decode(block, n, rows, m, 0)
    return r, (state.tolist() if r < 0 else None), written(outs, datapos), datapos.tolist(), getattr(dec, "flat", True)


@pytest.mark.parametrize("kernel", IMPLS)
def test_twin_agrees_on_flat_schemas(kernel):
    """Schemas of fixed-width numbers and strings only (the compiled decoder's fast path): the same outputs
    as the twin for every projection tried, row selections, and data buffers that end exactly at the last
    byte written or one byte before it."""
    block, n = flat_block()
    twin = _speedups.twin("rowcodec")
    nf = len(FLAT.fields)
    rng = np.random.default_rng(4)
    projects = [set(range(nf)), {1}, {2, 6}, {4, 10}, set()] + \
        [set(rng.choice(nf, int(rng.integers(1, nf)), replace=False).tolist()) for _ in range(20)]
    for project in projects:
        got = run_flat(kernel, block, n, project)
        assert got[0] == n and got[4]
        assert got[:4] == run_flat(twin, block, n, project)[:4]
    rows = np.array([199, 0, 7, 7, 8, 150, 3], np.int32)
    assert run_flat(kernel, block, n, set(range(nf)), rows)[:4] == run_flat(twin, block, n, set(range(nf)), rows)[:4]
    need = run_flat(twin, block, n, {1})[3][1]
    for cap in (need, need - 1, need + 15, need + 16):
        got = run_flat(kernel, block, n, {1}, data_cap=cap)
        assert got[:4] == run_flat(twin, block, n, {1}, data_cap=cap)[:4]
        assert (got[0] == n) == (cap >= need)


def flipped_blocks_agree(kernel, block, n, schema, seed, trials):
    """``trials`` copies of ``block`` with one to three bits flipped, each decoded with a random projection by
    ``kernel`` and the twin: the same status, location and outputs. Returns how many were refused."""
    twin = _speedups.twin("rowcodec")
    nf = len(schema.fields)
    rng = np.random.default_rng(seed)
    failures = 0
    for trial in range(trials):
        bad = bytearray(block)
        for _ in range(int(rng.integers(1, 4))):
            bad[int(rng.integers(0, len(bad) - 4))] ^= 1 << int(rng.integers(8))
        project = set(rng.choice(nf, int(rng.integers(0, nf + 1)), replace=False).tolist())
        a = run_flat(kernel, bytes(bad), n, project, schema=schema)
        assert a[:4] == run_flat(twin, bytes(bad), n, project, schema=schema)[:4]
        failures += a[0] < 0
    return failures


def changed_bytes_agree(kernel, block, n, schema, projects, changes):
    """Every byte of ``block``'s rows replaced by each of ``changes(byte)``, decoded with each projection by
    ``kernel`` and the twin: the same status, location and outputs. Returns how many were refused."""
    twin = _speedups.twin("rowcodec")
    data_end = len(block) - 4 - 4 * n
    failures = 0
    for project in projects:
        for i in range(data_end):
            for v in changes(block[i]):
                bad = block[:i] + bytes([v]) + block[i + 1:]
                a = run_flat(kernel, bad, n, project, schema=schema)
                assert a[:4] == run_flat(twin, bad, n, project, schema=schema)[:4], (project, i, v)
                failures += a[0] < 0
    return failures


@pytest.mark.parametrize("kernel", IMPLS)
def test_twin_agrees_on_corrupt_flat_blocks(kernel):
    block, n = flat_block()
    assert flipped_blocks_agree(kernel, block, n, FLAT, seed=12, trials=400) > 20


@pytest.mark.parametrize("kernel", IMPLS)
def test_twin_agrees_on_every_byte_of_a_flat_block_changed(kernel):
    """Rows without nulls and short ASCII strings (the compiled decoder's fast walk): every byte of the row
    data changed in several ways, the same status, location and outputs as the twin."""
    block, n = flat_block(12, plain=True)
    project = set(range(len(FLAT.fields))) - {3, 7}
    assert changed_bytes_agree(kernel, block, n, FLAT, [project],
                               lambda b: {b ^ 1, b ^ 2, b ^ 8, (b + 40) & 0xFF, b | 0x80, 0}) > 100


# One bytes field between fixed-width ones (the compiled decoder's row-shape walk), and fixed-width ones only.
SHAPE = RowType([DataField(i, n, parse_paimon_type(t)) for i, (n, t) in enumerate([
    ("i8", "TINYINT"), ("l", "BIGINT"), ("s", "STRING"), ("i16", "SMALLINT"), ("i", "INT"), ("d", "DOUBLE")])])
FIXED = RowType([f for f in SHAPE.fields if f.name != "s"])


def shape_block(n=700, plain=False, schema=SHAPE, seed=6):
    """A block of SHAPE (or FIXED) rows: more rows than one chunk of the walk, nulls in every field at random
    rows (runs of rows without any, then rows with several), strings of 0 to 16 ASCII bytes mostly, and some
    longer (lengths of one and two varint bytes) or not ASCII. ``plain``: short ASCII strings only."""
    rng = np.random.default_rng(seed)
    words = ["", "a", "twelve bytes", "ascii-16-bytes!!", "seventeen bytes!!", "x" * 127, "y" * 200, "é",
             "ascii then ü"]
    pick = rng.choice(len(words), n, p=[0.1, 0.2, 0.4, 0.2, 0.03, 0.02, 0.02, 0.02, 0.01])
    if plain:
        pick = rng.integers(0, 4, n)
    dense = (np.arange(n) // 50) % 3 == 1        # every third run of 50 rows has many nulls
    null = lambda p: (rng.random(n) < np.where(dense, 4 * p, p)) if not plain else rng.random(n) < p
    cols = {
        "i8": pa.array(rng.integers(-128, 127, n).astype(np.int8), mask=null(0.05)),
        "l": pa.array(rng.integers(-2**62, 2**62, n), mask=null(0.03)),
        "s": pa.array([words[k] for k in pick], mask=null(0.05)),
        "i16": pa.array(rng.integers(-999, 999, n).astype(np.int16), mask=null(0.04)),
        "i": pa.array(rng.integers(-9, 9, n).astype(np.int32), mask=null(0.1)),
        "d": pa.array(rng.random(n), mask=null(0.02)),
    }
    return first_block(schema, {f.name: cols[f.name] for f in schema.fields}), n


@pytest.mark.parametrize("kernel", IMPLS)
@pytest.mark.parametrize("schema", [SHAPE, FIXED], ids=["one_bytes_field", "fixed_only"])
def test_twin_agrees_on_row_shapes(kernel, schema):
    """At most one bytes field: the same outputs as the twin for every projection, row selections (in order,
    out of order, repeated), and data buffers that end at, before and a little after the last byte written."""
    block, n = shape_block(schema=schema)
    twin = _speedups.twin("rowcodec")
    nf = len(schema.fields)
    rng = np.random.default_rng(7)
    projects = [set(range(nf)), set(), {0}, {nf - 1}] + \
        [set(rng.choice(nf, int(rng.integers(1, nf + 1)), replace=False).tolist()) for _ in range(12)]
    for project in projects:
        got = run_flat(kernel, block, n, project, schema=schema)
        assert got[0] == n and got[4]
        assert got[:4] == run_flat(twin, block, n, project, schema=schema)[:4]
    for rows in (np.arange(0, n, 3, dtype=np.int32), rng.permutation(n).astype(np.int32)[:400],
                 np.array([5, 5, 699, 0, 300, 300, 1], np.int32)):
        got = run_flat(kernel, block, n, set(range(nf)), rows, schema=schema)
        assert got[0] == len(rows)
        assert got[:4] == run_flat(twin, block, n, set(range(nf)), rows, schema=schema)[:4]
    if schema is SHAPE:
        need = run_flat(twin, block, n, {2}, schema=SHAPE)[3][2]
        for cap in (need, need - 1, need + 1, need + 15, need + 16, need // 2):
            got = run_flat(kernel, block, n, {1, 2, 4}, data_cap=cap, schema=SHAPE)
            assert got[:4] == run_flat(twin, block, n, {1, 2, 4}, data_cap=cap, schema=SHAPE)[:4]
            assert (got[0] == n) == (cap >= need)


@pytest.mark.parametrize("kernel", IMPLS)
@pytest.mark.parametrize("schema", [SHAPE, FIXED], ids=["one_bytes_field", "fixed_only"])
def test_twin_agrees_on_corrupt_row_shapes(kernel, schema):
    block, n = shape_block(schema=schema)
    assert flipped_blocks_agree(kernel, block, n, schema, seed=13, trials=300) > 20


@pytest.mark.parametrize("kernel", IMPLS[:1])   # the compiled kernel (the twin where there is none)
def test_twin_agrees_on_every_byte_of_a_row_shape_block_changed(kernel):
    """Short ASCII strings, some rows with nulls, enough rows for the row-shape walk: every byte of the rows
    changed in several ways, the same status, location and outputs as the twin (rows taken by the walk with
    and without nulls, rows it hands to the careful walk)."""
    block, n = shape_block(64, plain=True, seed=8)
    assert changed_bytes_agree(kernel, block, n, SHAPE, [set(range(6)), {2, 3, 5}],
                               lambda b: {b ^ 1, b ^ 0x10, b | 0x80, 0}) > 100


def guarded(block):
    """``block`` as a read-only array whose last byte ends a page followed by a page that cannot be read: a
    read past the block stops the process."""
    import ctypes
    import mmap
    page = mmap.PAGESIZE
    size = (len(block) + page - 1) // page * page
    mm = mmap.mmap(-1, size + page)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    assert libc.mprotect(base + size, page, 0) == 0       # PROT_NONE
    mm[size - len(block):size] = block
    arr = np.frombuffer(mm, np.uint8, len(block), size - len(block))
    return arr, mm


@pytest.mark.parametrize("kernel", IMPLS)
def test_rows_of_nulls_at_the_end_of_a_block_are_read_inside_it(kernel):
    """Rows whose fields are all or mostly null, at the end of a block (the row-shape walk reads a null field
    where it would start): every read stays inside the block (the block ends where reading stops the
    process), with the twin's outputs; also blocks of one or two such rows."""
    twin = _speedups.twin("rowcodec")
    types = {"i8": pa.int8(), "l": pa.int64(), "s": pa.string(), "i16": pa.int16(), "i": pa.int32(),
             "d": pa.float64()}
    rng = np.random.default_rng(9)
    n = 80
    mostly = {k: [None if rng.random() < 0.3 or i >= n - 3 else (f"v{i}" if k == "s" else i % 100)
                  for i in range(n)] for k in types}
    last_only = {k: [None if i == n - 1 and k != "i8" else (f"v{i}" if k == "s" else i % 100) for i in range(n)]
                 for k in types}
    for cols in ({k: [None] * n for k in types}, mostly, last_only, {k: [None] for k in types},
                 {"i8": [1, None], "l": [None, None], "s": ["ab", None], "i16": [2, None], "i": [None, 3],
                  "d": [None, None]}):
        cols = {k: pa.array(v, types[k]) for k, v in cols.items()}
        block = first_block(SHAPE, cols)
        rows = len(cols["i8"])
        arr, mm = guarded(block)
        for project in (set(range(6)), {1, 5}, {0, 2}):
            got = run_flat(kernel, arr, rows, project, schema=SHAPE)
            assert got[0] == rows
            assert got[:4] == run_flat(twin, block, rows, project, schema=SHAPE)[:4]
        del arr
        mm.close()


@pytest.mark.parametrize("kernel", IMPLS)
def test_row_offsets_past_the_block_are_refused_without_reading_there(kernel):
    """A row offset (or the next row's, its end) pointing past the block: the row is refused, as by the twin,
    and nothing past the block is read (the block ends where reading stops the process)."""
    twin = _speedups.twin("rowcodec")
    block, n = shape_block(80, plain=True, seed=10)
    data_end = len(block) - 4 - 4 * n
    for row in (0, 40, 79):
        for value in (len(block), len(block) + 100, data_end + 1, 2**31 - 1):
            bad = bytearray(block)
            struct.pack_into("<i", bad, data_end + 4 * row, value)
            arr, mm = guarded(bytes(bad))
            got = run_flat(kernel, arr, n, set(range(6)), schema=SHAPE)
            assert got[0] < 0
            assert got[:4] == run_flat(twin, bytes(bad), n, set(range(6)), schema=SHAPE)[:4]
            del arr
            mm.close()


def _shape_schema(spec):
    return RowType([DataField(i, n, parse_paimon_type(t)) for i, (n, t) in enumerate(spec)])


_FIXED7 = [("i8", "TINYINT"), ("i16", "SMALLINT"), ("i", "INT"), ("l", "BIGINT"), ("f", "FLOAT"), ("d", "DOUBLE"),
           ("dt", "DATE")]
SHAPES = {
    "one_string": _shape_schema([("s", "STRING")]),
    "binary_first_of_8": _shape_schema([("bin", "BYTES")] + _FIXED7),
    "string_last": _shape_schema(_FIXED7[:4] + [("s", "STRING")]),
    "eight_fixed": _shape_schema(_FIXED7 + [("l2", "BIGINT")]),
}


def _shape_cols(schema, n, seed):
    """Columns for ``schema``: nulls in about 15% of each column's rows (in runs too), strings of 0 to 200 bytes
    (lengths of one and two bytes) in runs, ASCII and not, binaries with bytes that are not UTF-8."""
    rng = np.random.default_rng(seed)
    words = ["", "a", "twelve bytes", "ascii-16-bytes!!", "seventeen bytes!!", "u" * 36, "v" * 127, "w" * 128,
             "z" * 200, "é", "text then ü and more text", "日本語テキストのもっと長い値です"]
    cols = {}
    for f in schema.fields:
        null = (rng.random(n) < 0.15) | ((np.arange(n) // 40) % 5 == 3) & (rng.random(n) < 0.6)
        if f.name == "s":
            pick = np.where((np.arange(n) // 30) % 4 == 2, rng.integers(6, 9, n), rng.integers(0, len(words), n))
            vals = [words[k] for k in pick]
        elif f.name == "bin":
            vals = [bytes(rng.integers(0, 256, int(rng.integers(0, 40))).astype(np.uint8)) for _ in range(n)]
        elif f.name in ("f", "d"):
            vals = rng.random(n).tolist()
        else:
            lim = {"i8": 127, "i16": 30000, "dt": 20000}.get(f.name, 2**31 - 1)
            vals = rng.integers(-lim, lim, n).tolist()
        cols[f.name] = pa.array([None if z else v for v, z in zip(vals, null)], f.type.to_arrow())
    return cols


def run_pieces(kernel, schema, block, n, project, pieces, start_d=7, data_cap=None):
    """One decoder for ``schema`` run over ``pieces`` [(rows or None, nsel, out_base)] of one block, string data
    written from ``start_d`` (into a buffer of ``data_cap`` bytes followed by an unwritable page, if given): the
    status of each call, the failure location and every output byte."""
    total = max(b + k for _, k, b in pieces)
    keep = []   # the guarded buffers' mappings, unmapped once the arrays are gone

    def data():
        if data_cap is None:
            return np.zeros(2 * len(block) + 64, np.uint8)
        arr, mm = guarded(bytes(data_cap))
        keep.append(mm)
        return arr
    outs = out_buffers(schema, project, total, data)
    datapos = np.array([start_d if o is not None and o[0] == V.K_BYTES else 0 for o in outs], np.int64)
    state = np.zeros(3, np.int64)
    dec = kernel.BlockDecoder(V.program(schema), outs, total, datapos, state)
    got = []
    for rows, nsel, base in pieces:
        r = dec.decode(block, n, rows, nsel, base)
        got.append((r, state.tolist() if r < 0 else None))
        if r < 0:
            break
    return got, written(outs, datapos), datapos.tolist()


@pytest.mark.parametrize("kernel", IMPLS)
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_twin_agrees_on_row_shapes_decoded_in_pieces(kernel, name):
    """Schemas of one to eight fields, the bytes field first, last or absent, string or binary: one decoder
    called several times on a block (a first call of at least 64 rows, then calls of 3 and more rows at output
    rows that are not multiples of 8), string data written after other data, row selections of more than 64
    rows, one of them holding a row past the block: the same statuses, locations and outputs as the twin."""
    schema = SHAPES[name]
    twin = _speedups.twin("rowcodec")
    n = 400
    block = first_block(schema, _shape_cols(schema, n, seed=len(name)))
    nf = len(schema.fields)
    rng = np.random.default_rng(21)
    sel = np.sort(rng.choice(n, 150, replace=False)).astype(np.int32)
    bad_sel = sel.copy()
    bad_sel[90] = n + 5
    cases = [
        [(None, 70, 0), (None, 3, 70), (None, 130, 73), (None, 197, 203)],   # all rows, in pieces
        [(None, 64, 0)],
        [(sel[:70], 70, 0), (sel[70:], 80, 70)],
        [(bad_sel, 150, 5)],
    ]
    projects = [set(range(nf)), {0}, {nf - 1}, set(rng.choice(nf, max(1, nf // 2), replace=False).tolist())]
    for pieces in cases:
        for project in projects:
            got = run_pieces(kernel, schema, block, n, project, pieces)
            assert got == run_pieces(twin, schema, block, n, project, pieces), (pieces[0][1:], project)
            if pieces[0][0] is bad_sel:
                assert got[0][-1][0] < 0
            else:
                assert all(r == k for (r, _), (_, k, _) in zip(got[0], pieces))
    if any(V.kind_of(f.type) == V.K_BYTES for f in schema.fields):
        need = run_pieces(twin, schema, block, n, set(range(nf)), cases[0])[2]
        need = max(need) + 1
        for cap in (need, need - 1, need + 15, need + 16, need + 127, need // 2):
            got = run_pieces(kernel, schema, block, n, set(range(nf)), cases[0], data_cap=cap)
            assert got == run_pieces(twin, schema, block, n, set(range(nf)), cases[0], data_cap=cap), cap


@pytest.mark.parametrize("kernel", IMPLS)
def test_string_output_without_a_data_buffer_is_decoded_as_before(kernel):
    """A string column given no data buffer (only null values to write): the row-shape walk leaves it to the
    careful walk, which writes every offset at the starting data position, as the twin does."""
    schema = SHAPES["one_string"]
    twin = _speedups.twin("rowcodec")
    n = 100
    block = first_block(schema, {"s": pa.array([None] * n, pa.string())})

    def run(k):
        outs = [(V.K_BYTES, 1, np.zeros((n + 7) // 8, np.uint8), None, np.zeros(n + 1, np.int32), None)]
        datapos = np.array([5], np.int64)
        state = np.zeros(3, np.int64)
        r = k.BlockDecoder(V.program(schema), outs, n, datapos, state).decode(block, n, None, n, 0)
        return r, outs[0][2].tolist(), outs[0][4].tolist(), datapos.tolist()
    got = run(kernel)
    assert got == run(twin)
    assert got[0] == n and got[2][1:] == [5] * n and not any(got[1])


@pytest.mark.parametrize("kernel", IMPLS)
def test_a_long_string_at_the_end_of_a_small_block_is_read_inside_it(kernel):
    """A decoder that has taken rows of a large block goes on to a block of one or two rows whose last string
    (17 to 127 bytes, copied 16 bytes at a time) ends its row, a few bytes before the block's end: every read
    stays inside the block (it ends where reading stops the process), with the twin's outputs."""
    twin = _speedups.twin("rowcodec")
    big, nbig = shape_block(70, plain=True, seed=11)
    for value, tail in itertools.product(("q" * 17, "r" * 100, "s" * 127, "t" * 31, "u" * 16, None), (3, None)):
        for first in ([], ["ab"]):
            vals = first + [value]
            rest = [3] * len(first) + [tail]     # the fields after the string null: it ends its row
            small = first_block(SHAPE, {
                "i8": pa.array([1] * len(vals), pa.int8()), "l": pa.array([2] * len(vals), pa.int64()),
                "s": pa.array(vals, pa.string()), "i16": pa.array(rest, pa.int16()),
                "i": pa.array([None] * len(vals), pa.int32()), "d": pa.array(rest, pa.float64())})
            arr, mm = guarded(small)
            got = []
            for k, blk in ((kernel, arr), (twin, small)):
                total = nbig + len(vals)
                outs = out_buffers(SHAPE, set(range(6)), total, lambda: np.zeros(64 * total + 64, np.uint8))
                datapos = np.zeros(len(outs), np.int64)
                state = np.zeros(3, np.int64)
                dec = k.BlockDecoder(V.program(SHAPE), outs, total, datapos, state)
                r1 = dec.decode(big, nbig, None, nbig, 0)
                r2 = dec.decode(blk, len(vals), None, len(vals), nbig)
                got.append((r1, r2, written(outs, datapos), datapos.tolist()))
            assert got[0] == got[1], value
            assert got[0][:2] == (nbig, len(vals))
            del arr, blk


@pytest.mark.parametrize("kernel", IMPLS)
def test_column_bounds_over_any_cuts_equal_one_pass_over_all_rows(kernel):
    """Bounds taken call by call over consecutive row ranges (as the writer takes them after each encoding
    call) are those of one pass over all the rows: for bytes the same rows (the first row on ties, so a tie
    in a later range keeps the earlier row), for numbers the same values, -0.0 before 0.0 across ranges, NaN
    and nulls skipped; a column not wanted is left as it was."""
    rng = np.random.default_rng(31)
    floats = [0.0, -0.0, float("nan"), 1.5, -2.25, float("inf"), float("-inf")]
    stems = [b"", b"ab", b"abcdefghijklmnopq", b"\xff\x00"]
    for trial in range(120):
        n = int(rng.integers(0, 60))
        words = [None if rng.random() < 0.2 else
                 stems[int(rng.integers(0, len(stems)))][:int(rng.integers(0, 18))] + bytes([int(rng.integers(0, 3))])
                 * int(rng.integers(0, 3)) for _ in range(n)]
        offsets, data, bnulls = _bytes_column(words)
        if trial % 2:
            offsets = offsets.astype(np.int32)
        ints = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64)
        ints[rng.random(n) < 0.2] = -2**63
        pool = floats if trial % 3 == 0 else floats[:4] if trial % 3 == 1 else floats[:3] + [-2.25]
        dbl = np.array([pool[int(j)] for j in rng.integers(0, len(pool), n)], np.float64)   # (signed zeros)
        f32 = dbl.astype(np.float32)
        i16 = rng.integers(-2**15, 2**15, n).astype(np.int16)
        nulls = (rng.random(n) < 0.3).astype(np.uint8)
        cols = [(V.K_BYTES, bnulls, None, offsets, data), (V.K_I64, None, ints.view(np.uint8), None, None),
                (V.K_F64, nulls, dbl.view(np.uint8), None, None), (V.K_F32, None, f32.view(np.uint8), None, None),
                (V.K_I16, nulls, i16.view(np.uint8), None, None), (V.K_I32, None, None, None, None)]
        stats = np.zeros(4 * len(cols), np.int64)
        for f in range(5):
            stats[4 * f:4 * f + 4] = (1, 0, -1, -1)
        stats[20:24] = (0, 5, 6, 7)          # not wanted: left alone
        cuts = sorted({0, n, *map(int, rng.integers(0, n + 1, int(rng.integers(0, 6))))})
        for a, b in zip(cuts, cuts[1:]):
            assert kernel.column_bounds(cols, a, b, stats) == 0
        rows = np.zeros(2, np.int64)
        count = kernel.bytes_min_max(offsets, data, bnulls, n, rows)
        assert list(stats[0:4]) == ([1, count, rows[0], rows[1]] if count else [1, 0, -1, -1]), (words, cuts)
        for f, (kind, nl, raw) in enumerate(((V.K_I64, None, ints), (V.K_F64, nulls, dbl), (V.K_F32, None, f32),
                                             (V.K_I16, nulls, i16)), start=1):
            out = np.zeros(16, np.uint8)
            count = kernel.numeric_min_max(raw.view(np.uint8), kind, nl, n, out)
            st = stats[4 * f:4 * f + 4]
            assert st[0] == 1 and st[1] == count, (kind, raw)
            if not count:
                assert list(st[2:]) == [-1, -1]
                continue
            both = out[:2 * raw.itemsize].view(raw.dtype)
            if kind in (V.K_F32, V.K_F64):
                got = st[2:4].view(np.float64)
                assert list(got) == list(both.astype(np.float64)), (kind, raw)
                assert list(np.signbit(got)) == list(np.signbit(both)), (kind, raw)
            else:
                assert list(st[2:4]) == [int(x) for x in both], (kind, raw)
        assert list(stats[20:24]) == [0, 5, 6, 7]


@pytest.mark.parametrize("kernel", IMPLS)
def test_column_bounds_rejects_short_arrays_bad_offsets_and_other_kinds(kernel):
    offsets, data, nulls = _bytes_column([b"abc", b"de", None])
    ints = np.arange(3, dtype=np.int64).view(np.uint8)
    cols = [(V.K_BYTES, nulls, None, offsets, data), (V.K_I64, None, ints, None, None)]
    stats = np.array([1, 0, -1, -1, 1, 0, -1, -1], np.int64)
    assert kernel.column_bounds(cols, 0, 3, stats) == 0
    assert list(stats) == [1, 2, 0, 1, 1, 3, 0, 2]
    assert kernel.column_bounds(cols, 0, 4, stats.copy()) == status.BAD_LENGTH     # past the arrays
    assert kernel.column_bounds(cols, 2, 1, stats.copy()) == status.BAD_LENGTH     # stop before start
    assert kernel.column_bounds(cols, 0, 3, stats[:7].copy()) == status.BAD_LENGTH  # four numbers per column
    bad = offsets.copy()
    bad[2] = len(data) + 1
    before = np.array([1, 0, -1, -1, 0, 0, 0, 0], np.int64)
    got = before.copy()
    assert kernel.column_bounds([(V.K_BYTES, None, None, bad, data), cols[1]], 0, 2, got) == status.BAD_LENGTH
    assert list(got) == list(before)
    assert kernel.column_bounds([(V.K_BOOL, None, ints, None, None)], 0, 1,
                                np.array([1, 0, -1, -1], np.int64)) == status.BAD_VALUE
    assert kernel.column_bounds([(V.K_BOOL, None, ints, None, None)], 0, 1,
                                np.array([0, 0, -1, -1], np.int64)) == 0       # not wanted: not looked at
    # bound rows carried in must lie before the rows' end (their offsets are read)
    assert kernel.column_bounds(cols[:1], 0, 2, np.array([1, 1, 5, 5], np.int64)) == status.BAD_LENGTH
    assert kernel.column_bounds(cols[:1], 0, 2, np.array([1, 1, -1, 0], np.int64)) == status.BAD_LENGTH


# -- row_values: one row as Python values -------------------------------------------------------------------------
RV_KINDS = bytes([V.K_BOOL, V.K_I8, V.K_I16, V.K_I32, V.K_I64, V.K_F32, V.K_F64, V.K_TEXT, V.K_BYTES])
RV_NAMES = ("b", "i8", "i16", "i", "l", "f", "d", "s", "y")


def rv_block():
    """A block of four rows of RV_KINDS: values, nulls, a NaN with a payload, a length written in five bytes."""
    def row(bits, *values):
        return struct.pack("<H", bits) + b"".join(values)
    rows = [row(0, b"\x01", b"\xfe", struct.pack("<h", -300), struct.pack("<i", 2**31 - 1), struct.pack("<q", -2**63),
                struct.pack("<f", 1.5), struct.pack("<d", -0.0), b"\x03\xc3\xa9x", b"\x02\x00\xff"),
            row(0b110000001, b"\xff", struct.pack("<h", 7), struct.pack("<i", -1), struct.pack("<q", 5),
                b"\x01\x00\xc0\x7f", struct.pack("<d", float("inf"))),
            row(0, b"\x00", b"\x7f", struct.pack("<h", 0), struct.pack("<i", 0), struct.pack("<q", 0),
                b"\x00\x00\x80\xff", b"\x01\x00\x00\x00\x00\x00\xf8\x7f", b"\x82\x80\x80\x80\x00ab", b"\x00"),
            row(0b111111111)]
    data = b"".join(rows)
    offs = list(itertools.accumulate([0] + [len(r) for r in rows[:-1]]))
    return data + struct.pack(f"<{len(rows)}i", *offs) + struct.pack("<i", len(rows)), len(rows)


def rv_run(kernel, block, nrows, row, kinds=RV_KINDS, names=RV_NAMES):
    out, state = {}, [0, 0, 0, 0]
    st = kernel.row_values(block, nrows, row, kinds, names, out, state)
    # a NaN compares by its bits (the value made from a float32 NaN is the same double on both paths)
    out = {k: (struct.pack("<d", v) if isinstance(v, float) and v != v else v) for k, v in out.items()}
    return st, (state if st < 0 else None), out


@pytest.mark.parametrize("kernel", IMPLS)
def test_row_values_reads_every_kind(kernel):
    block, n = rv_block()
    got = [rv_run(kernel, block, n, r) for r in range(n)]
    assert [g[0] for g in got] == [0] * n
    first, second, third, nulls = (g[2] for g in got)
    assert first == {"b": True, "i8": -2, "i16": -300, "i": 2**31 - 1, "l": -2**63, "f": 1.5, "d": -0.0,
                     "s": "\xe9x", "y": b"\x00\xff"}
    assert second["b"] is None and second["s"] is None and second["y"] is None and second["i8"] == -1
    assert second["f"] == struct.pack("<d", struct.unpack("<f", b"\x01\x00\xc0\x7f")[0])
    assert second["d"] == float("inf")
    assert third["b"] is False and third["s"] == "ab" and third["y"] == b""
    assert nulls == dict.fromkeys(RV_NAMES)
    assert type(first["b"]) is bool and type(first["l"]) is int and type(first["f"]) is float
    # a FLOAT NaN (signalling here) is widened as Arrow's to_pylist widens it
    snan = b"\x01\x00\x80\x7f"
    want = struct.pack("<d", pa.array(np.frombuffer(snan, np.float32)).to_pylist()[0])
    signalling = block.replace(b"\x01\x00\xc0\x7f", snan)
    assert rv_run(kernel, signalling, n, 1)[2]["f"] == want
    # the state is only written when a check fails; without one, the status alone comes back
    offsets_at = len(block) - 4 - 4 * n
    bad = block[:offsets_at] + struct.pack("<i", 10**6) + block[offsets_at + 4:]  # row 0 starts past the rows
    assert kernel.row_values(bad, n, 0, RV_KINDS, RV_NAMES, {}, None) == status.BAD_VALUE


def test_row_values_twin_agrees_on_every_byte_changed():
    kernel = None if _speedups.PURE_PYTHON else _speedups.compiled("rowcodec")
    if kernel is None:
        pytest.skip("the compiled rowcodec kernel is not built in this run")
    block, n = rv_block()
    twin = _speedups.twin("rowcodec")
    checks = set()
    for at in range(len(block) - 4):
        for value in (0x00, 0x01, 0x02, 0x7F, 0x80, 0xFF, block[at] ^ 0x10):
            bad = bytearray(block)
            bad[at] = value
            for r in range(n):
                got = rv_run(kernel, bytes(bad), n, r)
                assert got == rv_run(twin, bytes(bad), n, r), (at, value, r)
                checks.add(got[1][0] if got[0] < 0 else 0)
    assert checks >= {0, twin.RV_OFFSET, twin.RV_BITMAP, twin.RV_VARINT_TRUNCATED, twin.RV_VARINT_OVERLONG,
                      twin.RV_LENGTH, twin.RV_TRUNCATED, twin.RV_BOOL, twin.RV_UTF8}, checks


@pytest.mark.parametrize("kernel", IMPLS)
def test_row_values_refuses_bad_arguments(kernel):
    block, n = rv_block()
    for args in [(n, n), (n, -1), (0, 0), (len(block), 0)]:
        assert rv_run(kernel, block, *args)[:2] == (status.BAD_LENGTH, [kernel.RV_ARGS, 0, 0, 0])
    assert rv_run(kernel, block, n, 0, kinds=bytearray(RV_KINDS))[0] == status.BAD_LENGTH
    assert rv_run(kernel, block, n, 0, names=RV_NAMES[:-1])[0] == status.BAD_LENGTH
    st, state, _ = rv_run(kernel, block, n, 0, kinds=bytes([V.K_BOOL, V.K_DEC_BIG]) + RV_KINDS[2:])
    assert (st, state) == (status.BAD_VALUE, [kernel.RV_ARGS, 1, 0, V.K_DEC_BIG])
    # a block given as any buffer reads as the same bytes; what is not a buffer, or names that are not a tuple
    # and an output that is not a dict, are refused
    assert rv_run(kernel, bytearray(block), n, 2) == rv_run(kernel, block, n, 2)
    assert rv_run(kernel, memoryview(block), n, 2) == rv_run(kernel, block, n, 2)
    assert rv_run(kernel, np.frombuffer(block, np.uint8)[::-1][::-1], n, 2) == rv_run(kernel, block, n, 2)
    for bad in (len(block), list(block)):
        with pytest.raises(TypeError):
            kernel.row_values(bad, n, 0, RV_KINDS, RV_NAMES, {}, None)
    with pytest.raises(TypeError):
        kernel.row_values(block, n, 0, RV_KINDS, list(RV_NAMES), {}, None)
    with pytest.raises(TypeError):
        kernel.row_values(block, n, 0, RV_KINDS, RV_NAMES, None, None)
    with pytest.raises(OverflowError):
        kernel.row_values(block, 2**70, 0, RV_KINDS, RV_NAMES, {}, None)
