"""File indexes and deletion vectors: paimon_engine vs pypaimon where pypaimon has the feature.

pypaimon has no data-file index (bloom-filter / bitmap / BSI file index) implementation; its
closest piece is the B-tree global index's pure-Python ``BloomFilter`` (same bit layout, different
hash), used here as the peer for probing. Deletion vectors exist in both.

* bloom: build over 1M int64 and 1M strings, probe 1M keys (``track_*`` report keys/s);
* bitmap v2 and BSI: build over 1M rows / 10k distinct values; ``eq`` on a lazily read v2 index
  (header + one block + one bitmap); BSI range query;
* deletion vectors: deserialize one with 100k deleted positions.
"""
import time

import numpy as np
import pyarrow as pa

N = 1_000_000
DISTINCT = 10_000
PEERS = ["paimon_engine", "pypaimon"]


def _types():
    from paimon_engine import types as T
    return T


class BloomFilter:
    """Probing 1M keys (half present): our vectorized kernel vs pypaimon's per-key Python filter."""
    params = PEERS
    param_names = ["impl"]
    timeout = 300

    def setup(self, impl):
        from paimon_engine.batch import Column
        from paimon_engine.index import BloomFilterIndex
        T = _types()
        rng = np.random.default_rng(0)
        self.ints = rng.integers(-(1 << 62), 1 << 62, N, dtype=np.int64)
        self.int_col = Column.from_arrow(pa.array(self.ints))
        self.ours = BloomFilterIndex(T.BigIntType(), {"items": str(N), "fpp": "0.01"})
        self.ours.add_column(self.int_col)
        self.probe = np.concatenate([self.ints[: N // 2], rng.integers(0, 1 << 62, N // 2, dtype=np.int64)])
        if impl == "pypaimon":
            from pypaimon.globalindex.btree.bloom_filter import BloomFilter as PeerBloom
            from paimon_engine.index.hashing import long_hash
            self.hashes = long_hash(self.probe).tolist()
            self.peer = PeerBloom.from_hashes(long_hash(self.ints[:N]).tolist(), 0.01)

    def time_probe_1m(self, impl):
        if impl == "paimon_engine":
            self.ours.might_contain(self.probe)
        else:
            test = self.peer.test_hash
            for h in self.hashes:
                test(h)

    def track_probe_keys_per_second(self, impl):
        t = time.perf_counter()
        self.time_probe_1m(impl)
        return N / (time.perf_counter() - t)
    track_probe_keys_per_second.unit = "keys/s"


class BloomFilterBuild:
    """Building over 1M int64 / 1M strings (pypaimon has no bloom-filter file index)."""
    timeout = 300

    def setup(self):
        from paimon_engine.batch import Column
        rng = np.random.default_rng(0)
        self.int_col = Column.from_arrow(pa.array(rng.integers(-(1 << 62), 1 << 62, N, dtype=np.int64)))
        self.str_col = Column.from_arrow(pa.array([f"key-{i:08d}" for i in range(N)]))

    def time_build_int64(self):
        from paimon_engine.index import BloomFilterIndex
        T = _types()
        b = BloomFilterIndex(T.BigIntType(), {"items": str(N), "fpp": "0.01"})
        b.add_column(self.int_col)
        b.to_bytes()

    def time_build_strings(self):
        from paimon_engine.index import BloomFilterIndex
        T = _types()
        b = BloomFilterIndex(T.parse_paimon_type("STRING"), {"items": str(N), "fpp": "0.01"})
        b.add_column(self.str_col)
        b.to_bytes()

    def track_build_int64_keys_per_second(self):
        t = time.perf_counter()
        self.time_build_int64()
        return N / (time.perf_counter() - t)
    track_build_int64_keys_per_second.unit = "keys/s"

    def track_build_strings_keys_per_second(self):
        t = time.perf_counter()
        self.time_build_strings()
        return N / (time.perf_counter() - t)
    track_build_strings_keys_per_second.unit = "keys/s"


class BitmapAndBsi:
    """1M rows, 10k distinct values (pypaimon has no bitmap/BSI file index)."""
    timeout = 300

    def setup(self):
        from paimon_engine.batch import Column
        from paimon_engine.index import BitmapIndex, BsiIndex
        T = _types()
        rng = np.random.default_rng(1)
        self.values = rng.integers(0, DISTINCT, N).astype(np.int64) * 7919 - 5_000_000
        self.col = Column.from_arrow(pa.array(self.values))
        b = BitmapIndex(T.BigIntType())
        b.add_column(self.col)
        self.bitmap_bytes = b.to_bytes()
        s = BsiIndex(T.BigIntType())
        s.add_column(self.col)
        self.bsi_bytes = s.to_bytes()
        self.bsi = BsiIndex.from_bytes(self.bsi_bytes, T.BigIntType())
        self.key = int(self.values[12345])

    def time_bitmap_v2_build(self):
        from paimon_engine.index import BitmapIndex
        b = BitmapIndex(_types().BigIntType())
        b.add_column(self.col)
        b.to_bytes()

    def time_bsi_build(self):
        from paimon_engine.index import BsiIndex
        b = BsiIndex(_types().BigIntType())
        b.add_column(self.col)
        b.to_bytes()

    def time_bitmap_eq_lazy(self):
        """Open the v2 index over a range reader and answer one ``eq``."""
        from paimon_engine.index import BitmapIndex
        data = self.bitmap_bytes
        r = BitmapIndex.open(lambda off, n: data[off:off + n], len(data), _types().BigIntType())
        r.eq(self.key)

    def track_bitmap_eq_bytes_read(self):
        from paimon_engine.index import BitmapIndex
        data = self.bitmap_bytes
        r = BitmapIndex.open(lambda off, n: data[off:off + n], len(data), _types().BigIntType())
        r.eq(self.key)
        return r.src.bytes_read
    track_bitmap_eq_bytes_read.unit = "bytes"

    def time_bsi_range(self):
        self.bsi.between(-1_000_000, 20_000_000)

    def time_bsi_open_and_range(self):
        from paimon_engine.index import BsiIndex
        BsiIndex.from_bytes(self.bsi_bytes, _types().BigIntType()).lt(0)


class DeletionVectors:
    params = PEERS
    param_names = ["impl"]

    def setup(self, impl):
        from paimon_engine.index import DeletionVector
        rng = np.random.default_rng(2)
        pos = np.unique(rng.integers(0, 10_000_000, 100_000))
        self.entry = DeletionVector(pos).serialize()
        self.bitmap_part = self.entry[8:-4]

    def time_deserialize(self, impl):
        if impl == "paimon_engine":
            from paimon_engine.index import DeletionVector
            DeletionVector.deserialize(self.entry)
        else:
            from pypaimon.deletionvectors.bitmap_deletion_vector import BitmapDeletionVector
            BitmapDeletionVector.deserialize_from_bytes(self.bitmap_part)

    def time_keep_mask_1m(self, impl):
        if impl != "paimon_engine":
            from pypaimon.deletionvectors.bitmap_deletion_vector import BitmapDeletionVector
            dv = BitmapDeletionVector.deserialize_from_bytes(self.bitmap_part)
            np.fromiter((not dv.is_deleted(i) for i in range(1_000_000)), dtype=bool, count=1_000_000)
            return
        from paimon_engine.index import DeletionVector
        DeletionVector.deserialize(self.entry).keep_mask(0, 1_000_000)


class PointQuery:
    """End to end on a 1M-row ``.row`` file (64 KiB blocks) with a bitmap index on ``id``: ``id = x``.

    ``paimon_engine`` opens the index container lazily, answers ``eq`` and reads the selected rows (one block);
    ``full_scan`` reads the whole file and filters with NumPy, the cost without an index. ``blocks_read`` tracks
    how many blocks the indexed query decodes.
    """
    params = (["paimon_engine", "full_scan"],)
    param_names = ["impl"]
    timeout = 600

    def setup_cache(self):
        import os
        import tempfile

        from paimon_engine.batch import ColumnBatch
        from paimon_engine.formats.row import RowFileWriter
        from paimon_engine.index import FileIndexBuilder
        T = _types()
        schema = T.parse_paimon_type("ROW<id BIGINT, price DOUBLE, name STRING>")
        rng = np.random.default_rng(5)
        ids = rng.permutation(N).astype(np.int64)
        batch = ColumnBatch.from_arrow(pa.table({"id": ids, "price": rng.random(N),
                                                 "name": pa.array([f"item-{i:07d}" for i in range(N)])}), schema)
        d = tempfile.mkdtemp(prefix="pe-point-")
        path = os.path.join(d, "f.row")
        with RowFileWriter(path, schema, block_size=65536) as w:
            w.write(batch)
        b = FileIndexBuilder(schema, {"file-index.bitmap.columns": "id"})
        b.add(batch)
        with open(path + ".index", "wb") as f:
            f.write(b.finish())
        return path, int(ids[N // 3])

    def _query(self, cache, impl):
        from paimon_engine.expressions import col
        from paimon_engine.formats.row import RowFileReader
        from paimon_engine.index import FileIndexReader, evaluate_file_index
        from paimon_engine.io import FileIO
        path, key = cache
        T = _types()
        schema = T.parse_paimon_type("ROW<id BIGINT, price DOUBLE, name STRING>")
        reader = RowFileReader(path, schema)
        if impl == "full_scan":
            batch = reader.read_all()
            ids = batch.column("id").to_numpy()
            np.flatnonzero(np.asarray(ids) == key)
            return reader
        index = FileIndexReader(FileIO().open_input(path + ".index"), schema=schema)
        result = evaluate_file_index(col("id") == key, index)
        reader.read_all(selection=result.selection(reader.num_rows))
        return reader

    def time_point_query(self, cache, impl):
        self._query(cache, impl)

    def track_blocks_read(self, cache, impl):
        return self._query(cache, impl).blocks_read
