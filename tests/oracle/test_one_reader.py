"""The package has one read path (``paimon_engine.scan``); the slow reference reader kept here as an oracle must
agree with it on tables that exercise deletes, evolution and time travel."""
import datetime as dt
import importlib

import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.errors import SchemaError
from paimon_engine.catalog import FileSystemCatalog, SqlCatalog

from .reference_reader import read_snapshot


def _rows(tbl, names=None):
    names = names or tbl.column_names
    return sorted(tuple(r[n] for n in names) for r in tbl.select(names).to_pylist())


def _compare(t, snapshot=None, filter=None):
    md = t.metadata
    snap = snapshot if snapshot is not None else md.current_snapshot()
    schema = md.schema(snap.schema_id) if snap is not None and snap.schema_id is not None else md.schema()
    from paimon_engine.expressions import parse
    want = read_snapshot(t.io, md, snap, schema, None if filter is None else parse(filter))
    got = t.to_arrow(filter, snapshot_id=None if snapshot is None else snap.snapshot_id)
    assert got.column_names == want.column_names
    assert _rows(got) == _rows(want)
    return got


@pytest.fixture(params=["fs", "sql"])
def catalog(request, tmp_path):
    if request.param == "fs":
        return FileSystemCatalog(str(tmp_path / "wh"))
    return SqlCatalog("t", uri=str(tmp_path / "cat.db"), warehouse=str(tmp_path / "wh"))


def test_package_has_no_second_reader():
    with pytest.raises(ImportError):
        importlib.import_module("paimon_engine.table.reader")


def test_table_reads_agree_with_reference_reader(catalog):
    catalog.create_namespace("db")
    data = pa.table({"id": pa.array(range(40), pa.int64()), "k": pa.array([i % 4 for i in range(40)], pa.int32()),
                     "s": pa.array([f"v{i}" for i in range(40)])})
    t = catalog.create_table("db.t", data.schema, properties={"format-version": "2"})
    t.append(data)
    first = t.current_snapshot()
    t.update_spec(add=[("k", "identity")])
    t.append(pa.table({"id": pa.array(range(40, 60), pa.int64()), "k": pa.array([i % 3 for i in range(20)],
                                                                               pa.int32()),
                       "s": pa.array([None if i % 5 == 0 else f"w{i}" for i in range(20)])}))
    t.delete("id < 5")                                     # merge-on-read position deletes
    t.delete("k = 2", mode="equality", equality_columns=["k"])
    with t.update_schema() as u:
        u.add_column("extra", T.DoubleType())
        u.update_column("k", T.BigIntType())
    t.append(pa.table({"id": pa.array([100, 101], pa.int64()), "k": pa.array([7, 8], pa.int64()),
                       "s": ["x", "y"], "extra": [1.5, None]}))
    for f in (None, "id >= 30", "s is null", "k in (0, 7)", "extra > 1"):
        _compare(t, filter=f)
    for snap in t.snapshots():
        _compare(t, snapshot=snap)
    assert t.at(snapshot_id=first.snapshot_id).to_arrow().num_rows == 40


def test_time_travel_by_iso_string_in_every_path(catalog):
    catalog.create_namespace("db")
    t = catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    t.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    first = t.current_snapshot()
    t.append(pa.table({"id": pa.array([3], pa.int64())}))
    stamp = dt.datetime.fromtimestamp(first.timestamp_ms / 1000, dt.timezone.utc).isoformat()
    assert t.to_arrow(as_of=stamp).num_rows == 2
    assert t.to_pandas(as_of=stamp).shape[0] == 2
    assert t.at(as_of=stamp).to_arrow().num_rows == 2
    assert t.scan(as_of=stamp).to_arrow().num_rows == 2
    assert t.scan(as_of=first.timestamp_ms).count() == 2


def test_missing_column_is_one_error(catalog):
    catalog.create_namespace("db")
    t = catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    t.append(pa.table({"id": pa.array([1], pa.int64())}))
    messages = set()
    for call in (lambda: t.to_arrow(columns=["nope"]), lambda: t.scan(columns=["nope"]).to_arrow(),
                 lambda: t.at(snapshot_id=t.current_snapshot().snapshot_id).to_arrow(columns=["nope"])):
        with pytest.raises(SchemaError) as e:
            call()
        messages.add(str(e.value))
    assert len(messages) == 1 and "nope" in messages.pop()
