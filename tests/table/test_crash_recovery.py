"""Killed writers and mixed concurrent operations on both catalogs.

* Writer processes appending in a loop are SIGKILLed at random points; the orphans they leave are listed by a dry
  run (which deletes nothing), removed, and every snapshot still reads the same rows.
* Eight processes mix appends, row-level deletes, overwrites, schema updates and expire_snapshots; every
  acknowledged effect is in the final table, exactly once, and nothing else is.
"""
import json
import multiprocessing as mp
import os
import random
import select
import signal
import subprocess
import sys
import time
import traceback

import pyarrow as pa
import pytest

from paimon_engine.errors import CommitConflictError, CommitFailedError, NotFoundError
from paimon_engine.expressions import col
from paimon_engine.catalog import FileSystemCatalog, SqlCatalog

from .pg_fixture import sql_catalog_uri

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = pa.schema([("id", pa.int64()), ("w", pa.int32()), ("k", pa.int32())])
RETRIES = {"commit.retry.num-retries": "40", "commit.retry.min-wait-ms": "5", "commit.retry.max-wait-ms": "150"}


def open_catalog(kind, root):
    if kind == "fs":
        return FileSystemCatalog(f"{root}/wh")
    return SqlCatalog("default", uri=sql_catalog_uri(kind, root), warehouse=f"{root}/wh")


def make_table(kind, root, partitioned=True):
    cat = open_catalog(kind, root)
    if kind != "fs":
        cat.create_namespace("db")
    return cat.create_table("db.t", SCHEMA, [("k", "identity")] if partitioned else None, properties=RETRIES)


def rows(ids, worker):
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "w": pa.array([worker] * len(ids), pa.int32()),
                     "k": pa.array([i % 3 for i in ids], pa.int32())})


# ---------------------------------------------------------------------------------------------------------------
# killed writers
# ---------------------------------------------------------------------------------------------------------------

_WRITER = r"""
import sys
sys.path.insert(0, {repo!r})
from tests.table.test_crash_recovery import open_catalog, rows
worker = int(sys.argv[1])
t = open_catalog({kind!r}, {root!r}).load_table("db.t")
i = 0
while True:
    base = worker * 1_000_000 + i * 10
    t.append(rows(range(base, base + 10), worker))
    if i == 0:
        print("ready", flush=True)     # imports done and one commit landed: later kills hit a commit mid-way
    i += 1
"""


def _wait_ready(proc, deadline):
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            return proc.stdout.readline().strip() == b"ready"
        if proc.poll() is not None:
            return False
    return False


def _snapshot_rows(t):
    return {s.snapshot_id: sorted(t.to_arrow(snapshot_id=s.snapshot_id).column("id").to_pylist())
            for s in t.snapshots()}


@pytest.mark.parametrize("kind", ["fs", "sql", "pg"])
def test_killed_writers_leave_orphans_that_removal_cleans_safely(tmp_path, kind):
    root = str(tmp_path)
    make_table(kind, root).append(rows(range(10), 99))
    script = tmp_path / "writer.py"
    script.write_text(_WRITER.format(repo=REPO, kind=kind, root=root))
    rng = random.Random(7)
    t = open_catalog(kind, root).load_table("db.t")
    killed = 0
    orphans = []
    for rnd in range(6):                      # rounds of 3 writers until orphans exist (usually the first)
        procs = [subprocess.Popen([sys.executable, str(script), str(rnd * 3 + w + 1)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, cwd=REPO) for w in range(3)]
        try:
            deadline = time.monotonic() + 60
            for p in procs:
                assert _wait_ready(p, deadline), p.stderr.read().decode()[-2000:]
            for p in sorted(procs, key=lambda _: rng.random()):
                time.sleep(rng.uniform(0.02, 0.4))
                p.send_signal(signal.SIGKILL)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                p.wait(30)
                p.stdout.close()
                p.stderr.close()
        assert all(p.returncode == -signal.SIGKILL for p in procs)
        killed += len(procs)
        t.refresh()
        orphans = t.remove_orphan_files(older_than=int(time.time() * 1000) + 60_000, dry_run=True)
        if orphans:
            break
    assert orphans, f"{killed} killed writers left no orphan"
    t.refresh()
    ids = t.to_arrow().column("id").to_pylist()
    assert len(ids) == len(set(ids))          # a killed append never half-lands or lands twice
    assert len(ids) == 10 + 10 * (len(t.snapshots()) - 1) and len(t.snapshots()) > killed
    before_rows = _snapshot_rows(t)
    referenced = t._referenced_files(t.metadata)
    assert all(os.path.exists(p) for p in referenced)
    assert not set(orphans) & set(referenced)
    assert all(p.startswith(t.location + "/") for p in orphans)
    kinds = {os.path.basename(p).rsplit(".", 1)[-1] for p in orphans}
    assert kinds <= {"parquet", "avro", "json", "tmp"}, kinds

    # a dry run lists and deletes nothing
    listing = sorted(os.path.join(d, f) for d, _, fs in os.walk(t.location) for f in fs)
    assert t.remove_orphan_files(older_than=int(time.time() * 1000) + 60_000, dry_run=True) == orphans
    assert sorted(os.path.join(d, f) for d, _, fs in os.walk(t.location) for f in fs) == listing
    # the safety window keeps files younger than it
    assert t.remove_orphan_files() == []
    removed = t.remove_orphan_files(older_than=int(time.time() * 1000) + 60_000)
    assert removed == orphans
    assert not any(os.path.exists(p) for p in removed)
    assert all(os.path.exists(p) for p in referenced)

    t = open_catalog(kind, root).load_table("db.t")
    assert _snapshot_rows(t) == before_rows   # every snapshot reads the same rows
    assert t.remove_orphan_files(older_than=int(time.time() * 1000) + 60_000, dry_run=True) == []
    t.append(rows(range(5_000_000, 5_000_003), 0))   # and the table takes new commits
    assert t.to_arrow().num_rows == len(ids) + 3


# ---------------------------------------------------------------------------------------------------------------
# mixed concurrent operations
# ---------------------------------------------------------------------------------------------------------------

N_WORKERS, N_OPS = 8, 7
RETRYABLE = (CommitFailedError, CommitConflictError, NotFoundError)


def _mixed_worker(kind, root, worker, out):
    rng = random.Random(1000 + worker)
    t = open_catalog(kind, root).load_table("db.t")
    next_id = worker * 1_000_000
    live = []               # this worker's acknowledged live ids
    log = {"appended": [], "deleted": [], "columns": [], "acked": {}, "rejected": {}, "errors": []}

    def fresh(n):
        nonlocal next_id
        ids = list(range(next_id, next_id + n))
        next_id += n
        return ids

    ops = ["append"] + [rng.choice(["append", "append", "delete", "delete", "overwrite", "schema", "expire"])
                        for _ in range(N_OPS - 1)]
    for n, op in enumerate(ops):
        if op in ("delete", "overwrite") and len(live) < 2:
            op = "append"
        for attempt in range(6):
            t.refresh()
            try:
                if op == "append":
                    ids = fresh(rng.randint(3, 12))
                    t.append(rows(ids, worker))
                    log["appended"] += ids
                    live += ids
                elif op == "delete":
                    gone = rng.sample(live, max(1, len(live) // 3))
                    t.delete(col("id").isin(gone))
                    log["deleted"] += gone
                    live = [i for i in live if i not in set(gone)]
                elif op == "overwrite":
                    gone = rng.sample(live, max(1, len(live) // 2))
                    ids = fresh(rng.randint(1, 5))
                    t.overwrite(rows(ids, worker), col("id").isin(gone))
                    log["deleted"] += gone
                    log["appended"] += ids
                    live = [i for i in live if i not in set(gone)] + ids
                elif op == "schema":
                    from paimon_engine import types as T
                    name = f"c{worker}_{n}"
                    with t.update_schema() as u:
                        u.add_column(name, T.IntType())
                    log["columns"].append(name)
                else:
                    t.expire_snapshots(older_than_ms=int(time.time() * 1000) - 500, retain_last=4)
                log["acked"][op] = log["acked"].get(op, 0) + 1
                break
            except RETRYABLE as exc:
                log["rejected"][op] = log["rejected"].get(op, 0) + 1
                if not isinstance(exc, (CommitFailedError, CommitConflictError)):
                    where = " > ".join(f.name for f in traceback.extract_tb(exc.__traceback__)[1:])
                    log["errors"].append(f"{op}: {type(exc).__name__} in {where}"[:300])
    with open(out, "w") as f:
        json.dump(log, f)


@pytest.mark.parametrize("kind", ["fs", "sql", "pg"])
def test_mixed_concurrent_operations_keep_every_acknowledged_effect(tmp_path, kind):
    root = str(tmp_path)
    t = make_table(kind, root)
    ctx = mp.get_context("spawn")
    outs = [str(tmp_path / f"w{i}.json") for i in range(N_WORKERS)]
    procs = [ctx.Process(target=_mixed_worker, args=(kind, root, i, outs[i])) for i in range(N_WORKERS)]
    for p in procs:
        p.start()
    try:
        for p in procs:
            p.join(600)
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join(10)
    assert [p.exitcode for p in procs] == [0] * N_WORKERS
    logs = [json.load(open(o)) for o in outs]
    expected = set()
    deleted = set()
    for log in logs:
        expected |= set(log["appended"])
        deleted |= set(log["deleted"])
    assert deleted <= expected
    expected -= deleted
    t = open_catalog(kind, root).load_table("db.t")
    got = t.to_arrow()
    ids = got.column("id").to_pylist()
    assert len(ids) == len(set(ids)), "a row is duplicated"
    assert set(ids) == expected, (f"lost {sorted(expected - set(ids))[:10]}, "
                                  f"unexpected {sorted(set(ids) - expected)[:10]}")
    for i, w in zip(ids, got.column("w").to_pylist()):
        assert w == i // 1_000_000
    names = set(t.schema().names)
    for log in logs:
        assert set(log["columns"]) <= names
    acked = {}
    for log in logs:
        for op, n in log["acked"].items():
            acked[op] = acked.get(op, 0) + n
    assert acked.get("append", 0) >= N_WORKERS
    assert sum(acked.values()) >= N_WORKERS * 3
    summary = t.current_snapshot().summary
    assert int(summary["total-records"]) - int(summary.get("total-position-deletes", 0)) == len(ids)
    # expire and the operations that lost a race removed nothing a retained snapshot needs
    live = t._reachable(t.metadata, t.snapshots())
    missing = [p for p in live if not os.path.exists(p)]
    assert not missing, missing[:5]
    for s in t.snapshots():
        t.to_arrow(snapshot_id=s.snapshot_id)
    print({"acked": acked, "rejected": {op: sum(log["rejected"].get(op, 0) for log in logs)
                                        for op in ("append", "delete", "overwrite", "schema", "expire")},
           "errors": [e for log in logs for e in log["errors"]][:5]})


@pytest.mark.parametrize("kind", ["fs", "sql", "pg"])
def test_validation_fails_cleanly_when_the_history_it_needs_was_expired(tmp_path, kind):
    root = str(tmp_path)
    t = make_table(kind, root, partitioned=False)
    t.append(rows(range(5), 0))
    stale = open_catalog(kind, root).load_table("db.t")        # an operation starts here ...
    stale_appender = open_catalog(kind, root).load_table("db.t")
    started = stale.current_snapshot().snapshot_id
    p = stale.new_snapshot("overwrite")
    p.conflict_filter = col("id") < 3
    p.conflict_filter = p.conflict_filter.bind(stale.schema().struct)
    added = stale._write(rows(range(100, 102), 0))
    for f in added:
        p.add_data_file(f)
    for i in range(4):                                          # ... others append, then expire its history
        t.append(rows(range(10 + i * 10, 13 + i * 10), 1))
    t.expire_snapshots(older_than_ms=int(time.time() * 1000) + 60_000, retain_last=2)
    assert t.metadata.snapshot_by_id(started) is None
    with pytest.raises(CommitFailedError, match="expired concurrently"):
        p.commit()
    assert not any(os.path.exists(f.file_path) for f in added)  # the failed operation cleaned up its files
    assert sorted(open_catalog(kind, root).load_table("db.t").to_arrow().column("id").to_pylist()) == \
        list(range(5)) + [10 + i * 10 + j for i in range(4) for j in range(3)]
    # an append from a handle whose head snapshot was expired reloads and lands (appends always re-apply)
    assert stale_appender.metadata.snapshot_by_id(started) is not None
    stale_appender.append(rows(range(200, 202), 2))
    assert {200, 201} <= set(open_catalog(kind, root).load_table("db.t").to_arrow().column("id").to_pylist())
