"""pyiceberg 0.12 reading v3 tables that every write path of ours produced: deletion vectors (merged, from
deletes and upserts), rewritten files carrying row-lineage columns, column defaults; and what it lacks."""
import datetime

import pyarrow as pa
import pytest

from paimon_engine import types as T

pytest.importorskip("pyiceberg")


def _catalogs(tmp_path):
    from paimon_engine.catalog import SqlCatalog
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog
    ours = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    ours.create_namespace("db")
    theirs = PySqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=f"file://{tmp_path}/wh")
    return ours, theirs


def _rows(ids, tag="v"):
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{tag}{i}" for i in ids],
                     "ts": pa.array([1_700_000_000_000_000_123 + i for i in ids], pa.timestamp("ns"))})


def _sorted(tbl):
    return tbl.sort_by("id").to_pylist()


def test_pyiceberg_reads_every_write_path_of_a_v3_table(tmp_path):
    ours, theirs = _catalogs(tmp_path)
    t = ours.create_table("db.t", _rows([0]).schema, format_version=3)
    t.append(_rows(range(10)))
    t.append(_rows(range(10, 20)))
    history = []

    def check():
        history.append((t.current_snapshot().snapshot_id, _sorted(t.to_arrow())))
        pt = theirs.load_table("db.t")
        assert _sorted(pt.scan().to_arrow()) == history[-1][1]
        for snapshot_id, rows in history:              # time travel sees each snapshot's own deletes
            assert _sorted(pt.scan(snapshot_id=snapshot_id).to_arrow()) == rows
        return pt

    t.delete("id in (1, 2, 15)")                     # one vector per data file
    t.delete("id = 3")                               # merged with the file's vector
    pt = check()
    tasks = list(pt.scan().plan_files())
    # pyiceberg 0.12 indexes position deletes by file_path bounds, which vectors (like Iceberg Java's) do not
    # carry: it gives each data file every vector of its partition and keeps the one that references it
    assert {d.file_format.value for task in tasks for d in task.delete_files} == {"PUFFIN"}
    t.upsert(_rows([4, 16], "new"), join_cols=["id"])                     # vectors + rows keeping their ids
    check()
    t.delete("id = 5", mode="copy-on-write")         # a rewritten file storing _row_id
    check()
    t.rewrite_files()                                # every row moved, lineage stored in the new file
    check()
    with t.update_schema() as u:
        u.add_column("day", T.DateType(), default=datetime.date(2024, 1, 1))
    t.append(_rows([30]))                            # write-default
    pt = check()
    assert set(pt.scan().to_arrow().column("day").to_pylist()) == {datetime.date(2024, 1, 1)}
    # table and snapshot row-lineage fields as we wrote them
    assert pt.metadata.format_version == 3 and pt.metadata.next_row_id == t.metadata.next_row_id
    assert [(s.first_row_id, s.added_rows) for s in pt.metadata.snapshots] == \
        [(s.first_row_id, s.added_rows) for s in t.metadata.snapshots]


def test_what_pyiceberg_0_12_lacks_on_v3_tables(tmp_path):
    # documented in docs/v3.md: no _row_id / _last_updated_sequence_number metadata columns, and no equality
    # deletes; when a pyiceberg release adds them this test fails and the page is updated
    ours, theirs = _catalogs(tmp_path)
    t = ours.create_table("db.t", _rows([0]).schema, format_version=3)
    t.append(_rows(range(3)))
    pt = theirs.load_table("db.t")
    with pytest.raises(ValueError, match="_row_id"):
        pt.scan(selected_fields=("id", "_row_id")).to_arrow()
    t.delete("id = 0", mode="equality", equality_columns=["id"])
    with pytest.raises(ValueError, match="equality deletes"):
        theirs.load_table("db.t").scan().to_arrow()
