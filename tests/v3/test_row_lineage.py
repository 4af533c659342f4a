"""Row lineage on format version 3 tables: ``_row_id`` and ``_last_updated_sequence_number`` as metadata columns
(inherited from ``first_row_id`` and the data sequence number, or read from the file), kept by rewrites."""
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_engine.scan.reader import LAST_UPDATED_FIELD_ID, ROW_ID_FIELD_ID

LINEAGE = ["id", "_row_id", "_last_updated_sequence_number"]


def _catalog(tmp_path):
    from paimon_engine.catalog import SqlCatalog
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    return cat


def _rows(n, start=0):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64()),
                     "v": [f"v{i}" for i in range(start, start + n)]})


def _lineage(t, **kw):
    """{id: (row id, last updated sequence number)}"""
    got = t.scan(columns=LINEAGE, **kw).to_arrow().to_pydict()
    return {i: (r, s) for i, r, s in zip(got["id"], got["_row_id"], got["_last_updated_sequence_number"])}


@pytest.fixture
def table(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _rows(1).schema, format_version=3)
    t.append(_rows(5))                 # sequence number 1, row ids 0..4
    t.append(_rows(3, start=5))        # sequence number 2, row ids 5..7
    return t


def test_inherited_from_first_row_id_and_data_sequence_number(table):
    assert _lineage(table) == {0: (0, 1), 1: (1, 1), 2: (2, 1), 3: (3, 1), 4: (4, 1),
                               5: (5, 2), 6: (6, 2), 7: (7, 2)}
    # output types and field ids are the spec's
    sch = table.scan(columns=["_row_id", "_last_updated_sequence_number"]).to_arrow().schema
    assert [(f.name, f.type, f.metadata[b"PARQUET:field_id"]) for f in sch] == [
        ("_row_id", pa.int64(), str(ROW_ID_FIELD_ID).encode()),
        ("_last_updated_sequence_number", pa.int64(), str(LAST_UPDATED_FIELD_ID).encode())]


def test_with_deletion_vectors_filters_and_batches(table):
    table.delete("id = 1 or id = 6")
    want = {0: (0, 1), 2: (2, 1), 3: (3, 1), 4: (4, 1), 5: (5, 2), 7: (7, 2)}
    assert _lineage(table) == want
    assert _lineage(table, filter="id >= 3") == {k: v for k, v in want.items() if k >= 3}
    got = pa.Table.from_batches(list(table.scan(columns=["id", "_row_id"]).to_batches(batch_size=2)))
    assert dict(zip(got.column("id").to_pylist(), got.column("_row_id").to_pylist())) == \
        {k: v[0] for k, v in want.items()}
    # only the row id, no data column
    assert sorted(table.scan(columns=["_row_id"]).to_arrow().column(0).to_pylist()) == [0, 2, 3, 4, 5, 7]


def test_copy_on_write_delete_and_overwrite_keep_lineage(table):
    table.delete("id = 6", mode="copy-on-write")
    want = {0: (0, 1), 1: (1, 1), 2: (2, 1), 3: (3, 1), 4: (4, 1), 5: (5, 2), 7: (7, 2)}
    assert _lineage(table) == want
    # the rewritten file stores the moved rows' lineage (its own first_row_id is a fresh range)
    (moved,) = [e.data_file for e in table.data_files() if e.data_file.record_count == 2]
    assert moved.first_row_id == 8
    stored = pq.read_table(moved.file_path.removeprefix("file://"))
    assert stored.column("_row_id").to_pylist() == [5, 7]
    assert stored.column("_last_updated_sequence_number").to_pylist() == [2, 2]
    ids = {f.name: f.metadata[b"PARQUET:field_id"] for f in stored.schema}
    assert ids["_row_id"] == str(ROW_ID_FIELD_ID).encode()
    assert ids["_last_updated_sequence_number"] == str(LAST_UPDATED_FIELD_ID).encode()
    # an overwrite moves the kept rows with their lineage; its new rows get new ids and its sequence number
    table.overwrite(_rows(1, start=100), filter="id = 0")
    seq = table.current_snapshot().sequence_number
    got = _lineage(table)
    assert {k: got[k] for k in want if k != 0} == {k: v for k, v in want.items() if k != 0}
    new_id, new_seq = got[100]
    assert new_seq == seq and new_id >= 10 and new_id not in {v[0] for v in want.values()}


def test_rewrite_files_keeps_lineage_and_time_travel_sees_the_old_files(table):
    table.delete("id = 2")
    before = _lineage(table)
    old_snapshot = table.current_snapshot().snapshot_id
    table.rewrite_files()
    assert len(table.data_files()) == 1 and not table.delete_files()
    assert _lineage(table) == before
    assert _lineage(table, snapshot_id=old_snapshot) == before
    # appends after the rewrite continue from next-row-id
    n = table.metadata.next_row_id
    table.append(_rows(1, start=50))
    assert _lineage(table)[50] == (n, table.current_snapshot().sequence_number)


def test_upgraded_table_rows_have_no_lineage_until_a_v3_commit(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _rows(1).schema, format_version=2)
    t.append(_rows(3))
    t.upgrade_format_version(3)
    assert _lineage(t) == {0: (None, None), 1: (None, None), 2: (None, None)}
    t.append(_rows(2, start=3))
    # the first v3 commit gives the old manifest a first_row_id (as Iceberg Java does), then the new one
    got = _lineage(t)
    assert sorted(got[i][0] for i in range(5)) == [0, 1, 2, 3, 4]
    assert got[0][1] == 1 and got[3][1] == 2
    assert t.metadata.next_row_id == 5


def test_v2_tables_read_null_lineage(tmp_path):
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _rows(1).schema, format_version=2)
    t.append(_rows(2))
    assert _lineage(t) == {0: (None, None), 1: (None, None)}


def test_a_lineage_column_stored_with_another_type_is_corrupt(tmp_path):
    from paimon_engine.errors import CorruptFileError
    cat = _catalog(tmp_path)
    t = cat.create_table("db.t", _rows(1).schema, format_version=3)
    t.append(_rows(2))
    (e,) = t.data_files()
    path = e.data_file.file_path.removeprefix("file://")
    stored = pq.read_table(path)
    pq.write_table(stored.append_column(
        pa.field("_row_id", pa.string(), metadata={b"PARQUET:field_id": str(ROW_ID_FIELD_ID).encode()}),
        pa.array(["x", "y"])), path)
    assert t.scan(columns=["id", "v"]).to_arrow().num_rows == 2        # not read unless asked for
    with pytest.raises(CorruptFileError, match="_row_id.*string") as info:
        t.scan(columns=["id", "_row_id"]).to_arrow()
    assert info.value.path == e.data_file.file_path
