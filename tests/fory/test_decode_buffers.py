"""decode_rows takes the buffers of its result from Arrow's memory pool, which keeps freed memory for the next
decode (a decode into fresh memory faults its pages in one by one), except small ones and those sized by a bound
that the rows fill only in part (list elements in a one-pass decode): they stay NumPy's."""

import gc

import pyarrow as pa
import pytest

from paimon_engine.formats import fory
from paimon_engine.formats.fory import codec

N = 20000
FLAT = pa.record_batch({
    "id": pa.array(range(N), pa.int64()),
    "price": pa.array([i * 0.5 for i in range(N)], pa.float64()),
    "qty": pa.array([None if i % 10 == 3 else i % 1000 for i in range(N)], pa.int32()),
    "ok": [i % 3 == 0 for i in range(N)],
    "pt": pa.array([{"x": i, "y": None if i % 4 else float(i)} for i in range(N)],
                   pa.struct([("x", pa.int32()), ("y", pa.float64())])),
})
NAMES = pa.record_batch({"name": [None if i % 7 == 0 else f"name-{i}" for i in range(N)]})
LISTS = pa.record_batch({"tags": [[i, i + 1, i + 2] if i % 5 else None for i in range(N)]})


def _large_buffer_bytes(batch):
    # (Array.buffers() lists a struct's fields' buffers after its own)
    return sum(b.size for column in batch.columns for b in column.buffers()
               if b is not None and b.size >= codec.SMALL_BUFFER)


def _decode_holding(batch):
    buf, offsets = fory.encode_rows(batch)
    gc.collect()
    before = pa.total_allocated_bytes()
    out = fory.decode_rows(buf, offsets, batch.schema)
    held = pa.total_allocated_bytes() - before
    assert out.equals(batch)
    out.validate(full=True)
    return out, held, before, len(buf)


@pytest.mark.parametrize("batch", [FLAT, NAMES], ids=["numbers_and_struct", "strings"])
def test_decoded_buffers_come_from_arrows_pool_and_go_back_to_it(batch):
    out, held, before, _ = _decode_holding(batch)
    # every buffer of the result that is not small (values, offsets, string bytes, struct fields) is pool memory
    assert held >= _large_buffer_bytes(out) > 4 * N
    del out
    gc.collect()
    assert pa.total_allocated_bytes() - before < 4096


def test_list_elements_sized_by_a_bound_are_not_taken_from_the_pool():
    out, held, _, nbytes = _decode_holding(LISTS)
    # the list's offsets and validity are pool memory; its elements, allocated for as many 8-byte values as the
    # rows' bytes could hold, are not (zeroing that bound in a pool block would write every page of it)
    assert 4 * N <= held < nbytes


def test_a_small_decode_takes_no_pool_memory():
    out, held, _, _ = _decode_holding(FLAT.slice(0, 100))
    assert held == 0 and out.num_rows == 100
