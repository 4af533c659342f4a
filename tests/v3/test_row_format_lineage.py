"""Row lineage in tables whose data files are Paimon ``.row`` files: a rewrite stores the moved rows'
``_row_id`` and ``_last_updated_sequence_number`` after the writer schema's columns, and the manifest entry names
them (``pe_lineage_columns``), since a row file stores no schema."""
import fastavro
import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.errors import CorruptFileError
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
    got = t.scan(columns=LINEAGE, **kw).to_arrow().to_pydict()
    return {i: (r, s) for i, r, s in zip(got["id"], got["_row_id"], got["_last_updated_sequence_number"])}


def _table(tmp_path, fmt, name="t"):
    (tmp_path / fmt).mkdir()
    cat = _catalog(tmp_path / fmt)
    t = cat.create_table(f"db.{name}", _rows(1).schema, format_version=3,
                         properties={"write.format.default": fmt})
    t.append(_rows(5))                 # sequence number 1, row ids 0..4
    t.append(_rows(3, start=5))        # sequence number 2, row ids 5..7
    return t


def test_compaction_of_a_row_table_keeps_row_ids(tmp_path):
    t = _table(tmp_path, "row")
    assert {e.data_file.file_format for e in t.data_files()} == {"ROW"}
    assert all(e.data_file.lineage_field_ids is None for e in t.data_files())   # new rows store nothing
    t.delete("id = 2")                                                           # a deletion vector
    t.upsert(pa.table({"id": pa.array([6], pa.int64()), "v": ["six"]}), join_cols=["id"])
    before = _lineage(t)
    assert before[6][0] == 6 and before[6][1] == t.current_snapshot().sequence_number
    old_snapshot = t.current_snapshot().snapshot_id
    t.rewrite_files()
    (df,) = [e.data_file for e in t.data_files()]
    assert df.file_format == "ROW" and not t.delete_files()
    assert df.lineage_field_ids == [ROW_ID_FIELD_ID, LAST_UPDATED_FIELD_ID]
    assert df.first_row_id >= 8                      # a fresh range; the stored ids win over it
    assert _lineage(t) == before
    assert _lineage(t, snapshot_id=old_snapshot) == before
    assert dict(zip(*t.scan(columns=["id", "v"]).to_arrow().to_pydict().values()))[6] == "six"
    # the stored values are in the file, after the table's columns
    from paimon_engine.formats.row import RowFileReader
    schema = T.RowType(list(t.schema().struct.fields) + [
        T.DataField(ROW_ID_FIELD_ID, "_row_id", T.BigIntType()),
        T.DataField(LAST_UPDATED_FIELD_ID, "_last_updated_sequence_number", T.BigIntType())])
    with RowFileReader(df.file_path, schema, file_io=t.io) as r:
        stored = r.read_all()
    stored = stored.to_arrow_table() if hasattr(stored, "to_arrow_table") else stored.to_arrow()
    got = dict(zip(stored.column("id").to_pylist(), zip(stored.column("_row_id").to_pylist(),
                                                        stored.column("_last_updated_sequence_number").to_pylist())))
    assert {k: v[0] for k, v in got.items()} == {k: v[0] for k, v in before.items()}
    # a second compaction (rows read from a row file with lineage) keeps them again; appends continue
    t.rewrite_files()
    assert _lineage(t) == before
    n = t.metadata.next_row_id
    t.append(_rows(1, start=50))
    assert _lineage(t)[50] == (n, t.current_snapshot().sequence_number)


def test_row_and_parquet_tables_give_the_same_lineage(tmp_path):
    got = {}
    for fmt in ("parquet", "row"):
        t = _table(tmp_path, fmt)
        t.delete("id = 6", mode="copy-on-write")
        t.overwrite(_rows(1, start=100), filter="id = 0")
        t.delete("id = 3")
        t.rewrite_files()
        got[fmt] = (_lineage(t), _lineage(t, filter="id > 4"), t.metadata.next_row_id)
    assert got["row"] == got["parquet"]
    assert got["row"][0][7] == (7, 2)


def test_schema_evolution_with_stored_lineage(tmp_path):
    t = _table(tmp_path, "row")
    t.rewrite_files()                                      # stores lineage under schema 0
    with t.update_schema() as u:
        u.add_column("w", T.IntType())
    n = t.metadata.next_row_id                             # 16: the rewritten file took a fresh range 8..15
    t.append(pa.table({"id": pa.array([9], pa.int64()), "v": ["x"], "w": pa.array([1], pa.int32())}))
    got = t.scan(columns=["id", "w", "_row_id"]).to_arrow().sort_by("id").to_pylist()
    assert [(r["id"], r["w"], r["_row_id"]) for r in got] == [(i, None, i) for i in range(8)] + [(9, 1, n)]
    t.rewrite_files()                                      # now stored under schema 1
    assert t.scan(columns=["id", "w", "_row_id"]).to_arrow().sort_by("id").to_pylist() == got


def test_bad_lineage_field_ids_in_a_manifest_are_corrupt(tmp_path):
    t = _table(tmp_path, "row")
    t.rewrite_files()
    from paimon_engine.spec.manifest_list import read_manifest_list
    (mf,) = [m for m in read_manifest_list(t.io, t.current_snapshot().manifest_list)
             if m.added_files_count or m.existing_files_count]
    path = mf.manifest_path.removeprefix("file://")
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        schema, meta, recs = reader.writer_schema, reader.metadata, list(reader)
    assert [r["data_file"]["pe_lineage_columns"] for r in recs if r["status"] != 2] == [3]   # both columns
    for r in recs:
        r["data_file"]["pe_lineage_columns"] = 4
    with open(path, "wb") as f:
        fastavro.writer(f, schema, recs, metadata={k: v for k, v in meta.items() if not k.startswith("avro.")})
    with pytest.raises(CorruptFileError, match="row-lineage column mask 4") as ei:
        t.scan(columns=LINEAGE).to_arrow()
    assert path in str(ei.value)


def test_stored_lineage_survives_manifest_rewrites(tmp_path):
    t = _table(tmp_path, "row")
    t.rewrite_files()
    before = _lineage(t)
    with t.transaction() as tx:
        tx.set_properties({"commit.manifest-merge.enabled": "true", "commit.manifest.min-count-to-merge": "2"})
    t.append(_rows(1, start=40))                 # merges the rewritten file's manifest with the new one
    t.delete("id = 40")                          # a vector on the appended file
    t.delete("id = 0", mode="copy-on-write")     # rewrites the manifest holding the row file with lineage
    got = _lineage(t)
    assert {k: got[k] for k in before if k != 0} == {k: v for k, v in before.items() if k != 0}
    assert 0 not in got and 40 not in got
    assert [e.data_file.lineage_field_ids for e in t.data_files()] == [[ROW_ID_FIELD_ID, LAST_UPDATED_FIELD_ID]]
