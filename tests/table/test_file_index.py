"""Paimon file indexes written with table data files and used by scan planning."""
import os

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.errors import InvalidArgumentError
from paimon_engine.expressions import col
from paimon_engine.catalog import FileSystemCatalog

INDEXED = {"file-index.bitmap.columns": "k", "file-index.bloom-filter.columns": "name",
           "file-index.bloom-filter.items": "100",
           "file-index.bsi.columns": "id"}


def batch(ks, start):
    n = len(ks)
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "k": pa.array(ks, pa.int32()),
                     "name": pa.array([f"n{start + i}" for i in range(n)])})


def make(tmp_path, fmt, **extra):
    cat = FileSystemCatalog(str(tmp_path))
    props = dict(INDEXED, **{"write.format.default": fmt, "file-index.in-manifest-threshold": "100000"})
    props.update(extra)
    t = cat.create_table("db.t", batch([0], 0).schema, properties=props)
    # min/max of k overlap in both files, so column metrics cannot prune; the bitmap index can
    t.append(batch([0, 2, 4, 2, 0, 4], 0))
    t.append(batch([1, 3, 5, 3, 1, 5], 100))
    return t


def rows(t, expr):
    return sorted(t.scan(filter=expr).to_arrow().column("id").to_pylist())


@pytest.mark.parametrize("fmt", ["row", "parquet"])
def test_index_prunes_files_and_selects_rows(tmp_path, fmt):
    t = make(tmp_path, fmt)
    assert all(e.data_file.file_index.startswith("base64:") for e in t.data_files())
    scan = t.scan(filter=col("k") == 3)
    tasks = scan.plan_files()
    assert scan.files_skipped_by_index == 1
    assert len(tasks) == 1 and sorted(tasks[0].selection) == [1, 3]
    assert rows(t, col("k") == 3) == [101, 103]
    # bloom filter on strings: a name that is in no file skips both
    scan = t.scan(filter=col("name") == "n1000")  # inside both files' min/max, in neither
    assert scan.plan_files() == [] and scan.files_skipped_by_index == 2
    assert rows(t, col("name") == "n104") == [104]
    # BSI range, combined with the bitmap
    assert rows(t, (col("id") >= 102) & (col("k") == 5)) == [102, 105]
    assert rows(t, (col("k") == 0) | (col("k") == 5)) == [0, 4, 102, 105]
    # a filter the indexes cannot answer reads everything
    assert rows(t, col("name").starts_with("n10")) == [100, 101, 102, 103, 104, 105]


def test_large_index_goes_to_a_file_beside_the_data(tmp_path):
    t = make(tmp_path, "row", **{"file-index.in-manifest-threshold": "16"})
    locs = [e.data_file.file_index for e in t.data_files()]
    assert all(loc.endswith(".row.index") for loc in locs)
    assert all(os.path.exists(loc.replace("file://", "")) for loc in locs)
    scan = t.scan(filter=col("k") == 2)
    assert len(scan.plan_files()) == 1 and scan.files_skipped_by_index == 1
    assert rows(t, col("k") == 2) == [1, 3]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="open descriptors are listed in /proc on Linux")
def test_planning_with_index_files_leaves_no_file_open(tmp_path):
    """Planning reads each data file's index file and closes it: no descriptor is left open after plans and reads
    that use the index files, nor after one whose index file is corrupt."""
    from paimon_engine.errors import CorruptFileError
    from paimon_engine.index.container import load_file_index
    t = make(tmp_path, "row", **{"file-index.in-manifest-threshold": "16"})
    before = set(os.listdir("/proc/self/fd"))
    for _ in range(3):
        assert len(t.scan(filter=col("k") == 2).plan_files()) == 1
        assert rows(t, col("k") == 2) == [1, 3]
    assert set(os.listdir("/proc/self/fd")) == before
    loc = t.data_files()[0].data_file.file_index
    with open(loc.replace("file://", ""), "r+b") as f:
        f.write(b"\0" * 8)  # the header's magic number
    with pytest.raises(CorruptFileError):
        load_file_index(t.io, loc)
    assert set(os.listdir("/proc/self/fd")) == before
    with load_file_index(t.io, t.data_files()[1].data_file.file_index) as reader:
        assert reader.columns()
    assert set(os.listdir("/proc/self/fd")) == before
    with pytest.raises(InvalidArgumentError, match="closed"):
        reader.index_bytes("k", reader.index_types("k")[0])


def test_index_follows_renamed_columns_and_can_be_switched_off(tmp_path):
    t = make(tmp_path, "row")
    with t.update_schema() as u:
        u.rename_column("k", "kk")
    scan = t.scan(filter=col("kk") == 3)
    assert len(scan.plan_files()) == 1 and scan.files_skipped_by_index == 1
    assert rows(t, col("kk") == 3) == [101, 103]
    t2 = make(tmp_path / "off", "row", **{"file-index.read.enabled": "false"})
    scan = t2.scan(filter=col("k") == 3)
    assert len(scan.plan_files()) == 2 and scan.files_skipped_by_index == 0
    assert rows(t2, col("k") == 3) == [101, 103]


def test_deletes_and_index_selection_combine(tmp_path):
    t = make(tmp_path, "row")
    t.delete(col("id") == 101)
    assert rows(t, col("k") == 3) == [103]
    assert rows(t, col("k") == 1) == [100, 104]


def test_bad_index_options_fail_before_writing(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", batch([0], 0).schema,
                         properties={"write.format.default": "row", "file-index.bitmap.columns": "nope"})
    with pytest.raises(Exception, match="nope"):
        t.append(batch([1, 2], 0))
    t2 = cat.create_table("db.t2", batch([0], 0).schema,
                          properties={"write.format.default": "row", "file-index.bitmap.colums": "k"})
    with pytest.raises(InvalidArgumentError, match="colums"):
        t2.append(batch([1, 2], 0))
    data_dir = tmp_path / "db" / "t" / "data"
    assert not data_dir.exists() or not any(data_dir.rglob("*.row"))


def test_corrupt_embedded_index_is_reported(tmp_path):
    from paimon_engine.errors import CorruptFileError
    from paimon_engine.index.container import load_file_index
    with pytest.raises(CorruptFileError):
        load_file_index(None, "base64:!!!not base64", path="x.row")
    with pytest.raises(CorruptFileError):
        load_file_index(None, "base64:" + "QUJD", path="x.row")
    assert np.array_equal(np.arange(3), np.arange(3))


def test_index_files_follow_their_data_files(tmp_path):
    t = make(tmp_path, "row", **{"file-index.in-manifest-threshold": "16"})
    locs = sorted(e.data_file.file_index for e in t.data_files())
    assert t.remove_orphan_files(older_than_ms=2 ** 62, dry_run=True) == []
    t.overwrite(batch([7, 7], 500))
    new = [e.data_file.file_index for e in t.data_files()]
    assert len(new) == 1 and new[0] not in locs
    t.expire_snapshots(retain_last=1)
    assert not any(os.path.exists(p) for p in locs)
    assert os.path.exists(new[0])
    assert rows(t, col("k") == 7) == [500, 501]
