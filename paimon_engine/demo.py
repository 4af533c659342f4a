"""The quickstart tour behind ``paimon-engine demo``: shows what the engine can do, with timings."""

from __future__ import annotations

import time


def _step(title):
    print(f"\n== {title}")


def run(warehouse: str = "warehouse") -> int:
    import numpy as np
    import pyarrow as pa

    from . import _speedups, encoding
    from .batch import ColumnBatch
    from .types import parse_paimon_type

    print("paimon_engine quickstart")
    _step("kernels")
    for name, impl in _speedups.report().items():
        print(f"  {name:10s} {impl}")

    _step("varint codec (the .row block index encoding)")
    row_starts = np.cumsum(np.random.default_rng(1).integers(100, 200, size=100_000)).astype(np.int64)
    t0 = time.perf_counter()
    blob = encoding.encode_delta_varint(row_starts)
    back, _ = encoding.decode_delta_varint(blob, len(row_starts))
    dt = time.perf_counter() - t0
    assert np.array_equal(back, row_starts)
    print(f"  100,000 row starts -> {len(blob):,} bytes and back in {dt * 1000:.1f} ms")

    _step("types")
    t = parse_paimon_type("ROW<id BIGINT NOT NULL, tags MAP<STRING NOT NULL, INT>, ts TIMESTAMP(9)>")
    print(f"  {t.to_paimon_string()}")
    print(f"  as Arrow: {t.to_arrow()}")

    _step("column batches")
    table = pa.table({"id": pa.array(range(5), pa.int64()),
                      "name": pa.array(["a", None, "c", "d", "e"]),
                      "qty": pa.array([1, 2, None, 4, 5], pa.int32())})
    batch = ColumnBatch.from_arrow(table)
    print(f"  {batch}")
    print(batch.slice(1, 4).to_pandas().to_string(index=False))
    return 0
