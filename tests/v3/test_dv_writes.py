"""Merge-on-read deletes on format version 3 tables write deletion vectors in Puffin files."""
import pytest

from paimon_engine.errors import CommitFailedError, InvalidArgumentError
from paimon_engine.formats.puffin import PuffinReader
from paimon_engine.table.data_writer import write_position_deletes

from ..table.conftest import sample


def _catalog(tmp_path):
    from paimon_engine.catalog import SqlCatalog
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    return cat


def _ids(t, **kw):
    return sorted(t.scan(**kw).to_arrow().column("id").to_pylist())


def _deletes(t):
    return [e.data_file for e in t.delete_files()]


def _pyiceberg_ids(tmp_path, name="db.t"):
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog
    theirs = PySqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    return sorted(theirs.load_table(name).scan().to_arrow().column("id").to_pylist())


def test_deletes_write_one_merged_dv_per_data_file(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", sample().schema, format_version=3)
    t.append(sample(20))
    t.append(sample(10, start=20))
    first = t.current_snapshot().snapshot_id
    t.delete("id < 3 or id = 25")
    dvs = _deletes(t)
    assert sorted((d.file_format, d.record_count) for d in dvs) == [("PUFFIN", 1), ("PUFFIN", 3)]
    assert len({d.file_path for d in dvs}) == 1              # one Puffin file for the commit
    assert all(d.referenced_data_file and d.content_offset >= 4 and d.content_size_in_bytes for d in dvs)
    after_one = t.current_snapshot().snapshot_id
    s = t.current_snapshot().summary
    assert s["added-dvs"] == "2" and "added-position-delete-files" not in s
    # a second delete on a file with a vector writes the merged vector and removes the old one
    t.delete("id = 10")
    dvs = _deletes(t)
    assert sorted(d.record_count for d in dvs) == [1, 4]
    assert t.current_snapshot().summary["removed-dvs"] == "1"
    want = [i for i in range(30) if i not in (0, 1, 2, 10, 25)]
    assert _ids(t) == want
    assert _ids(cat.load_table("db.t")) == want
    assert _pyiceberg_ids(tmp_path) == want
    # time travel sees each snapshot's own vectors
    assert _ids(t, snapshot_id=first) == list(range(30))
    assert _ids(t, snapshot_id=after_one) == [i for i in range(30) if i not in (0, 1, 2, 25)]
    # the Puffin file is what the spec (and Iceberg Java) writes
    merged = next(d for d in dvs if d.record_count == 4)
    r = PuffinReader(t.io.read_bytes(merged.file_path), merged.file_path)
    (blob,) = r.blobs
    assert (blob.type, blob.fields, blob.snapshot_id, blob.sequence_number, blob.compression_codec) == \
        ("deletion-vector-v1", [2147483545], -1, -1, None)
    assert blob.properties == {"referenced-data-file": merged.referenced_data_file, "cardinality": "4"}
    assert (blob.offset, blob.length) == (merged.content_offset, merged.content_size_in_bytes)
    assert r.properties["created-by"]


def test_deleting_every_row_removes_the_file_and_its_dv(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", sample().schema, format_version=3)
    t.append(sample(5))
    t.append(sample(5, start=5))
    t.delete("id = 1")
    assert len(_deletes(t)) == 1
    t.delete("id < 5")
    assert _deletes(t) == [] and len(t.data_files()) == 1
    assert _ids(t) == list(range(5, 10))


def test_upgraded_v2_position_deletes_are_folded_into_the_dv(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", sample().schema, format_version=2)
    t.append(sample(20))
    t.delete("id in (1, 2)")
    (pos,) = _deletes(t)
    assert pos.file_format == "PARQUET"
    t.upgrade_format_version(3)
    t = cat.load_table("db.t")
    assert _ids(t) == [i for i in range(20) if i not in (1, 2)]
    t.delete("id = 7")
    (dv,) = _deletes(t)                                  # the position-delete file went in the same commit
    assert dv.file_format == "PUFFIN" and dv.record_count == 3
    assert _ids(t) == [i for i in range(20) if i not in (1, 2, 7)]
    assert _pyiceberg_ids(tmp_path) == [i for i in range(20) if i not in (1, 2, 7)]
    s = t.current_snapshot().summary
    assert s["removed-position-delete-files"] == "1" and s["added-dvs"] == "1"


def test_v3_refuses_position_delete_files(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", sample().schema, format_version=3)
    t.append(sample(5))
    (df,) = [e.data_file for e in t.data_files()]
    pdf = write_position_deletes(t.io, f"{t.location}/data/x-deletes.parquet", df.file_path, [1], (), 0)
    with pytest.raises(InvalidArgumentError, match="deletion vectors"):
        t.row_delta().add_delete_file(pdf).commit()
    assert _ids(t) == list(range(5))


def test_concurrent_dvs_for_one_data_file_conflict(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", sample().schema, format_version=3)
    t.append(sample(10))
    a, b = cat.load_table("db.t"), cat.load_table("db.t")
    a.delete("id = 1")
    with pytest.raises(CommitFailedError, match="deletion vector"):
        b.delete("id = 2")
    t = cat.load_table("db.t")
    assert len(_deletes(t)) == 1 and _ids(t) == [i for i in range(10) if i != 1]


def test_equality_deletes_still_work_on_v3(tmp_path):
    # v3 allows equality deletes (what streaming writers such as Flink's upsert mode write): mode="equality" and
    # row_delta().delete_keys() keep writing them; upsert() writes deletion vectors (tests/v3/test_upsert_v3.py)
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", sample().schema, format_version=3)
    t.append(sample(6))
    t.delete("id = 5", mode="equality", equality_columns=["id"])
    t.delete("id = 0")
    assert _ids(t) == [1, 2, 3, 4]
    assert sorted(d.file_format for d in _deletes(t)) == ["PARQUET", "PUFFIN"]   # equality deletes, one DV
    assert sorted(d.content for d in _deletes(t)) == [1, 2]
    with pytest.raises(ValueError, match="equality deletes"):     # pyiceberg 0.12 reads no equality deletes
        _pyiceberg_ids(tmp_path)
