"""Concurrent writers, killed writers, conflicting operations, hostile metadata."""
import json
import multiprocessing as mp
import os
import subprocess
import sys
import time

import pyarrow as pa
import pytest

from paimon_engine.errors import CommitFailedError, CorruptFileError, NotFoundError
from paimon_engine.expressions import col
from paimon_engine.catalog import FileSystemCatalog, SqlCatalog

from .conftest import canon, sample
from .pg_fixture import sql_catalog_uri

N_PROC, N_COMMITS, ROWS = 4, 5, 7


def _appender(kind, root, worker):
    if kind == "fs":
        t = FileSystemCatalog(root).load_table("db.t")
    else:
        t = SqlCatalog("default", uri=sql_catalog_uri(kind, root), warehouse=f"{root}/wh").load_table("db.t")
    for i in range(N_COMMITS):
        start = (worker * N_COMMITS + i) * ROWS
        t.append(sample(ROWS, start=start))


def _make(kind, root):
    props = {"commit.retry.num-retries": "60", "commit.retry.min-wait-ms": "5", "commit.retry.max-wait-ms": "200"}
    if kind == "fs":
        cat = FileSystemCatalog(root)
    else:
        cat = SqlCatalog("default", uri=sql_catalog_uri(kind, root), warehouse=f"{root}/wh")
        cat.create_namespace("db")
    return cat.create_table("db.t", sample().schema, [("qty", "identity")], properties=props)


@pytest.mark.parametrize("kind", ["fs", "sql", "pg"])
def test_concurrent_appends_lose_nothing(tmp_path, kind):
    root = str(tmp_path)
    t = _make(kind, root)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_appender, args=(kind, root, w)) for w in range(N_PROC)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    t.refresh()
    ids = sorted(t.to_arrow().column("id").to_pylist())
    assert ids == list(range(N_PROC * N_COMMITS * ROWS))
    snaps = t.snapshots()
    assert len(snaps) == N_PROC * N_COMMITS
    assert [s.sequence_number for s in t.metadata.ancestors()] == list(range(len(snaps), 0, -1))
    assert t.current_snapshot().summary["total-records"] == str(len(ids))
    # every data file committed exactly once
    paths = [e.data_file.file_path for e in t.data_files()]
    assert len(paths) == len(set(paths))
    assert t.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 1000, dry_run=True) == []


def test_overwrite_vs_delete_conflict(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(20))
    a = cat.load_table("db.t")
    b = cat.load_table("db.t")
    a.overwrite(sample(2, start=100), col("id") < 5)           # rewrites the only data file
    with pytest.raises(CommitFailedError, match="no longer live|matching the filter"):
        b.delete(col("id") == 10)                              # position delete for the removed file
    # the other order: a delete lands first, then an overwrite that started before it must fail
    t2 = cat.create_table("db.t2", sample().schema)
    t2.append(sample(20))
    a = cat.load_table("db.t2")
    b = cat.load_table("db.t2")
    a.delete(col("id") == 10)
    with pytest.raises(CommitFailedError, match="added delete files"):
        b.overwrite(sample(2, start=100), col("id") < 5)
    assert sorted(cat.load_table("db.t2").to_arrow().column("id").to_pylist()) == [i for i in range(20) if i != 10]
    # appends always re-apply
    c = cat.load_table("db.t2")
    d = cat.load_table("db.t2")
    c.append(sample(1, start=200))
    d.append(sample(1, start=300))
    assert {200, 300} <= set(cat.load_table("db.t2").to_arrow().column("id").to_pylist())


_KILL_SCRIPT = r"""
import os, sys
sys.path.insert(0, {repo!r})
from paimon_engine.io import FileIO
from paimon_engine.catalog import FileSystemCatalog
from tests.table.conftest import sample
limit = int(sys.argv[1])
calls = [0]
orig_write, orig_excl = FileIO.write_bytes, FileIO.create_exclusive
def counting(orig):
    def f(self, path, data):
        calls[0] += 1
        if calls[0] > limit:
            os._exit(17)
        return orig(self, path, data)
    return f
t = FileSystemCatalog({root!r}).load_table("db.t")
FileIO.write_bytes = counting(orig_write)
FileIO.create_exclusive = counting(orig_excl)
t.append(sample(5, start=1000))
"""


def test_killed_writer_leaves_table_readable(tmp_path):
    root = str(tmp_path / "wh")
    cat = FileSystemCatalog(root)
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(10))
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = tmp_path / "kill.py"
    script.write_text(_KILL_SCRIPT.format(repo=repo, root=root))
    # parquet data files are written through open_output (not counted): limits 0..3 stop after the data file,
    # after the manifest, after the manifest list, after the metadata file (committed, hint not updated)
    outcomes = []
    for limit in range(4):
        r = subprocess.run([sys.executable, str(script), str(limit)], capture_output=True, text=True, timeout=120)
        outcomes.append(r.returncode)
        t = cat.load_table("db.t")
        n = t.to_arrow().num_rows
        assert n in (10, 15, 20), (limit, r.stderr)
    assert outcomes[:3] == [17, 17, 17]
    t = cat.load_table("db.t")
    # the last run committed (metadata file created) then died before the hint: loading probes past the hint
    assert t.to_arrow().num_rows == 15
    orphans = t.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 1000)
    kinds = sorted({os.path.basename(p).rsplit(".", 1)[-1] for p in orphans})
    assert kinds == ["avro", "parquet"]
    assert len([p for p in orphans if p.endswith(".parquet")]) == 3
    assert t.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 1000) == []
    assert cat.load_table("db.t").to_arrow().num_rows == 15
    # recent files are never reported with the default age threshold
    assert t.remove_orphan_files(dry_run=True) == []


def test_expire_snapshots_deletes_only_unreachable(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema)
    for i in range(4):
        t.append(sample(5, start=5 * i))
    t.overwrite(sample(3, start=100), col("id") < 5)
    ids = [s.snapshot_id for s in t.snapshots()]
    first = t.snapshots()[0]
    t.create_tag("keep", ids[1])
    before = t.to_arrow()
    expired = t.expire_snapshots(retain_last=1)
    assert sorted(expired) == sorted([ids[0], ids[2], ids[3]])
    assert [s.snapshot_id for s in t.snapshots()] == [ids[1], ids[4]]
    assert t.metadata.snapshot_by_ref("keep") is not None
    assert canon(t.to_arrow()) == canon(before)
    assert not os.path.exists(first.manifest_list)
    tagged = t.to_arrow(ref="keep")
    assert tagged.num_rows == 10
    assert t.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 1000, dry_run=True) == []


def _hostile_table(tmp_path, mutate):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(5))
    path = t.metadata_location
    doc = json.loads(open(path).read())
    mutate(doc)
    nxt = path.replace("v2.metadata.json", "v3.metadata.json")
    with open(nxt, "w") as f:
        json.dump(doc, f)
    return cat


def test_manifest_list_outside_table_is_refused(tmp_path):
    (tmp_path / "evil.avro").write_bytes(b"x")
    cat = _hostile_table(tmp_path, lambda d: d["snapshots"][0].update({"manifest-list": str(tmp_path / "evil.avro")}))
    t = cat.load_table("db.t")
    with pytest.raises(CorruptFileError, match="outside the table location"):
        t.to_arrow()
    with pytest.raises(CorruptFileError, match="outside"):
        t.delete(col("id") == 1)


def test_hostile_metadata_on_load(tmp_path):
    cat = _hostile_table(tmp_path, lambda d: d.update({"format-version": 7}))
    with pytest.raises(CorruptFileError, match="unsupported table format version 7") as ei:
        cat.load_table("db.t")
    assert "v3.metadata.json" in str(ei.value)
    with pytest.raises(NotFoundError):
        cat.load_table("db.nope")


def test_filtered_overwrite_is_serializable_against_concurrent_appends(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(10))
    a = cat.load_table("db.t")
    b = cat.load_table("db.t")
    a.append(sample(2, start=50))                                 # ids 50, 51 (qty 0, 1)
    with pytest.raises(CommitFailedError, match="added rows matching the filter"):
        b.overwrite(sample(1, start=90), col("id") >= 50)         # would have missed the new rows
    c = cat.load_table("db.t")
    d = cat.load_table("db.t")
    c.append(sample(2, start=60))
    d.delete(col("id") < 3)                                       # the new rows do not match: retries and lands
    ids = sorted(cat.load_table("db.t").to_arrow().column("id").to_pylist())
    assert ids == list(range(3, 10)) + [50, 51, 60, 61]


def test_manifest_outside_table_is_refused_unless_allowed(tmp_path):
    import shutil
    from paimon_engine.spec.manifest_list import read_manifest_list, write_manifest_list
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(5))
    snap = t.current_snapshot()
    [m] = read_manifest_list(t.io, snap.manifest_list)
    outside = str(tmp_path / "elsewhere.avro")
    shutil.copy(m.manifest_path, outside)
    m.manifest_path = outside
    write_manifest_list(t.io, snap.manifest_list, [m], format_version=2, snapshot_id=snap.snapshot_id,
                        parent_snapshot_id=None, sequence_number=snap.sequence_number)
    with pytest.raises(CorruptFileError, match="manifest .* is outside the table location"):
        t.to_arrow()
    t.set_properties(**{"read.allow-external-metadata": "true"})
    assert t.to_arrow().num_rows == 5


def _deleter(root, out):
    t = FileSystemCatalog(root).load_table("db.t")
    with open(out, "w") as f:
        for k in range(0, 50, 4):
            try:
                t.delete(col("id") == k)
                f.write(f"ok {k}\n")
            except CommitFailedError:
                f.write(f"fail {k}\n")
            t.refresh()


def _overwriter(root, out):
    t = FileSystemCatalog(root).load_table("db.t")
    with open(out, "w") as f:
        for j in range(5):
            new = sample(1, start=1000 + j).set_column(5, "qty", pa.array([99], pa.int32()))
            try:
                t.overwrite(new, col("qty") == j)
                f.write(f"ok {j}\n")
            except CommitFailedError:
                f.write(f"fail {j}\n")
            t.refresh()


def test_concurrent_overwrite_and_delete_processes(tmp_path):
    root = str(tmp_path)
    t = FileSystemCatalog(root).create_table("db.t", sample().schema, properties={
        "commit.retry.num-retries": "60", "commit.retry.min-wait-ms": "5", "commit.retry.max-wait-ms": "100"})
    t.append(sample(100))
    ctx = mp.get_context("spawn")
    outs = [str(tmp_path / "del.txt"), str(tmp_path / "ow.txt")]
    procs = [ctx.Process(target=_deleter, args=(root, outs[0])), ctx.Process(target=_overwriter, args=(root, outs[1]))]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
        assert p.exitcode == 0
    dels = [line.split() for line in open(outs[0])]
    ows = [line.split() for line in open(outs[1])]
    deleted = {int(k) for s, k in dels if s == "ok"}
    overwritten = {int(j) for s, j in ows if s == "ok"}
    expected = {i for i in range(100) if i not in deleted and i % 5 not in overwritten} | \
        {1000 + j for j in overwritten}
    got = FileSystemCatalog(root).load_table("db.t").to_arrow().column("id").to_pylist()
    assert len(got) == len(set(got))
    assert set(got) == expected
    assert len(dels) == 13 and len(ows) == 5


def test_deletes_elsewhere_do_not_block_a_rewrite(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema, [("qty", "identity")])
    t.append(sample(20))
    a = cat.load_table("db.t")
    b = cat.load_table("db.t")
    a.delete(col("id") == 1)                                     # qty=1 partition, position delete
    b.overwrite(sample(1, start=100), col("qty") == 2)           # rewrites only the qty=2 partition: lands
    ids = set(cat.load_table("db.t").to_arrow().column("id").to_pylist())
    assert 1 not in ids and 100 in ids and not ({2, 7, 12, 17} & ids)


def test_failed_operation_leaves_no_files(tmp_path):
    cat = FileSystemCatalog(str(tmp_path))
    t = cat.create_table("db.t", sample().schema)
    t.append(sample(20))
    a = cat.load_table("db.t")
    b = cat.load_table("db.t")
    a.overwrite(sample(2, start=100), col("id") < 5)
    with pytest.raises(CommitFailedError):
        b.overwrite(sample(2, start=200), col("id") == 10)       # its rewritten and new files are cleaned up
    t = cat.load_table("db.t")
    assert t.remove_orphan_files(older_than_ms=int(time.time() * 1000) + 1000, dry_run=True) == []
