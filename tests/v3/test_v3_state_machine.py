"""Random appends, merge-on-read and copy-on-write deletes, equality deletes, upserts, overwrites and compaction
on a v3 table, checked after every step against a plain model: the live rows, their row ids (stable while a row
lives: deletion vectors, rewrites and upserts keep them), their last-updated sequence numbers, and the rule of at
most one deletion vector per data file."""

import shutil
import tempfile

import pyarrow as pa
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from paimon_engine.expressions import col

COLUMNS = ["id", "v", "_row_id", "_last_updated_sequence_number"]


class V3TableModel(RuleBasedStateMachine):
    @initialize()
    def setup(self):
        from paimon_engine.catalog import SqlCatalog
        self.dir = tempfile.mkdtemp(prefix="v3-sm-")
        cat = SqlCatalog("default", uri=f"sqlite:///{self.dir}/c.db", warehouse=f"{self.dir}/wh")
        cat.create_namespace("db")
        self.t = cat.create_table("db.t", pa.schema([("id", pa.int64()), ("v", pa.int64())]), format_version=3)
        self.rows = {}          # id -> [v, row id (None until first read), last updated seq]
        self.next_id = 0
        self.seen_row_ids = set()

    def teardown(self):
        shutil.rmtree(getattr(self, "dir", ""), ignore_errors=True)

    def _seq(self):
        return self.t.current_snapshot().sequence_number

    def _ids(self, data, max_size=6):
        if not self.rows:
            return []
        return data.draw(st.lists(st.sampled_from(sorted(self.rows)), min_size=1, max_size=max_size, unique=True))

    @staticmethod
    def _table(ids, vs):
        return pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array(vs, pa.int64())})

    @rule(n=st.integers(1, 12))
    def append(self, n):
        ids = list(range(self.next_id, self.next_id + n))
        self.next_id += n
        self.t.append(self._table(ids, [0] * n))
        for i in ids:
            self.rows[i] = [0, None, self._seq()]

    @precondition(lambda self: self.rows)
    @rule(data=st.data(), mode=st.sampled_from(["merge-on-read", "copy-on-write", "equality"]))
    def delete(self, data, mode):
        ids = self._ids(data)
        self.t.delete(col("id").isin(ids), mode=mode, equality_columns=["id"] if mode == "equality" else None)
        for i in ids:
            del self.rows[i]

    @precondition(lambda self: self.rows)
    @rule(data=st.data(), new=st.integers(0, 3))
    def upsert(self, data, new):
        ids = self._ids(data)
        vs = [self.rows[i][0] + data.draw(st.integers(0, 1)) for i in ids]
        fresh = list(range(self.next_id, self.next_id + new))
        self.next_id += new
        before = self.t.current_snapshot().snapshot_id
        res = self.t.upsert(self._table(ids + fresh, vs + [7] * new), join_cols=["id"])
        changed = [i for i, v in zip(ids, vs) if v != self.rows[i][0]]
        assert (res.rows_updated, res.rows_inserted) == (len(changed), new)
        if self.t.current_snapshot().snapshot_id != before:
            seq = self._seq()
            for i, v in zip(ids, vs):
                if v != self.rows[i][0]:
                    self.rows[i][0] = v
                    self.rows[i][2] = seq         # the row id stays; the row reads as updated now
            for i in fresh:
                self.rows[i] = [7, None, seq]

    @precondition(lambda self: self.rows)
    @rule(data=st.data())
    def overwrite(self, data):
        ids = self._ids(data, 3)
        replacement = self.next_id
        self.next_id += 1
        self.t.overwrite(self._table([replacement], [9]), filter=col("id").isin(ids))
        for i in ids:
            del self.rows[i]
        self.rows[replacement] = [9, None, self._seq()]

    @precondition(lambda self: self.t.current_snapshot() is not None)
    @rule()
    def compact(self):
        self.t.rewrite_files()

    @invariant()
    def scan_matches_model(self):
        if not hasattr(self, "t") or self.t.current_snapshot() is None:
            return
        got = self.t.scan(columns=COLUMNS).to_arrow().to_pylist()
        assert sorted(r["id"] for r in got) == sorted(self.rows)
        for r in got:
            want = self.rows[r["id"]]
            assert r["v"] == want[0]
            assert r["_last_updated_sequence_number"] == want[2], r
            if want[1] is None:           # first sight: a fresh id, never used by another row
                assert r["_row_id"] is not None and r["_row_id"] not in self.seen_row_ids
                want[1] = r["_row_id"]
                self.seen_row_ids.add(r["_row_id"])
            assert r["_row_id"] == want[1], r
            assert r["_row_id"] < self.t.metadata.next_row_id
        # at most one deletion vector per data file
        refs = [e.data_file.referenced_data_file for e in self.t.delete_files()
                if e.data_file.file_format == "PUFFIN"]
        assert len(refs) == len(set(refs))
        assert not [e for e in self.t.delete_files() if e.data_file.content == 1
                    and e.data_file.file_format != "PUFFIN"]


TestV3TableModel = V3TableModel.TestCase
TestV3TableModel.settings = settings(max_examples=40, stateful_step_count=12, deadline=None,
                                     suppress_health_check=[HealthCheck.too_slow])
