"""A split of a data file applies the deletion vector of its own rows only: the vector is validated once and only
the positions inside the split's row span are expanded (Roaring range operations), for ``.row`` pieces (block
starts) and Parquet pieces (row-group starts) alike."""

import pickle

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.catalog import FileSystemCatalog
from paimon_engine.errors import CorruptFileError
from paimon_engine.expressions import col
from paimon_engine.index import iceberg_deletion_vector as idv
from paimon_engine.spark.planning import plan_groups
from paimon_engine.table import data_writer

N = 60_000
DELETED = [i for i in range(N) if i % 97 == 5]


def test_positions_of_a_range_match_the_full_vector():
    rng = np.random.default_rng(7)
    low = rng.choice(200_000, 5_000, replace=False)
    high = (3 << 32) + rng.choice(1 << 20, 2_000, replace=False)
    every = np.unique(np.concatenate([low, high, [(1 << 32) - 1, 1 << 32]]).astype(np.int64))
    dv = idv.parse_deletion_vector(idv.serialize_deletion_vector(every), cardinality=every.size)
    assert dv.cardinality == every.size and dv.positions().tolist() == every.tolist()
    cuts = [0, 1, 5, 70_000, 199_999, (1 << 32) - 1, 1 << 32, (1 << 32) + 1, 3 << 32, (3 << 32) + 12_345,
            (3 << 32) + (1 << 20), 5 << 32]
    for lo in cuts:
        for hi in cuts:
            want = every[(every >= lo) & (every < hi)]
            assert dv.positions(lo, hi).tolist() == want.tolist(), (lo, hi)
    assert dv.positions(70_000).tolist() == every[every >= 70_000].tolist()


def test_a_vector_beyond_the_data_file_is_corrupt_before_any_range_is_expanded():
    blob = idv.serialize_deletion_vector([3, 99])
    with pytest.raises(CorruptFileError, match="beyond the data file's 50 rows"):
        idv.parse_deletion_vector(blob, "dv.puffin", 0, record_count=50)
    with pytest.raises(CorruptFileError, match="holds 2 positions"):
        idv.parse_deletion_vector(blob, "dv.puffin", 0, cardinality=3)


def _table(root, fmt, monkeypatch):
    if fmt == "parquet":
        # row groups of 10,000 rows, so the Parquet file splits at six row-group starts
        write = data_writer.write_parquet_file
        monkeypatch.setattr(data_writer, "write_parquet_file",
                            lambda *a, **k: write(*a, **{**k, "row_group_rows": 10_000}))
    loc = str(root / fmt)
    data = pa.table({"id": pa.array(np.arange(N), pa.int64()), "k": pa.array(np.arange(N) % 7, pa.int32()),
                     "s": pa.array([f"value-{i % 1013}" for i in range(N)])})
    t = FileSystemCatalog(str(root)).create_table_at(loc, data.schema, format_version=3,
                                                     properties={"write.format.default": fmt})
    t.append(data)
    t.delete(col("id").isin(DELETED))          # one deletion vector with positions all over the file
    monkeypatch.undo()
    return FileSystemCatalog(str(root)).load_table_at(loc)


@pytest.mark.parametrize("fmt", ["row", "parquet"])
def test_each_piece_expands_only_the_positions_of_its_rows(fmt, tmp_path, monkeypatch):
    table = _table(tmp_path, fmt, monkeypatch)
    scan = table.scan(columns=["id", "k", "s", "_pos"])
    files = scan.plan_files()
    assert len(files) == 1 and files[0].file_format == fmt
    assert [d.is_deletion_vector for d in files[0].deletes] == [True]
    groups, _ = plan_groups(scan, split_size=files[0].file_size // 5)
    pieces = [t for g in groups for t in g]
    assert len(pieces) >= 3

    calls = []
    positions = idv.DeletionVector.positions

    def recording(self, lo=0, hi=None):
        out = positions(self, lo, hi)
        calls.append((lo, hi, out))
        return out
    monkeypatch.setattr(idv.DeletionVector, "positions", recording)

    shipped = pickle.dumps(scan.task_reader())
    got, spans, decoded = [], [], []
    for piece in pieces:
        reader = pickle.loads(shipped)          # every piece on a fresh reader, as on an executor
        calls.clear()
        tbl = pa.Table.from_batches(list(reader.read_task(piece)), reader.output_schema)
        assert len(calls) == 1, "a piece expands its deletion vector once, for its own rows"
        lo, hi, out = calls[0]
        assert hi is not None and 0 <= lo < hi <= N
        assert out.size == 0 or (int(out.min()) >= lo and int(out.max()) < hi)
        pos = tbl.column("_pos").to_numpy()
        assert pos.size and int(pos.min()) >= lo and int(pos.max()) < hi
        spans.append((lo, hi))
        decoded.append(out)
        got.append(tbl)
    # the spans tile the file and each deleted position was expanded by exactly one piece
    assert spans[0][0] == 0 and spans[-1][1] == N and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    assert np.concatenate(decoded).tolist() == DELETED
    assert all(d.size < len(DELETED) for d in decoded)
    want = scan.to_arrow()
    assert want.num_rows == N - len(DELETED)
    assert pa.concat_tables(got).sort_by("id").equals(want.sort_by("id"))
