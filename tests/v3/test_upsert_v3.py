"""upsert() on format version 3 tables: the replaced rows are deleted through deletion vectors and their new
versions keep their row ids (Iceberg Java's merge-on-read MERGE/UPDATE), all in one snapshot."""
import pyarrow as pa
import pytest

from paimon_engine.errors import CommitFailedError

LINEAGE = ["id", "v", "_row_id", "_last_updated_sequence_number"]


def _catalog(tmp_path):
    from paimon_engine.catalog import SqlCatalog
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    return cat


def _rows(ids, tag="v"):
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{tag}{i}" for i in ids]})


def _state(t, **kw):
    got = t.scan(columns=LINEAGE, **kw).to_arrow().to_pydict()
    return {i: (v, r, s) for i, v, r, s in zip(*(got[c] for c in LINEAGE))}


def _pyiceberg_rows(tmp_path, name="db.t"):
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog
    theirs = PySqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    got = theirs.load_table(name).scan().to_arrow().to_pydict()
    return dict(zip(got["id"], got["v"]))


def test_upsert_writes_deletion_vectors_and_keeps_row_ids(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _rows([0]).schema, format_version=3)
    t.append(_rows(range(6)))                                    # seq 1, row ids 0..5
    res = t.upsert(pa.concat_tables([_rows([1, 4], "new"), _rows([2]), _rows([9], "new")]), join_cols=["id"])
    assert (res.rows_updated, res.rows_inserted) == (2, 1)       # id 2 is unchanged
    snap = t.current_snapshot()
    assert snap.summary["operation"] == "overwrite"
    assert snap.summary["added-dvs"] == "1" and "added-equality-delete-files" not in snap.summary
    (dv,) = [e.data_file for e in t.delete_files()]
    assert dv.file_format == "PUFFIN" and dv.record_count == 2
    seq = snap.sequence_number
    got = _state(t)
    assert {i: got[i] for i in (0, 2, 3, 5)} == {0: ("v0", 0, 1), 2: ("v2", 2, 1), 3: ("v3", 3, 1),
                                                 5: ("v5", 5, 1)}
    # updated rows keep their ids and read as last updated by the upsert's commit
    assert got[1] == ("new1", 1, seq) and got[4] == ("new4", 4, seq)
    # the inserted row gets a new id from this commit's range
    assert got[9][0] == "new9" and got[9][2] == seq and got[9][1] >= 6
    assert len({r for _, r, _ in got.values()}) == len(got)
    # a second upsert of the same row merges into the file's vector (one vector per data file)
    t.upsert(_rows([3], "again"), join_cols=["id"])
    assert _state(t)[3] == ("again3", 3, t.current_snapshot().sequence_number)
    ref = {}
    for e in t.delete_files():
        assert e.data_file.referenced_data_file not in ref
        ref[e.data_file.referenced_data_file] = e.data_file.record_count
    # an updated row is updated again: its id still holds
    t.upsert(_rows([1], "third"), join_cols=["id"])
    assert _state(t)[1][:2] == ("third1", 1)
    assert _pyiceberg_rows(tmp_path) == {i: v for i, (v, _, _) in _state(t).items()}


def test_upsert_replacing_every_row_of_a_file_removes_it(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _rows([0]).schema, format_version=3)
    t.append(_rows([0, 1]))
    t.append(_rows([2, 3]))
    t.upsert(_rows([0, 1], "new"), join_cols=["id"])
    assert not t.delete_files() and len(t.data_files()) == 2
    assert _state(t) == {0: ("new0", 0, 3), 1: ("new1", 1, 3), 2: ("v2", 2, 2), 3: ("v3", 3, 2)}


def test_upsert_inserts_only_is_an_append_with_new_ids(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _rows([0]).schema, format_version=3)
    t.append(_rows([0, 1]))
    res = t.upsert(_rows([1, 5]), join_cols=["id"])
    assert (res.rows_updated, res.rows_inserted) == (0, 1)
    assert not t.delete_files()
    assert _state(t)[5] == ("v5", 2, 2)


def test_concurrent_delete_of_the_same_file_fails_the_upsert(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _rows([0]).schema, format_version=3)
    t.append(_rows(range(4)))
    a, b = cat.load_table("db.t"), cat.load_table("db.t")
    a.delete("id = 0")
    with pytest.raises(CommitFailedError):
        b.upsert(_rows([2], "new"), join_cols=["id"])
    t = cat.load_table("db.t")
    assert {i: v for i, (v, _, _) in _state(t).items()} == {1: "v1", 2: "v2", 3: "v3"}


def test_partitioned_upsert_replaces_a_row_that_moves_to_another_partition(tmp_path):
    cat = _catalog(tmp_path)
    schema = pa.schema([("id", pa.int64()), ("p", pa.string())])
    t = cat.create_table("db.t", schema, [("p", "identity")], format_version=3)
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "p": ["a", "b"]}))
    t.upsert(pa.table({"id": pa.array([1], pa.int64()), "p": ["b"]}), join_cols=["id"])
    got = t.scan(columns=["id", "p", "_row_id"]).to_arrow().sort_by("id").to_pylist()
    assert got == [{"id": 1, "p": "b", "_row_id": 0}, {"id": 2, "p": "b", "_row_id": 1}]
    # partition a's only file lost its only row: removed, not given a full vector
    assert not t.delete_files() and all("/p=a/" not in e.data_file.file_path for e in t.data_files())


def test_transaction_of_deletes_and_an_upsert_on_v3(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _rows([0]).schema, format_version=3)
    t.append(_rows(range(6)))
    with t.transaction() as tx:
        tx.delete("id = 0")
        tx.delete("id = 1")                           # merged with the vector staged just before
        tx.upsert(_rows([2], "new"), join_cols=["id"])
    t = cat.load_table("db.t")
    (dv,) = [e.data_file for e in t.delete_files()]
    assert dv.file_format == "PUFFIN" and dv.record_count == 3
    got = _state(t)
    assert sorted(got) == [2, 3, 4, 5] and got[2][:2] == ("new2", 2)
