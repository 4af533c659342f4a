"""RowView field access: index, name and integer-like keys resolve the same way in the compiled view and its
twin; strings of every length and mix of ASCII and non-ASCII read back exactly."""
import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.formats import fory

from .test_malformed import kernel  # noqa: F401  (both implementations of the two kernels)

SCHEMA = pa.schema([("i", pa.int64()), ("s", pa.string()), ("n", pa.int32())])
STRINGS = ["", "a", "abcdefg", "abcdefgh", "abcdefghi", "é", "abcdefghé", "é" + "a" * 15, "a" * 16 + "€",
           "x" * 100, "日本語のテキスト"]


def views(rows):
    batch = pa.RecordBatch.from_pylist(rows, schema=SCHEMA)
    buf, offsets = fory.encode_rows(batch)
    schema = fory.ForySchema(SCHEMA)
    return [fory.RowView(bytes(buf), schema, "standard", 0, int(offsets[k]), int(offsets[k + 1]))
            for k in range(len(rows))]


def test_strings_of_every_shape_read_back(kernel):
    rows = [{"i": k, "s": s, "n": None} for k, s in enumerate(STRINGS)]
    for v, s in zip(views(rows), STRINGS):
        assert v.get_string(1) == s and v.get_string("s") == s and v["s"] == s


def test_keys_resolve_alike(kernel):
    (v,) = views([{"i": -(2 ** 63), "s": "x", "n": None}])
    for key in (0, "i", np.int64(0), np.int32(0), False):
        assert v.get_int64(key) == -(2 ** 63)
    for key in (1, "s", np.int64(1), True):
        assert v.get_string(key) == "x"
    assert v.is_null(2) and v.is_null("n") and not v.is_null(np.int8(0))
    assert v.get_int32("n") is None
    for bad in (3, -1, 2 ** 70, -(2 ** 70), np.int64(7)):
        with pytest.raises(IndexError):
            v.get_int64(bad)
        with pytest.raises(IndexError):
            v.get_string(bad)
        with pytest.raises(IndexError):
            v.get(bad)
    for bad in ("nope", 1.0, None, b"i"):
        with pytest.raises(KeyError):
            v.get_int64(bad)
        with pytest.raises(KeyError):
            v.get_string(bad)
