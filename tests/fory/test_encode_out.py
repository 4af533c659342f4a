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
