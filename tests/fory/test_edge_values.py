"""The three Fory decoders (decode_rows, decode_row, RowView) agree on bad bytes and on valid values that have no
Python object; every Arrow result validates."""

import datetime as dt
import struct

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from paimon_engine.errors import CorruptFileError, ValueOutOfRangeError
from paimon_engine.formats import fory

from .test_malformed import kernel  # noqa: F401  (both implementations of the two kernels)

SCHEMA = pa.schema([("s", pa.string()), ("d", pa.date32()), ("t", pa.timestamp("us")),
                    ("tz", pa.timestamp("us", tz="UTC")), ("l", pa.list_(pa.string())),
                    ("m", pa.map_(pa.string(), pa.timestamp("us"))), ("b", pa.binary())])
ROWS = [
    {"s": "héllo", "d": dt.date(2000, 1, 2), "t": dt.datetime(2001, 2, 3, 4, 5, 6), "tz": None,
     "l": ["a", None, "€uro"], "m": [("k", dt.datetime(1999, 1, 1))], "b": b"\xff\xfe"},
    {"s": None, "d": None, "t": None, "tz": dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc), "l": [], "m": None,
     "b": None},
]
YEAR_10000_US = 253402300800 * 1_000_000
YEAR_10000_DAYS = 2932897
BEFORE_YEAR_1_DAYS = -719163


def _rows(layout):
    buf, offsets = fory.encode_rows(pa.RecordBatch.from_pylist(ROWS, schema=SCHEMA), layout=layout)
    return [bytes(buf[offsets[i]:offsets[i + 1]]) for i in range(len(offsets) - 1)]


def _outcome(fn):
    try:
        return "ok", fn()
    except CorruptFileError as e:
        assert e.path is not None and isinstance(e.offset, int)
        return "corrupt", (e.field, e.offset)
    except ValueOutOfRangeError as e:
        assert e.field is not None and isinstance(e.value, int)
        return "range", (e.field, e.value)


def _same(a, b):
    """Equality that treats NaN as equal to NaN (a bit flip can make one)."""
    return a == b or repr(a) == repr(b)


def three_paths(data, layout):
    """(decode_rows, decode_row, RowView) outcomes for one row; checks the Arrow result validates."""
    def rows():
        rb = fory.decode_rows(data, [0, len(data)], SCHEMA, layout)
        rb.validate(full=True)
        return rb
    batch = _outcome(rows)
    one = _outcome(lambda: fory.decode_row(data, SCHEMA, layout))
    view = _outcome(lambda: fory.RowView(data, fory.ForySchema(SCHEMA), layout).to_dict())
    return batch, one, view


def assert_agree(data, layout):
    batch, one, view = three_paths(data, layout)
    if batch[0] == "corrupt":
        # the same bytes are corrupt for decode_row, at the same place; the view reads field by field and
        # raises the first problem it meets, which may be a valid value before the corrupt one that has no
        # Python object
        assert one == batch, (one, batch)
        assert view[0] in ("corrupt", "range"), view
        return batch[0]
    assert batch[0] == "ok"
    assert one[0] in ("ok", "range") and view[0] in ("ok", "range"), (one, view)
    assert one[0] == view[0], (one, view)
    if one[0] == "ok":
        assert _same(one[1], view[1]), (one[1], view[1])
        assert _same(one[1], batch[1].to_pylist()[0])
    return one[0]


@pytest.mark.parametrize("layout", ["standard", "compact"])
@pytest.mark.parametrize("where", ["s", "l"])
def test_invalid_utf8_is_corrupt_in_every_path(kernel, layout, where):
    row = bytearray(_rows(layout)[0])
    target = "héllo".encode() if where == "s" else "€uro".encode()
    at = bytes(row).find(target)
    row[at + 1] = 0xFF                               # a bad byte inside the string
    data = bytes(row)
    batch, one, view = three_paths(data, layout)
    assert batch[0] == one[0] == view[0] == "corrupt"
    field = "s" if where == "s" else batch[1][0]
    # the offset is the lead byte of the first bad sequence: the 0xFF itself after "h", the lead byte of "€"
    assert batch[1] == one[1] == view[1] == (field, at + 1 if where == "s" else at)
    with pytest.raises(CorruptFileError) as ei:
        fory.decode_rows(data, [0, len(data)], SCHEMA, layout)
    assert ei.value.path == "<fory rows>" and "UTF-8" in str(ei.value)
    with pytest.raises(CorruptFileError) as ei:
        fory.decode_rows(data, [0, len(data)], SCHEMA, layout, source="rows.bin")
    assert ei.value.path == "rows.bin"
    # binary columns hold any bytes
    assert fory.decode_row(_rows(layout)[0], SCHEMA, layout)["b"] == b"\xff\xfe"


def test_one_bad_byte_anywhere_in_strings_of_every_length(kernel):
    """The UTF-8 check reads a string's bytes by words (ASCII strings pass with no test per byte), ending with a
    word that overlaps the previous one: a 0xFF at any position of an ASCII string of 1 to 40 bytes is found
    there, and the same strings with a 2-byte character there, or unchanged, decode back."""
    schema = pa.schema([("s", pa.string())])
    for n in range(0, 41):
        text = "".join(chr(97 + i % 26) for i in range(n))
        buf, offsets = fory.encode_rows(pa.record_batch({"s": [text]}))
        data = bytes(buf)
        body = data.find(text.encode()) if n else len(data)
        assert fory.decode_rows(data, offsets, schema).column(0).to_pylist() == [text]
        for p in range(n):
            bad = bytearray(data)
            bad[body + p] = 0xFF
            with pytest.raises(CorruptFileError) as ei:
                fory.decode_rows(bytes(bad), offsets, schema)
            assert ei.value.offset == body + p, (n, p)
            if p + 2 <= n:
                two = bytearray(data)
                two[body + p:body + p + 2] = "é".encode()
                got = fory.decode_rows(bytes(two), offsets, schema).column(0).to_pylist()
                assert got == [text[:p] + "é" + text[p + 2:]], (n, p)


def _with_stored(layout, field, raw):
    """Row 0 with the fixed-width slot of ``field`` holding ``raw``."""
    good = _rows(layout)[0]
    lay = fory.ForySchema(SCHEMA).layout(layout)
    node = lay.root.children[SCHEMA.get_field_index(field)]
    row = bytearray(good)
    struct.pack_into("<i" if node.width == 4 else "<q", row, node.off, raw)
    return bytes(row)


@pytest.mark.parametrize("layout", ["standard", "compact"])
@pytest.mark.parametrize("field, raw", [("d", YEAR_10000_DAYS), ("d", BEFORE_YEAR_1_DAYS), ("d", 2 ** 31 - 1),
                                        ("t", YEAR_10000_US), ("t", -2 ** 63), ("t", 2 ** 63 - 1)])
def test_dates_and_timestamps_outside_datetime(kernel, layout, field, raw):
    data = _with_stored(layout, field, raw)
    rb = fory.decode_rows(data, [0, len(data)], SCHEMA, layout)
    rb.validate(full=True)
    col = rb.column(field)
    assert col.view(pa.int32() if field == "d" else pa.int64()).to_pylist() == [raw]
    for decode in (lambda: fory.decode_row(data, SCHEMA, layout),
                   lambda: fory.RowView(data, fory.ForySchema(SCHEMA), layout).to_dict(),
                   lambda: fory.RowView(data, fory.ForySchema(SCHEMA), layout).get(field)):
        with pytest.raises(ValueOutOfRangeError) as ei:
            decode()
        assert ei.value.field == field and ei.value.value == raw
        assert isinstance(ei.value, ValueError) and not isinstance(ei.value, CorruptFileError)
        assert str(raw) in str(ei.value)


def test_out_of_range_inside_a_map_names_the_nested_field(kernel):
    rb = pa.RecordBatch.from_pylist([dict(ROWS[0], m=[("k", 0)])], schema=SCHEMA)
    # the same row with the map value stored beyond year 9999
    arrays = rb.to_pydict()
    m = pa.array([[("k", YEAR_10000_US)]], pa.map_(pa.string(), pa.int64())).cast(
        pa.map_(pa.string(), pa.timestamp("us")))
    rb = pa.RecordBatch.from_arrays([rb.column(i) if n != "m" else m for i, n in enumerate(SCHEMA.names)],
                                    schema=SCHEMA)
    buf, offsets = fory.encode_rows(rb)
    data = bytes(buf)
    assert arrays["s"] == ["héllo"]
    with pytest.raises(ValueOutOfRangeError) as e1:
        fory.decode_row(data, SCHEMA)
    with pytest.raises(ValueOutOfRangeError) as e2:
        fory.RowView(data, fory.ForySchema(SCHEMA)).to_dict()
    assert e1.value.value == e2.value.value == YEAR_10000_US
    assert e1.value.field == e2.value.field and e1.value.field.startswith("m")


@pytest.mark.parametrize("offsets", [[-2 ** 63, 8], [0, -2 ** 63], [-2 ** 63, -1, 2 ** 63 - 2],
                                     [0, 2 ** 63 - 1], [2 ** 62, 2 ** 62 + 8]])
def test_offsets_near_int64_limits(kernel, offsets):
    data = _rows("standard")[0]
    with pytest.raises(CorruptFileError) as ei:
        fory.decode_rows(data, np.array(offsets, dtype=np.int64), SCHEMA)
    assert ei.value.path == "<fory rows>" and ei.value.row is not None and 0 <= ei.value.offset <= len(data)


@pytest.mark.parametrize("layout", ["standard", "compact"])
def test_every_truncation_and_bit_flip_agrees(kernel, layout):
    seen = set()
    for good in _rows(layout):
        for cut in range(len(good)):
            seen.add(assert_agree(good[:cut], layout))
        for bit in range(len(good) * 8):
            bad = bytearray(good)
            bad[bit >> 3] ^= 1 << (bit & 7)
            seen.add(assert_agree(bytes(bad), layout))
    assert {"ok", "corrupt", "range"} <= seen


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, 1), layout=st.sampled_from(["standard", "compact"]),
       edits=st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 255)), min_size=1, max_size=6),
       cut=st.one_of(st.none(), st.integers(0, 10 ** 6)))
def test_random_edits_agree(kernel, which, layout, edits, cut):
    data = bytearray(_rows(layout)[which])
    for pos, value in edits:
        data[pos % len(data)] = value
    if cut is not None:
        data = data[:cut % (len(data) + 1)]
    assert_agree(bytes(data), layout)
