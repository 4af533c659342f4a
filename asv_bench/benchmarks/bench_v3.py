"""Format version 3 deletes: deletion vectors against position-delete files, and the DV codecs.

* reading 2M rows with 5% of them deleted, through v2 position-delete files and through v3 deletion vectors
  (paimon_engine and pyiceberg on the same tables);
* decoding the deleted positions of one data file: Iceberg ``deletion-vector-v1`` against Paimon's 32-bit
  deletion vector holding the same positions, and the keep-mask built from them.
"""
import tempfile

import numpy as np
import pyarrow as pa

N_ROWS = 2_000_000


def _build(root):
    from paimon_engine.expressions import col
    from paimon_engine.catalog import SqlCatalog
    cat = SqlCatalog("default", uri=f"sqlite:///{root}/cat.db", warehouse=f"{root}/wh")
    cat.create_namespace("db")
    rng = np.random.default_rng(0)

    def chunk(lo, hi):
        n = hi - lo
        return pa.table({"id": pa.array(np.arange(lo, hi, dtype=np.int64)),
                         "k": pa.array(rng.integers(0, 1000, n).astype(np.int32)),
                         "v": pa.array(rng.random(n)),
                         "s": pa.array(np.char.add("s", (np.arange(lo, hi) % 1000).astype(str)))})
    doomed = rng.choice(N_ROWS, N_ROWS // 20, replace=False).tolist()
    for name, fv in (("posdel", 2), ("dvdel", 3)):
        t = cat.create_table(f"db.{name}", chunk(0, 1).schema, format_version=fv)
        for i in range(4):
            t.append(chunk(i * N_ROWS // 4, (i + 1) * N_ROWS // 4))
        t.delete(col("id").isin(doomed))


class ReadWithDeletes:
    params = (["paimon_engine", "pyiceberg"], ["position_files_v2", "deletion_vectors_v3"])
    param_names = ["impl", "deletes"]
    timeout = 900
    number = 1
    repeat = (5, 10, 60.0)
    warmup_time = 2.0

    def setup_cache(self):
        root = tempfile.mkdtemp(prefix="bench-v3-read-")
        _build(root)
        return root

    def setup(self, root, impl, deletes):
        name = "posdel" if deletes == "position_files_v2" else "dvdel"
        if impl == "paimon_engine":
            from paimon_engine.catalog import SqlCatalog
            t = SqlCatalog("default", uri=f"sqlite:///{root}/cat.db", warehouse=f"{root}/wh").load_table(
                f"db.{name}")
        else:
            from pyiceberg.catalog.sql import SqlCatalog as PyCatalog
            t = PyCatalog("default", uri=f"sqlite:///{root}/cat.db", warehouse=f"file://{root}/wh").load_table(
                f"db.{name}")
        self.run = lambda: t.scan().to_arrow()
        self.run()

    def time_to_arrow(self, root, impl, deletes):
        self.run()

    def peakmem_to_arrow(self, root, impl, deletes):
        self.run()


class DecodeDeletionVector:
    """One data file of 500k rows with 5% deleted: blob -> sorted positions -> keep-mask."""
    params = (["iceberg_dv_v1", "paimon_dv_32"],)
    param_names = ["codec"]

    def setup(self, codec):
        from paimon_engine.index.deletion_vector import DeletionVector, read_deletion_vector, \
            write_deletion_vector_index
        from paimon_engine.index.iceberg_deletion_vector import deserialize_deletion_vector, \
            serialize_deletion_vector
        from paimon_engine.scan.deletes import keep_mask
        rows = 500_000
        pos = np.unique(np.random.default_rng(1).integers(0, rows, rows // 20))
        if codec == "iceberg_dv_v1":
            blob = serialize_deletion_vector(pos)
            self.decode = lambda: deserialize_deletion_vector(blob, record_count=rows)
        else:
            data, metas = write_deletion_vector_index({"f": DeletionVector(pos)})
            meta = metas["f"]
            self.decode = lambda: np.frombuffer(read_deletion_vector(data, meta).bitmap.to_array(),
                                                np.uint32).astype(np.int64)
        self.apply = lambda: keep_mask(self.decode(), 0, rows)
        assert np.array_equal(self.decode(), pos)

    def time_decode(self, codec):
        self.decode()

    def time_decode_and_mask(self, codec):
        self.apply()
