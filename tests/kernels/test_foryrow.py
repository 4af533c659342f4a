"""The foryrow kernel and its twin: argument checks and identical statuses on bad rows."""

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine._pykernels.status import BAD_LENGTH, OUT_OF_RANGE, TRUNCATED
from paimon_engine.formats.fory import ForySchema

from .impls import implementations

SCHEMA = ForySchema(pa.schema([("a", pa.int64()), ("s", pa.string()), ("l", pa.list_(pa.int32()))]))


@pytest.fixture(params=implementations("foryrow"))
def k(request):
    return request.param


def _decode(k, buf, offsets, select=(1, 1, 1), layout="standard"):
    lay = SCHEMA.layout(layout)
    counts = np.zeros((len(lay.nodes), 3), dtype=np.int64)
    state = np.zeros(3, dtype=np.int64)
    st = k.decode_rows(lay.table, lay.children, np.frombuffer(buf, np.uint8), np.asarray(offsets, np.int64),
                       len(offsets) - 1, np.asarray(select, np.uint8), lay.compact, None, counts, state)
    return st, counts, state


def test_argument_checks(k):
    lay = SCHEMA.layout("standard")
    counts = np.zeros((len(lay.nodes), 3), dtype=np.int64)
    state = np.zeros(3, dtype=np.int64)
    buf = np.zeros(64, np.uint8)
    # offsets shorter than nrows + 1
    assert k.decode_rows(lay.table, lay.children, buf, np.zeros(1, np.int64), 1, np.ones(3, np.uint8), False,
                         None, counts, state) == BAD_LENGTH
    # select of the wrong length
    assert k.decode_rows(lay.table, lay.children, buf, np.zeros(2, np.int64), 1, np.ones(2, np.uint8), False,
                         None, counts, state) == BAD_LENGTH
    # encode: inputs list of the wrong length
    assert k.encode_rows(lay.table, lay.children, [], 0, False, np.zeros(8, np.uint8), np.zeros(1, np.int64),
                         np.zeros(4, np.int64)) == BAD_LENGTH
    with pytest.raises(ValueError):
        k.decode_rows(np.zeros((2, 3), np.int64), lay.children, buf, np.zeros(2, np.int64), 1,
                      np.ones(3, np.uint8), False, None, counts[:2], state)


def test_statuses_and_locations(k):
    # a row shorter than its fixed region
    st, _, state = _decode(k, bytes(16), [0, 16])
    assert st == TRUNCATED and state.tolist() == [0, 0, 0]
    # the string slot points past the row (row = 8-byte bitmap + 3 slots = 32 bytes)
    row = bytearray(32)
    row[16:24] = ((40 << 32) | 1).to_bytes(8, "little")
    st, _, state = _decode(k, bytes(row), [0, 32])
    assert st == OUT_OF_RANGE and state.tolist() == [0, 16, 2]
    # an array whose count cannot fit in its bytes
    row = bytearray(48)
    row[8 + 16:8 + 24] = ((32 << 32) | 16).to_bytes(8, "little")
    row[16:24] = bytes(8)
    row[32:40] = (1000).to_bytes(8, "little")
    row[:1] = b"\x02"  # s is null
    st, _, state = _decode(k, bytes(row), [0, 48])
    assert st == BAD_LENGTH and state[0] == 0 and state[1] == 32


def test_counting_pass_counts(k):
    from paimon_engine.formats import fory
    rb = pa.record_batch({"a": pa.array([1, None], pa.int64()), "s": ["xy", None],
                          "l": pa.array([[1, 2, 3], None], pa.list_(pa.int32()))})
    buf, offsets = fory.encode_rows(rb)
    st, counts, _ = _decode(k, bytes(buf), offsets)
    assert st == 0
    lay = SCHEMA.layout("standard")
    by_name = {n.field.name: counts[n.index].tolist() for n in lay.nodes}
    # the counting pass sizes outputs; top-level fixed-width fields are counted without being visited
    assert by_name["a"][:2] == [2, 0] and by_name["s"] == [2, 2, 1] and by_name["l"] == [2, 0, 1]
    assert by_name["item"] == [3, 0, 0]
    # projection: unselected fields are not visited
    st, counts, _ = _decode(k, bytes(buf), offsets, select=(0, 1, 0))
    assert counts[lay.root.children[0].index].tolist() == [0, 0, 0]
