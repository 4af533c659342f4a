"""Random appends, overwrites, position deletes, equality deletes (null keys, partition-scoped and global),
schema and partition evolution and compaction, checked after every step against a plain in-memory model."""

import shutil
import tempfile

import pyarrow as pa
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from paimon_engine import types as T
from paimon_engine.expressions import col
from paimon_engine.spec.partitioning import PartitionSpec
from paimon_engine.spec.schema import Schema

from .builder import MiniTable

K_VALUES = st.one_of(st.none(), st.integers(0, 3))


class TableModel(RuleBasedStateMachine):
    @initialize()
    def setup(self):
        self.dir = tempfile.mkdtemp(prefix="scan-sm-")
        schema = Schema(T.RowType([T.DataField(1, "id", T.BigIntType(False)), T.DataField(2, "k", T.IntType()),
                                   T.DataField(3, "s", T.STRING()), T.DataField(4, "p", T.IntType())]))
        self.t = MiniTable(self.dir, schema)
        self.rows = []          # live rows: dict(rid, vals{fid: v}, file, pos, seq, spec, part)
        self.next_id = 0
        self.next_field = 5
        self.extra = []         # ids of added columns still in the schema
        self.history = {}       # snapshot id -> (sorted expected rows as dicts, schema RowType)

    def teardown(self):
        shutil.rmtree(getattr(self, "dir", ""), ignore_errors=True)

    # -- helpers ------------------------------------------------------------------
    @property
    def struct(self):
        return self.t.schema.struct

    def _expected(self, struct=None, rows=None):
        struct = struct or self.struct
        out = [{f.name: r["vals"].get(f.id) for f in struct.fields} for r in (rows if rows is not None else self.rows)]
        return sorted(out, key=lambda d: d["id"])

    def _record(self):
        self.history[self.t.md.current_snapshot_id] = (self._expected(), self.struct)

    def _make_rows(self, n, data):
        vals = []
        for _ in range(n):
            v = {1: self.next_id, 2: data.draw(K_VALUES), 3: data.draw(st.sampled_from(["a", "b", "c", None])),
                 4: data.draw(st.integers(0, 2))}
            for fid in self.extra:
                v[fid] = data.draw(st.one_of(st.none(), st.integers(-5, 5)))
            self.next_id += 1
            vals.append(v)
        return vals

    def _table(self, vals):
        cols = {}
        for f in self.struct.fields:
            cols[f.name] = pa.array([v.get(f.id) for v in vals], f.type.to_arrow())
        return pa.table(cols)

    def _write(self, vals):
        """Data files (one per partition of the current spec) for ``vals``; returns (DataFiles, placed rows)."""
        spec = self.t.spec
        groups = {}
        for v in vals:
            part = tuple(v[4] for _ in spec.fields)  # identity(p) or unpartitioned
            groups.setdefault(part, []).append(v)
        dfs, placed = [], []
        for part, vs in groups.items():
            df = self.t.write_data_file(self._table(vs), part)
            dfs.append(df)
            for i, v in enumerate(vs):
                placed.append(dict(vals={f.id: v.get(f.id) for f in self.struct.fields}, file=df.file_path, pos=i,
                                   spec=spec.spec_id, part=part))
        return dfs, placed

    def _seq_next(self):
        return self.t.md.last_sequence_number + 1

    # -- rules ------------------------------------------------------------------------
    @rule(n=st.integers(1, 8), data=st.data())
    def append(self, n, data):
        dfs, placed = self._write(self._make_rows(n, data))
        seq = self._seq_next()
        self.t.commit(dfs)
        for r in placed:
            r["seq"] = seq
        self.rows += placed
        self._record()

    @precondition(lambda self: len(self.t.md.specs) == 1)
    @rule()
    def partition_by_p(self):
        self.t.add_spec(PartitionSpec.build(self.t.schema, ("p", "identity")))

    @precondition(lambda self: self.rows)
    @rule(data=st.data(), referenced=st.booleans())
    def position_delete(self, data, referenced):
        picked = data.draw(st.lists(st.sampled_from(range(len(self.rows))), min_size=1, max_size=5, unique=True))
        by_file = {}
        for i in picked:
            by_file.setdefault(self.rows[i]["file"], []).append(self.rows[i])
        dfs = []
        for path, rs in by_file.items():
            r0 = rs[0]
            dfs.append(self.t.write_position_deletes(path, [r["pos"] for r in rs], r0["part"], r0["spec"],
                                                     referenced=referenced))
        self.t.commit(dfs, operation="delete")
        drop = {id(self.rows[i]) for i in picked}
        self.rows = [r for r in self.rows if id(r) not in drop]
        self._record()

    @rule(keys=st.lists(K_VALUES, min_size=1, max_size=3, unique=True), scoped=st.booleans(),
          p=st.integers(0, 2))
    def equality_delete_k(self, keys, scoped, p):
        seq = self._seq_next()
        if scoped and len(self.t.md.specs) > 1:
            spec_id, part = self.t.md.default_spec_id, (p,)
        else:
            spec_id, part = 0, ()   # spec 0 is unpartitioned: a global delete
        df = self.t.write_equality_deletes([2], [(k,) for k in keys], part, spec_id)
        self.t.commit([df], operation="delete")
        keyset = set(keys)

        def hit(r):
            if r["seq"] >= seq or r["vals"].get(2) not in keyset:
                return False
            return part == () or (r["spec"] == spec_id and r["part"] == part)
        self.rows = [r for r in self.rows if not hit(r)]
        self._record()

    @rule(n=st.integers(1, 5), data=st.data(), scoped=st.booleans())
    def upsert(self, n, data, scoped):
        """Equality deletes and new rows with the same keys in one commit: the new rows survive."""
        vals = self._make_rows(n, data)
        p = vals[0][4]
        keys = sorted({v[2] for v in vals}, key=repr)
        seq = self._seq_next()
        if scoped and len(self.t.md.specs) > 1:
            spec_id, part = self.t.md.default_spec_id, (p,)
        else:
            spec_id, part = 0, ()
        dfs, placed = self._write(vals)
        eq = self.t.write_equality_deletes([2], [(k,) for k in keys], part, spec_id)
        self.t.commit(dfs + [eq], operation="overwrite")
        keyset = set(keys)
        self.rows = [r for r in self.rows if not (
            r["vals"].get(2) in keyset and (part == () or (r["spec"] == spec_id and r["part"] == part)))]
        for r in placed:
            r["seq"] = seq
        self.rows += placed
        self._record()

    @precondition(lambda self: self.rows)
    @rule(data=st.data())
    def equality_delete_pairs(self, data):
        picked = data.draw(st.lists(st.sampled_from(range(len(self.rows))), min_size=1, max_size=3))
        keys = {(self.rows[i]["vals"].get(2), self.rows[i]["vals"].get(3)) for i in picked}
        seq = self._seq_next()
        self.t.commit([self.t.write_equality_deletes([2, 3], sorted(keys, key=repr), (), 0)], operation="delete")
        self.rows = [r for r in self.rows
                     if not (r["seq"] < seq and (r["vals"].get(2), r["vals"].get(3)) in keys)]
        self._record()

    @precondition(lambda self: self.t.files)
    @rule(data=st.data(), n=st.integers(0, 4))
    def overwrite(self, data, n):
        data_files = sorted(p for p, (df, _) in self.t.files.items() if df.content == 0)
        if not data_files:
            return
        victim = data.draw(st.sampled_from(data_files))
        dfs, placed = self._write(self._make_rows(n, data)) if n else ([], [])
        seq = self._seq_next()
        self.t.commit(dfs, removed=[victim], operation="overwrite")
        for r in placed:
            r["seq"] = seq
        self.rows = [r for r in self.rows if r["file"] != victim] + placed
        self._record()

    @precondition(lambda self: self.rows)
    @rule(data=st.data())
    def compact(self, data):
        files = sorted({r["file"] for r in self.rows})
        chosen = data.draw(st.lists(st.sampled_from(files), min_size=1, max_size=3, unique=True))
        moving = [r for r in self.rows if r["file"] in chosen]
        dfs, placed = self._write([r["vals"] for r in moving])
        seq = self._seq_next()
        self.t.commit(dfs, removed=chosen, operation="replace")
        for r in placed:
            r["seq"] = seq
        self.rows = [r for r in self.rows if r["file"] not in chosen] + placed
        self._record()

    @rule(kind=st.sampled_from(["add", "rename", "promote", "drop"]))
    def evolve_schema(self, kind):
        fields = list(self.struct.fields)
        if kind == "add":
            fid = self.next_field
            self.next_field += 1
            fields.append(T.DataField(fid, f"x{fid}", T.BigIntType()))
            self.extra.append(fid)
        elif kind == "rename":
            fields = [T.DataField(f.id, f.name + "_r" if f.id == 3 else f.name, f.type) for f in fields]
        elif kind == "promote":
            fields = [f.with_type(T.BigIntType()) if f.id == 2 else f for f in fields]
        elif kind == "drop":
            if not self.extra:
                return
            fid = self.extra.pop(0)
            fields = [f for f in fields if f.id != fid]
        self.t.set_schema(T.RowType(fields))

    # -- checks ------------------------------------------------------------------
    @invariant()
    def scan_matches_model(self):
        if not hasattr(self, "t") or self.t.md.current_snapshot_id is None:
            return
        got = sorted(self.t.scan().to_arrow().to_pylist(), key=lambda d: d["id"])
        assert got == self._expected()
        assert self.t.scan().count() == len(self.rows)

    @invariant()
    def filtered_scan_matches_model(self):
        if not hasattr(self, "t") or self.t.md.current_snapshot_id is None:
            return
        kname = "k"
        expr = (col("id") >= self.next_id // 2) | col(kname).is_null() | (col("p") == 1)
        want = [r for r in self.rows if r["vals"][1] >= self.next_id // 2 or r["vals"].get(2) is None
                or r["vals"].get(4) == 1]
        scan = self.t.scan(filter=expr, columns=["id", "_pos"])
        got = sorted(r["id"] for r in scan.to_arrow().to_pylist())
        assert got == sorted(r["vals"][1] for r in want)
        assert scan.count() == len(want)

    @invariant()
    def time_travel(self):
        if not hasattr(self, "t") or not self.history:
            return
        for sid in list(self.history)[-3:]:
            want, struct = self.history[sid]
            got = sorted(self.t.scan(snapshot_id=sid).to_arrow().to_pylist(), key=lambda d: d["id"])
            assert got == want, sid


TableModel.TestCase.settings = settings(max_examples=25, stateful_step_count=12, deadline=None,
                                        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
test_table_model = TableModel.TestCase
