"""encode_rows(out=...): rows written into a caller's buffer."""

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.errors import InvalidArgumentError
from paimon_engine.formats import fory

BATCH = pa.record_batch({"id": pa.array(range(100), pa.int64()),
                         "name": [None if i % 9 == 0 else "n" * (i % 13) for i in range(100)],
                         "tags": [[i, i + 1] if i % 4 else None for i in range(100)]})


@pytest.mark.parametrize("layout", ["standard", "compact"])
def test_rows_go_into_the_given_buffer(layout):
    ref, ref_offsets = fory.encode_rows(BATCH, layout=layout)
    out = np.full(len(ref) + 100, 0xEE, np.uint8)
    buf, offsets = fory.encode_rows(BATCH, layout=layout, out=out)
    assert np.shares_memory(buf, out) and len(buf) == len(ref)
    assert bytes(buf) == bytes(ref) and (offsets == ref_offsets).all()
    assert (out[len(ref):] == 0xEE).all()  # nothing past the rows is touched
    # reused for a second, smaller batch
    small, soffs = fory.encode_rows(BATCH.slice(10, 5), layout=layout, out=out)
    assert np.shares_memory(small, out)
    assert fory.decode_rows(small, soffs, BATCH.schema, layout).equals(BATCH.slice(10, 5))


def test_a_buffer_that_is_too_small_or_not_uint8_is_refused():
    ref, _ = fory.encode_rows(BATCH)
    short = np.zeros(len(ref) - 1, np.uint8)
    with pytest.raises(InvalidArgumentError, match="holds"):
        fory.encode_rows(BATCH, out=short)
    assert not short.any()
    for bad in (bytearray(len(ref)), np.zeros(len(ref), np.int8), np.zeros(2 * len(ref), np.uint8)[::2]):
        with pytest.raises(InvalidArgumentError, match="out must be"):
            fory.encode_rows(BATCH, out=bad)


@pytest.mark.parametrize("layout", ["standard", "compact"])
def test_padding_and_bitmaps_are_zero_whatever_the_buffer_held(layout):
    # the shapes the encoder writes a chunk of rows at a time (strings and lists without nulls, a nullable
    # fixed-width field), over several chunks: every byte not written by a value comes out zero
    n = 1000
    batch = pa.record_batch({
        "id": pa.array(range(n), pa.int64()),
        "name": ["x" * (i % 21) for i in range(n)],
        "qty": pa.array([None if i % 7 == 0 else i for i in range(n)], pa.int32()),
        "tags": pa.array([list(range(i % 5)) for i in range(n)], pa.list_(pa.int64())),
        "small": pa.array([list(range(i % 3)) for i in range(n)], pa.list_(pa.int32())),
    })
    clean, offsets = fory.encode_rows(batch, layout=layout, out=np.zeros(1 << 20, np.uint8))
    dirty, doffsets = fory.encode_rows(batch, layout=layout, out=np.full(1 << 20, 0xEE, np.uint8))
    assert bytes(dirty) == bytes(clean) and (doffsets == offsets).all()
    assert fory.decode_rows(dirty, doffsets, batch.schema, layout).equals(batch)


@pytest.mark.parametrize("layout", ["standard", "compact"])
def test_rows_into_new_memory_equal_rows_into_a_used_buffer(layout):
    # without out= the rows go into new zero-filled memory and are not zeroed again: the same bytes as rows
    # written into a buffer that held other bytes (small and large batches, one and several chunks of rows)
    for n in (3, 300, 5000):
        batch = pa.record_batch({"id": pa.array(range(n), pa.int64()),
                                 "name": ["y" * (i % 17) for i in range(n)],
                                 "tags": pa.array([list(range(i % 4)) for i in range(n)], pa.list_(pa.int64()))})
        new, offsets = fory.encode_rows(batch, layout=layout)
        used, uoffsets = fory.encode_rows(batch, layout=layout, out=np.full(len(new) + 8, 0xA5, np.uint8))
        assert bytes(new) == bytes(used) and (offsets == uoffsets).all()
