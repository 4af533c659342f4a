import pickle
import struct

from paimon_engine import types as T
from paimon_engine.scan.delete_index import (DeleteFile, DeleteFileIndex, EQUALITY, FILE_PATH_ID, POSITION)
from paimon_engine.scan.evaluators import FileStats


def pos(path, seq, part=(1,), spec=1, ref=None, fmt="parquet", stats=None):
    return DeleteFile(path, POSITION, fmt, seq, spec, part, referenced_data_file=ref, stats=stats)


def eq(path, seq, part=(1,), spec=1, ids=(1,), stats=None):
    return DeleteFile(path, EQUALITY, "parquet", seq, spec, part, equality_ids=ids, stats=stats)


def names(files):
    return [d.path for d in files]


def test_position_deletes_seq_le_and_same_partition():
    idx = DeleteFileIndex([pos("p3", 3), pos("p5", 5), pos("other", 9, part=(2,)), pos("otherspec", 9, spec=2)],
                          unpartitioned_specs={0})
    assert names(idx.for_data_file("d", 3, 1, (1,))) == ["p3", "p5"]   # seq equal applies
    assert names(idx.for_data_file("d", 4, 1, (1,))) == ["p5"]
    assert names(idx.for_data_file("d", 6, 1, (1,))) == []
    assert names(idx.for_data_file("d", 1, 1, (2,))) == ["other"]


def test_referenced_data_file_and_path_bounds():
    st = FileStats(1, lower_bounds={FILE_PATH_ID: b"s3://b/a"}, upper_bounds={FILE_PATH_ID: b"s3://b/c"})
    idx = DeleteFileIndex([pos("r", 5, ref="s3://b/x"), pos("bounded", 5, stats=st)])
    assert names(idx.for_data_file("s3://b/x", 1, 1, (1,))) == ["r"]
    assert names(idx.for_data_file("s3://b/b1", 1, 1, (1,))) == ["bounded"]
    assert names(idx.for_data_file("s3://b/y", 1, 1, (1,))) == []


def test_deletion_vector_hides_position_files():
    idx = DeleteFileIndex([pos("p", 5), pos("dv1", 6, ref="f", fmt="puffin"), pos("pf", 6, ref="f")])
    assert names(idx.for_data_file("f", 1, 1, (1,))) == ["dv1"]
    assert names(idx.for_data_file("f", 6, 1, (1,))) == ["dv1"]
    assert names(idx.for_data_file("f", 7, 1, (1,))) == []
    assert names(idx.for_data_file("g", 1, 1, (1,))) == ["p"]


def test_two_deletion_vectors_for_one_data_file_are_refused():
    import pytest
    from paimon_engine.errors import CorruptFileError
    with pytest.raises(CorruptFileError, match="two deletion vectors for data file f") as ei:
        DeleteFileIndex([pos("dv1", 6, ref="f", fmt="puffin"), pos("dv0", 2, ref="f", fmt="puffin")])
    assert ei.value.path == "dv0" and "dv1" in str(ei.value)


def test_equality_strictly_newer_partition_and_global():
    idx = DeleteFileIndex([eq("e3", 3), eq("e5", 5, part=(2,)), eq("g4", 4, part=(), spec=0)], unpartitioned_specs={0})
    assert names(idx.for_data_file("d", 2, 1, (1,))) == ["e3", "g4"]
    assert names(idx.for_data_file("d", 3, 1, (1,))) == ["g4"]        # equal seq does not apply
    assert names(idx.for_data_file("d", 4, 1, (1,))) == []
    assert names(idx.for_data_file("d", 1, 1, (2,))) == ["g4", "e5"]
    # data in the unpartitioned spec sees global deletes
    assert names(idx.for_data_file("d", 1, 0, ())) == ["g4"]


def test_equality_deletes_pruned_by_key_ranges():
    L = lambda v: struct.pack("<q", v)
    dstats = FileStats(3, null_counts={1: 0}, value_counts={1: 3}, lower_bounds={1: L(100)}, upper_bounds={1: L(200)})
    idx = DeleteFileIndex([eq("e", 5, stats=dstats)], types_by_id={1: T.BigIntType()})
    far = FileStats(10, null_counts={1: 0}, value_counts={1: 10}, lower_bounds={1: L(0)}, upper_bounds={1: L(50)})
    near = FileStats(10, null_counts={1: 0}, value_counts={1: 10}, lower_bounds={1: L(0)}, upper_bounds={1: L(150)})
    assert names(idx.for_data_file("d", 1, 1, (1,), far)) == []
    assert names(idx.for_data_file("d", 1, 1, (1,), near)) == ["e"]
    # null keys meet null rows whatever the ranges
    nstats = FileStats(3, null_counts={1: 1}, value_counts={1: 3}, lower_bounds={1: L(100)}, upper_bounds={1: L(200)})
    idx = DeleteFileIndex([eq("n", 5, stats=nstats)], types_by_id={1: T.BigIntType()})
    farnull = FileStats(10, null_counts={1: 2}, value_counts={1: 10}, lower_bounds={1: L(0)}, upper_bounds={1: L(50)})
    assert names(idx.for_data_file("d", 1, 1, (1,), farnull)) == ["n"]
    assert names(idx.for_data_file("d", 1, 1, (1,), far)) == []


def test_delete_file_pickles_without_stats():
    d = pos("p", 1, stats=FileStats(1))
    d2 = pickle.loads(pickle.dumps(d))
    assert d2.path == "p" and d2.stats is None and d.stats is not None
