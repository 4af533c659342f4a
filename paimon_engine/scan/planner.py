"""Scan planning and reading for Iceberg-style tables.

``TableScan(metadata, io, filter=..., columns=..., snapshot_id=..., as_of=..., ref=...)`` (normally reached via
``table.scan(...)``) plans :class:`~paimon_engine.scan.tasks.FileScanTask` objects and reads them:

* manifest-list pruning: the filter is projected (inclusively) through every transform of each manifest's
  partition spec and evaluated against the manifest's partition summaries;
* manifests on object stores are read in parallel (local ones in turn); entries are pruned by their partition
  tuple while they are decoded (answers remembered per distinct tuple) and by column metrics (bounds,
  null/NaN/value counts); the part of the filter the metrics cannot settle stays as the task's residual;
* a :class:`~paimon_engine.scan.delete_index.DeleteFileIndex` assigns position deletes, deletion vectors and
  equality deletes to each data file;
* ``to_arrow`` / ``to_pandas`` / ``to_numpy`` / ``to_batches`` / ``count`` read the tasks in parallel, applying
  deletes as keep-masks and anti-joins (see :mod:`paimon_engine.scan.reader`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from operator import attrgetter

import pyarrow as pa

from .. import types as T
from .._parallel import thread_count
from ..errors import CorruptFileError, InvalidArgumentError, NotFoundError, SchemaError
from ..expressions import AlwaysFalse, AlwaysTrue, Expression, parse
from .delete_index import DeleteFile, DeleteFileIndex
from .evaluators import FileStats, InclusiveMetricsEvaluator, SummaryStats, evaluate_row, residual_for
from .projection import PartitionFieldInfo, project
from .tasks import FileScanTask, combine_tasks, split_tasks

__all__ = ["TableScan"]
STATUS_DELETED = 2
CONTENT_DATA = 0


class _IndexByCurrentName:
    """A file-index reader seen through the current column names."""

    __slots__ = ("reader", "names")

    def __init__(self, reader, names):
        self.reader = reader
        self.names = names

    def indexes_for(self, name, data_type):
        written = self.names.get(name)
        if written is None:
            return ()
        return self.reader.indexes_for(written, data_type)


class TableScan:
    """A configured, immutable scan; every ``with_*`` / ``select`` / ``filter`` returns a new scan."""

    def __init__(self, metadata, io, filter=None, columns=None, snapshot_id=None, as_of=None, ref=None,
                 case_sensitive=True, workers=None, table=None, limit=None, options=None, _incremental=None):
        self.metadata = metadata
        self.io = io
        self.table = table
        self.case_sensitive = case_sensitive
        self.workers = workers or thread_count()
        given = sum(x is not None for x in (snapshot_id, as_of, ref))
        if given > 1:
            raise InvalidArgumentError("give at most one of snapshot_id, as_of and ref")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise InvalidArgumentError(f"limit must be a non-negative integer, got {limit!r}")
        self.limit = limit
        self.options = dict(options or {})
        if columns is not None and not isinstance(columns, str) and tuple(columns) == ("*",):
            columns = None
        self._args = dict(filter=filter, columns=columns, snapshot_id=snapshot_id, as_of=as_of, ref=ref,
                          limit=limit, options=self.options)
        self._incremental = _incremental
        self.snapshot = self._resolve_snapshot(snapshot_id, as_of, ref)
        # time travel to a snapshot (by id, time or tag) reads it with the schema it was written with; a branch
        # is read with the table's current schema
        is_tag = ref is not None and getattr((metadata.refs or {}).get(ref), "type", "branch") == "tag"
        if (snapshot_id is not None or as_of is not None or is_tag) and self.snapshot is not None and \
                self.snapshot.schema_id is not None:
            self.schema = metadata.schema(self.snapshot.schema_id)
        else:
            self.schema = metadata.schema()
        self.row_type = self.schema.struct
        if filter is None:
            filter = AlwaysTrue()
        elif isinstance(filter, str):
            filter = parse(filter)
        elif not isinstance(filter, Expression):
            raise InvalidArgumentError(f"filter must be an expression or a string, got {type(filter).__name__}")
        self.row_filter = filter
        self.bound_filter = filter.bind(self.row_type, case_sensitive)
        self.metadata_columns, self.projected = self._projection(columns)
        self._all_fields = self._fields_of_all_schemas()

    # -- configuration -----------------------------------------------------
    def _resolve_snapshot(self, snapshot_id, as_of, ref):
        from ..spec.snapshots import resolve_snapshot
        return resolve_snapshot(self.metadata, snapshot_id, as_of, ref)

    def _projection(self, columns):
        if columns is None:
            return (), self.row_type
        if isinstance(columns, str):
            columns = [columns]
        from .reader import METADATA_COLUMNS
        meta, fields = [], []
        for c in columns:
            if c in METADATA_COLUMNS:
                meta.append(c)
                continue
            found = None
            for f in self.row_type.fields:
                if f.name == c or (not self.case_sensitive and f.name.lower() == str(c).lower()):
                    found = f
                    break
            if found is None:
                raise SchemaError(f"no column named {c!r}; columns are {self.row_type.names}")
            fields.append(found)
        return tuple(meta), T.RowType(fields)

    def _fields_of_all_schemas(self):
        out = {}
        for s in reversed(self.metadata.schemas):  # later schemas first, so current types win
            for fid, entry in s.by_id().items():
                out.setdefault(fid, entry[1])
        for f in self.row_type.fields:
            out[f.id] = f
        return out

    def _copy(self, **changes):
        args = dict(self._args)
        args.update(changes)
        return TableScan(self.metadata, self.io, case_sensitive=self.case_sensitive, workers=self.workers,
                         table=self.table, _incremental=self._incremental, **args)

    def filter_by(self, expr):
        """This scan with ``expr`` ANDed to its filter."""
        if isinstance(expr, str):
            expr = parse(expr)
        f = self.row_filter
        return self._copy(filter=f & expr if not isinstance(f, AlwaysTrue) else expr)

    filter = filter_by

    @property
    def selected_fields(self) -> tuple:
        return ("*",) if self._args["columns"] is None else tuple(self._args["columns"])

    def select(self, *columns):
        return self._copy(columns=list(columns))

    def use_snapshot(self, snapshot_id):
        return self._copy(snapshot_id=snapshot_id, as_of=None, ref=None)

    def use_ref(self, name):
        """This scan reading branch or tag ``name``."""
        return self._copy(snapshot_id=None, as_of=None, ref=name)

    def with_limit(self, limit):
        return self._copy(limit=limit)

    def between(self, from_snapshot_id, to_snapshot_id=None):
        """An incremental scan of the data files appended after ``from_snapshot_id`` (exclusive; None = from the
        start) up to ``to_snapshot_id`` (inclusive; default: the current snapshot). Only ``append`` snapshots
        contribute; deletes are not applied (a changelog of appends)."""
        to_id = to_snapshot_id if to_snapshot_id is not None else self.metadata.current_snapshot_id
        if to_id is None:
            raise NotFoundError("the table has no snapshot to read up to")
        chain = []
        found_from = from_snapshot_id is None
        for s in self.metadata.ancestors(int(to_id)):
            if from_snapshot_id is not None and s.snapshot_id == int(from_snapshot_id):
                found_from = True
                break
            chain.append(s)
        if not found_from:
            raise InvalidArgumentError(f"snapshot {from_snapshot_id} is not an ancestor of {to_id}")
        ids = frozenset(s.snapshot_id for s in chain if s.operation == "append")
        args = dict(self._args)
        args.update(snapshot_id=int(to_id), as_of=None, ref=None)
        return TableScan(self.metadata, self.io, case_sensitive=self.case_sensitive, workers=self.workers,
                         table=self.table, _incremental=ids, **args)

    # -- planning ----------------------------------------------------------
    def _manifests(self):
        snap = self.snapshot
        if snap is None:
            return []
        from ..spec.manifest_list import ManifestFile, read_manifest_list
        from ..spec.snapshots import inside_table_check
        if snap.manifest_list:
            check = inside_table_check(self.metadata)
            check(snap.manifest_list, "manifest list")
            manifests = read_manifest_list(self.io, snap.manifest_list, shared=True)
            for m in manifests:
                check(m.manifest_path, "manifest")
            return manifests
        # format v1 snapshots may list manifests inline
        return [ManifestFile(p, 0, 0, 0, 0, 0, snap.snapshot_id) for p in (snap.manifests or [])]

    def _spec_info(self, spec):
        infos = []
        for pf in spec.fields:
            src = self._all_fields.get(pf.source_id)
            if src is None:
                src_type = T.IntType()
            else:
                src_type = src.type
            try:
                rt = pf.transform.result_type(src_type)
            except Exception:
                rt = T.IntType()
            infos.append(PartitionFieldInfo(pf.field_id, pf.source_id, pf.transform, src_type, rt, pf.name))
        return infos

    def _partition_filters(self):
        """spec id -> (partition filter, [PartitionFieldInfo])."""
        out = {}
        for spec in self.metadata.specs:
            infos = self._spec_info(spec)
            if isinstance(self.bound_filter, (AlwaysTrue, AlwaysFalse)):
                pfilter = self.bound_filter
            else:
                pfilter = project(self.bound_filter, infos)
            out[spec.spec_id] = (pfilter, infos)
        return out

    def _exact_specs(self):
        """Specs where every filtered column is an identity partition source: there the partition filter decides
        each file exactly (no metrics, no residual)."""
        ids = _filter_field_ids(self.bound_filter)
        out = set()
        if not ids:
            return out
        for spec in self.metadata.specs:
            identity = {pf.source_id for pf in spec.fields if str(pf.transform) == "identity"}
            if ids <= identity:
                out.add(spec.spec_id)
        return out

    def _partition_type(self, spec_id):
        infos = self._pinfo[spec_id][1]
        return T.RowType([T.DataField(i.field_id, i.name, i.result_type.copy(True)) for i in infos])

    def plan_files(self):
        """The scan's :class:`FileScanTask` list (one per live data file that may hold matching rows)."""
        if self.snapshot is None or isinstance(self.bound_filter, AlwaysFalse):
            return []
        from ..spec.manifest import read_manifest
        self._pinfo = self._partition_filters()
        self._summary_memo = {}
        manifests = self._manifests()
        incremental = self._incremental
        data_ms, delete_ms = [], []
        for m in manifests:
            if m.content == CONTENT_DATA:
                if incremental is not None:
                    if m.added_snapshot_id not in incremental or not m.has_added_files():
                        continue
                elif not (m.has_added_files() or m.has_existing_files()):
                    continue
                if self._manifest_may_match(m):
                    data_ms.append(m)
            elif incremental is None:
                if m.has_added_files() or m.has_existing_files():
                    if self._manifest_may_match(m, deletes=True):
                        delete_ms.append(m)

        need_metrics = not isinstance(self.bound_filter, AlwaysTrue)
        exact = self._exact_specs()
        todo = data_ms + delete_ms
        # on object stores file reads run in parallel (they release the GIL and wait on the network); local reads
        # are too short for a pool to pay. Decoding runs here, one manifest after another, since it holds the GIL
        if len(todo) > 1 and self.workers > 1 and not _is_local(self.io, todo[0].manifest_path):
            with ThreadPoolExecutor(min(self.workers, len(todo))) as pool:
                blobs = list(pool.map(lambda m: self.io.read_bytes(m.manifest_path), todo))
        else:
            blobs = [self.io.read_bytes(m.manifest_path) for m in todo]
        loaded = []
        ptypes, ptests = {}, {}
        for m, blob in zip(todo, blobs):
            spec_id = m.partition_spec_id
            ptype = ptypes.get(spec_id, False)
            if ptype is False:
                ptype = ptypes[spec_id] = self._partition_type(spec_id) if spec_id in self._pinfo else None
            metrics = (need_metrics and spec_id not in exact) or m.content != CONTENT_DATA
            ptest = None
            if m.content == CONTENT_DATA and spec_id in self._pinfo:
                ptest = ptests.get(spec_id)
                if ptest is None:
                    ptest = ptests[spec_id] = _partition_test(*self._pinfo[spec_id])
            loaded.append((m, read_manifest(self.io, m, ptype, include_deleted=False, metrics=metrics, full=False,
                                            data=blob, partition_filter=ptest)))

        delete_files = []
        data_entries = []
        for m, entries in loaded:
            if m.content == CONTENT_DATA:
                data_entries.append((m, entries))
            else:
                for e in entries:
                    if e.status == STATUS_DELETED:
                        continue
                    d = _delete_file(e, m)
                    d.file_schema = self._row_schema(e.data_file)
                    delete_files.append(d)
        unpart = {s.spec_id for s in self.metadata.specs if not s.fields or s.is_unpartitioned}
        types = {fid: f.type for fid, f in self._all_fields.items()}
        index = DeleteFileIndex(delete_files, unpart, types)

        bound = self.bound_filter
        trivial = isinstance(bound, AlwaysTrue)
        metrics = None if trivial else InclusiveMetricsEvaluator(bound)
        props = self.metadata.properties or {}
        use_index = not trivial and str(props.get("file-index.read.enabled", "true")).lower() != "false"
        self.files_skipped_by_index = 0
        tasks = []
        check_deletes = not index.is_empty() and incremental is None
        row_schema = self._row_schema
        for m, entries in data_entries:
            # entries whose partition fails the filter were dropped while reading (_partition_test)
            spec_id = m.partition_spec_id
            spec_exact = spec_id in exact
            for e in entries:
                if e.status == STATUS_DELETED:
                    continue
                if incremental is not None and (e.status != 1 or e.snapshot_id not in incremental):
                    continue
                df = e.data_file
                if df.content != CONTENT_DATA:
                    continue
                stats = None
                residual = bound
                if spec_exact:
                    residual = _TRUE
                elif not trivial:
                    stats = FileStats.of(df)
                    try:
                        if not metrics.eval(stats):
                            continue
                        residual = residual_for(bound, stats)
                    except CorruptFileError as exc:
                        raise CorruptFileError(f"bad column bounds of data file {df.file_path}: {exc}",
                                               path=m.manifest_path) from None
                    if isinstance(residual, AlwaysFalse):
                        continue
                selection = None
                if use_index and df.file_index:
                    from ..index.result import SKIP, BitmapResult   # loaded only for tables with file indexes
                    result = self._file_index_result(df, bound)
                    if result is SKIP:
                        self.files_skipped_by_index += 1
                        continue
                    if isinstance(result, BitmapResult):
                        selection = result.selection(df.record_count)
                seq = e.sequence_number or 0
                deletes = []
                if check_deletes:
                    if stats is None:
                        stats = FileStats.of(df)
                    deletes = index.for_data_file(df.file_path, seq, spec_id, df.partition, stats)
                fmt = df.file_format
                split = df.split_offsets
                tasks.append(FileScanTask(
                    df.file_path, fmt.lower(), df.record_count, df.file_size_in_bytes, spec_id, df.partition, seq,
                    deletes, residual, selection, None, None, tuple(split) if split else None, e.snapshot_id,
                    row_schema(df) if fmt == "ROW" else None, df.first_row_id))
        return tasks

    def _file_index_result(self, df, bound):
        """SKIP, REMAIN or a BitmapResult for ``bound`` from the data file's Paimon file index.

        The index names columns as the writer schema did; predicates name current columns, so they are matched by
        field id, and a column whose type changed since the file was written is not answered by its index."""
        from ..index.evaluate import evaluate_file_index
        from ..index.result import REMAIN
        from ..index.container import load_file_index
        writer = self.metadata.schema(df.writer_schema_id) if df.writer_schema_id is not None else self.schema
        by_id = {f.id: f for f in writer.struct.fields}
        names = {}
        for f in self.schema.struct.fields:
            w = by_id.get(f.id)
            if w is not None and w.type == f.type:
                names[f.name] = w.name
        if not names:
            return REMAIN
        with load_file_index(self.io, df.file_index, path=df.file_path) as reader:
            return evaluate_file_index(bound, _IndexByCurrentName(reader, names))

    def _row_schema(self, df):
        """The RowType a ``row`` file was written with (None for self-describing formats)."""
        if (df.file_format or "").upper() != "ROW":
            return None
        from ..spec.snapshots import row_file_schema
        return row_file_schema(df, self.metadata, self.schema)

    def _manifest_may_match(self, m, deletes=False):
        parts = m.partitions
        if parts is None:
            return True
        # per spec: its evaluator, the summary positions the filter reads and the answers remembered per distinct
        # summary of those (manifests of one table repeat few of them); True when every manifest may match
        memo = self._summary_memo.get(m.partition_spec_id)
        if memo is None:
            memo = self._summary_memo[m.partition_spec_id] = self._summary_pruner(m.partition_spec_id)
        if memo is True:
            return True
        evaluator, pos, answers, infos = memo
        if deletes and not infos:
            return True  # global equality deletes
        try:
            if pos is None or len(parts) != len(infos):
                key = tuple(map(_SUMMARY_KEY, parts))
            else:
                key = tuple([_SUMMARY_KEY(parts[j]) for j in pos])
            hit = answers.get(key)
        except (TypeError, AttributeError):  # unhashable or odd summaries: evaluate without the memo
            key = hit = None
        if hit is not None:
            return hit
        summaries = {i.field_id: s for i, s in zip(infos, parts)}
        try:
            hit = bool(evaluator.eval(SummaryStats(summaries)))
        except Exception:  # unusable summaries never prune
            hit = True
        if key is not None and len(answers) < 65536:
            answers[key] = hit
        return hit

    def _summary_pruner(self, spec_id):
        info = self._pinfo.get(spec_id)
        if info is None or isinstance(info[0], AlwaysTrue):
            return True
        pfilter, infos = info
        used = _filter_field_ids(pfilter, unbound_as_none=True)
        pos = tuple(j for j, i in enumerate(infos) if i.field_id in used) if used else None
        return InclusiveMetricsEvaluator(pfilter), pos, {}, infos

    def plan_tasks(self, target_size: int = 128 << 20, open_file_cost: int = 4 << 20):
        """Tasks split at row-group offsets and combined to about ``target_size`` bytes each."""
        return combine_tasks(split_tasks(self.plan_files(), target_size), target_size, open_file_cost)

    # -- reading -----------------------------------------------------------
    def _reader(self, projected=None):
        from .reader import TaskReader   # imported on first read: planning alone does not load pyarrow.compute
        return TaskReader(self.io, self.row_type, self.projected if projected is None else projected,
                          self.metadata_columns if projected is None else (), self._all_fields,
                          self.case_sensitive)

    def task_reader(self):
        """A picklable :class:`~paimon_engine.scan.reader.TaskReader` for this scan's projection: ship it with
        the tasks (``plan_files`` / ``plan_tasks``) and call ``read_task(task)`` where the task runs."""
        return self._reader()

    def to_batches(self, batch_size: int = 131072, tasks=None):
        """Stream ``pyarrow.RecordBatch`` objects task after task (bounded memory)."""
        reader = self._reader()
        left = self.limit
        if left == 0:
            return
        for t in (self.plan_files() if tasks is None else tasks):
            for b in reader.read_task(t, batch_size):
                if left is not None:
                    if b.num_rows >= left:
                        yield b.slice(0, left)
                        return
                    left -= b.num_rows
                yield b

    def to_arrow_batch_reader(self, batch_size: int = 131072) -> pa.RecordBatchReader:
        """A streaming ``pyarrow.RecordBatchReader``: tasks are read one after another as batches are pulled."""
        return pa.RecordBatchReader.from_batches(self._reader().output_schema, self.to_batches(batch_size))

    def to_duckdb(self, table_name: str, connection=None):
        """Register the result as ``table_name`` in a DuckDB connection (a new in-memory one by default)."""
        import duckdb
        con = connection or duckdb.connect(database=":memory:")
        con.register(table_name, self.to_arrow())
        return con

    def to_polars(self):
        import polars as pl
        return pl.from_arrow(self.to_arrow())

    def to_arrow(self, tasks=None) -> pa.Table:
        if self.limit is not None:
            reader = self._reader()
            return pa.Table.from_batches(list(self.to_batches(tasks=tasks)), schema=reader.output_schema)
        reader = self._reader()
        tasks = self.plan_files() if tasks is None else list(tasks)

        def run(t):
            return list(reader.read_task(t))

        if len(tasks) > 1 and self.workers > 1:
            with ThreadPoolExecutor(min(self.workers, len(tasks))) as pool:
                parts = list(pool.map(run, tasks))
        else:
            parts = [run(t) for t in tasks]
        batches = [b for p in parts for b in p]
        if not batches:
            return reader.output_schema.empty_table()
        return pa.Table.from_batches(batches, schema=reader.output_schema)

    def to_pandas(self, **kwargs):
        from ..batch import arrow_to_pandas
        return arrow_to_pandas(self.to_arrow())

    def to_numpy(self) -> dict:
        """Column name -> NumPy array (masked arrays where a column has nulls)."""
        from ..batch import ColumnBatch
        tbl = self.to_arrow()
        return ColumnBatch.from_arrow(tbl).to_numpy()

    def to_column_batch(self):
        from ..batch import ColumnBatch
        return ColumnBatch.from_arrow(self.to_arrow())

    def count(self) -> int:
        """Exact row count: from metadata for files without deletes or residuals, by reading the rest (capped at
        ``limit`` when one is set)."""
        if self.limit is not None:
            return sum(b.num_rows for b in self._copy(columns=[])._limited_batches())
        tasks = self.plan_files()
        total = 0
        rest = []
        for t in tasks:
            if not t.deletes and isinstance(t.residual, AlwaysTrue) and t.selection is None and t.record_count >= 0:
                total += t.record_count
            else:
                rest.append(t)
        if rest:
            reader = self._reader(projected=T.RowType([]))
            for t in rest:
                for b in reader.read_task(t):
                    total += b.num_rows
        return total

    def _limited_batches(self):
        return self.to_batches()

    def __repr__(self):
        sid = None if self.snapshot is None else self.snapshot.snapshot_id
        return f"TableScan(snapshot={sid}, filter={self.row_filter!r}, columns={self.row_type.names if not self.projected else self.projected.names})"


def _filter_field_ids(expr, unbound_as_none=False):
    """Field ids the predicates of ``expr`` read; with ``unbound_as_none``, None when some predicate has none."""
    from ..expressions import And, Not, Or, Predicate
    out = set()
    unbound = False
    todo = [expr]      # (a loop, not a closure calling itself: that is a reference cycle left for the collector)
    while todo:
        e = todo.pop()
        if isinstance(e, (And, Or)):
            todo += (e.right, e.left)
        elif isinstance(e, Not):
            todo.append(e.child)
        elif isinstance(e, Predicate):
            if e.field_id is not None:
                out.add(e.field_id)
            else:
                unbound = True
    return None if unbound_as_none and unbound else out


_TRUE = AlwaysTrue()
#: a partition field summary as a hashable key of the manifest pruning memo
_SUMMARY_KEY = attrgetter("contains_null", "contains_nan", "lower_bound", "upper_bound")


def _is_local(io, path):
    is_local = getattr(io, "is_local", None)
    try:
        return bool(is_local(path)) if is_local is not None else False
    except Exception:  # an unresolvable location: reading it reports the problem
        return False


def _partition_test(pfilter, infos):
    """A partition tuple -> keep? test for one spec's projected filter (None when it keeps everything), with the
    answers remembered per distinct partition tuple (a manifest list usually holds few)."""
    if isinstance(pfilter, AlwaysTrue):
        return None
    pids = [i.field_id for i in infos]
    memo = {}

    def test(pvals):
        try:
            hit = memo.get(pvals)
        except TypeError:  # an unhashable partition value from some writer: no memo
            return evaluate_row(pfilter, dict(zip(pids, pvals)))
        if hit is None:
            hit = bool(evaluate_row(pfilter, dict(zip(pids, pvals))))
            if len(memo) < 65536:
                memo[pvals] = hit
        return hit
    return test


def _delete_file(e, m):
    df = e.data_file
    seq = e.sequence_number or 0
    return DeleteFile(
        df.file_path, df.content, df.file_format.lower(), seq, m.partition_spec_id, tuple(df.partition),
        df.record_count, df.file_size_in_bytes, df.referenced_data_file,
        tuple(df.equality_ids or ()), getattr(df, "content_offset", None),
        getattr(df, "content_size_in_bytes", None), FileStats.of(df))
