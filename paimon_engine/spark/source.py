"""The ``paimon_engine`` PySpark data source (Python Data Source API, PySpark 4.x)."""

from __future__ import annotations

import logging

from pyspark.sql.datasource import (DataSource, DataSourceArrowWriter, DataSourceReader, InputPartition,
                                    WriterCommitMessage)

from . import options as O
from .planning import SPARK_BATCH_ROWS, plan_groups
from .writing import abort_job, commit_job_files, new_job_id, write_job_files, written_locations

__all__ = ["PaimonEngineDataSource", "TablePartition", "RowFilePartition", "DataFilesMessage",
           "translate_filters"]


class TablePartition(InputPartition):
    """Partition ``index`` of ``count``: the tasks planned for it at ``snapshot_id``, the picklable reader that
    reads them in the executor, the Arrow schema Spark expects, and the split size used (to re-plan alike)."""

    def __init__(self, index, count, snapshot_id, tasks, task_reader, arrow_schema, split_size):
        super().__init__(index)
        self.index = index
        self.count = count
        self.snapshot_id = snapshot_id
        self.tasks = tasks
        self.task_reader = task_reader
        self.arrow_schema = arrow_schema
        self.split_size = split_size


class RowFilePartition(InputPartition):
    def __init__(self, path):
        super().__init__(path)
        self.path = path


class DataFilesMessage(WriterCommitMessage):
    """What one write task produced: its data files (``DataFile`` objects) and their locations."""

    def __init__(self, data_files, locations):
        self.data_files = data_files
        self.locations = locations


# -- filters -----------------------------------------------------------------
_PUSHABLE_TYPES = ("BooleanType", "TinyIntType", "SmallIntType", "IntType", "BigIntType", "CharType",
                   "VarCharType", "DateType", "DecimalType")


def _literal(v):
    import datetime as dt
    import decimal
    if isinstance(v, (bool, int, str, dt.date, decimal.Decimal)) and not isinstance(v, dt.datetime):
        return v
    raise TypeError("literal kind not pushed")


def translate_filters(filters, row_type):
    """Spark ``Filter`` objects -> (engine expression or None, filters Spark must still evaluate).

    Filters on top-level columns of integer, string, boolean, date and decimal types are pushed into the scan,
    which prunes partitions, files (metrics) and row groups, and evaluates them exactly on the rows it returns, so
    Spark does not evaluate them again. Negations, null-safe equality, floating point and timestamp columns,
    nested columns and ``LIKE '%x'`` stay in Spark (their null and NaN semantics differ)."""
    from pyspark.sql import datasource as D

    from .. import expressions as E
    types = {f.name: type(f.type).__name__ for f in row_type.fields}
    pushed, rest = [], []
    for f in filters:
        expr = None
        attr = getattr(f, "attribute", None)
        if attr is not None and len(attr) == 1 and types.get(attr[0]) in _PUSHABLE_TYPES:
            c = E.col(attr[0])
            try:
                if isinstance(f, D.EqualTo):
                    expr = c == _literal(f.value)
                elif isinstance(f, D.GreaterThan):
                    expr = c > _literal(f.value)
                elif isinstance(f, D.GreaterThanOrEqual):
                    expr = c >= _literal(f.value)
                elif isinstance(f, D.LessThan):
                    expr = c < _literal(f.value)
                elif isinstance(f, D.LessThanOrEqual):
                    expr = c <= _literal(f.value)
                elif isinstance(f, D.In):
                    vals = [_literal(v) for v in f.value if v is not None]
                    expr = c.isin(vals) if vals else None
                elif isinstance(f, D.IsNull):
                    expr = c.is_null()
                elif isinstance(f, D.IsNotNull):
                    expr = c.not_null()
                elif isinstance(f, D.StringStartsWith) and types[attr[0]] in ("VarCharType", "CharType"):
                    expr = c.starts_with(_literal(f.value))
                if expr is not None:
                    expr.bind(row_type)    # a literal of the wrong kind stays in Spark
            except Exception:
                expr = None
        if expr is None:
            rest.append(f)
        else:
            pushed.append(expr)
    if not pushed:
        return None, rest
    out = pushed[0]
    for e in pushed[1:]:
        out = out & e
    return out, rest


# -- reading -----------------------------------------------------------------
_log = logging.getLogger("paimon_engine.spark")
_told = set()


def _tell_once(key, message):
    """Log ``message`` once per Python process (Spark reuses its planning workers)."""
    if key not in _told:
        _told.add(key)
        _log.warning(message)


def spark_version():
    """(major, minor) of the PySpark running this process."""
    import pyspark
    parts = pyspark.__version__.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return 0, 0


# Up to Spark 4.3 the JVM keeps one planned read (partitions and read function) on the data source relation and
# reuses it for every later query of that relation that pushes no filter; a read planned with pushed filters then
# silently drops rows from later unfiltered queries. Newer Spark versions keep pushdown results per scan.
PUSHDOWN_UNSAFE_UP_TO = (4, 3)


def pushdown_default() -> bool:
    return spark_version() > PUSHDOWN_UNSAFE_UP_TO


class TableReader(DataSourceReader):
    """Reads a table; Spark evaluates every filter (the default up to Spark 4.3, see :class:`PushdownTableReader`).

    Spark may reuse one planned read (the partitions, and this reader pickled before ``partitions()`` ran) for
    later queries of the same DataFrame or view. So each partition carries the snapshot it was planned at, and its
    task re-checks the table: if the table has moved on (and no snapshot was pinned), the task plans the current
    snapshot itself and reads its share of the new tasks (every ``count``-th one from its ``index``)."""

    def __init__(self, options, schema, session_defaults=None):
        self.options = dict(options)
        self.schema = schema
        self.session_defaults = session_defaults
        self.filter = None
        self.time_travel = O.time_travel(self.options)
        self.pinned = any(k in self.time_travel for k in ("snapshot_id", "as_of"))

    def _scan(self, table=None):
        table = O.load_table(self.options) if table is None else table
        return table.scan(filter=self.filter, columns=[f.name for f in self.schema.fields], **self.time_travel)

    def partitions(self):
        scan = self._scan()
        conf = O.split_settings(self.options, self.session_defaults)
        groups, split = plan_groups(scan, **conf)
        target = O.arrow_schema_from_spark(self.schema)
        reader = scan.task_reader()
        sid = None if scan.snapshot is None else scan.snapshot.snapshot_id
        if not groups:
            groups = [[]]   # one partition, so that a later query of this planned read can see new commits
        return [TablePartition(i, len(groups), sid, g, reader, target, split) for i, g in enumerate(groups)]

    def _current_tasks(self, partition):
        if self.pinned:
            return partition.tasks, partition.task_reader
        scan = self._scan()
        sid = None if scan.snapshot is None else scan.snapshot.snapshot_id
        if sid == partition.snapshot_id:
            return partition.tasks, partition.task_reader
        from .planning import split_files
        tasks = split_files(scan.plan_files(), partition.split_size, scan.io)
        return tasks[partition.index::partition.count], scan.task_reader()

    def read(self, partition):
        if not isinstance(partition, TablePartition):
            return
        tasks, reader = self._current_tasks(partition)
        target = partition.arrow_schema
        for task in tasks:
            for batch in reader.read_task(task, batch_size=SPARK_BATCH_ROWS):
                if batch.num_rows:
                    yield O.conform_batch(batch, target)


class PushdownTableReader(TableReader):
    """Reads a table with Spark's filters pushed into the scan (option ``pushdown`` = ``true``; needs
    ``spark.sql.python.filterPushdown.enabled=true``). Unsafe up to Spark 4.3 for a DataFrame or view queried
    more than once (see ``PUSHDOWN_UNSAFE_UP_TO``)."""

    def pushFilters(self, filters):
        table = O.load_table(self.options)
        expr, rest = translate_filters(list(filters), table.schema().struct)
        self.filter = expr
        return rest


class RowFilesReader(DataSourceReader):
    def __init__(self, options, schema):
        self.options = dict(options)
        self.schema = schema

    def partitions(self):
        path = O.table_path(self.options)
        io = O.file_io(self.options)
        if path.endswith(".row"):
            files = [path]
        else:
            base = path.rstrip("/")
            files = sorted(i.path if "://" not in base else f"{base.split('://', 1)[0]}://{i.path}"
                           for i in io.list(base) if i.base_name.endswith(".row"))
            if not files:
                from ..errors import NotFoundError
                raise NotFoundError(f"no .row files under {path}")
        return [RowFilePartition(f) for f in files]

    def read(self, partition):
        from ..formats.row import RowFileReader
        from ..types import schema_from_arrow
        target = O.arrow_schema_from_spark(self.schema)
        text = O._opt(self.options, "schema", default="")
        row_type = O.row_type_option(text) if text else None
        if row_type is None:
            row_type = schema_from_arrow(target)
        names = [f.name for f in self.schema.fields]
        with RowFileReader(partition.path, row_type, file_io=O.file_io(self.options)) as r:
            for cb in r.read(columns=names, batch_rows=65536):
                rb = cb.to_arrow()
                if hasattr(rb, "to_batches"):
                    for b in rb.to_batches():
                        yield O.conform_batch(b, target)
                else:
                    yield O.conform_batch(rb, target)


# -- writing -----------------------------------------------------------------
class TableWriter(DataSourceArrowWriter):
    """Executors write data files under a directory of this job (``write``); the driver commits them in one
    snapshot (``commit``) or deletes every file of the job (``abort``)."""

    def __init__(self, options, overwrite, rows_per_file_batch=1 << 20, job_id=None):
        self.options = dict(options)
        self.overwrite = overwrite
        self.rows_per_file_batch = rows_per_file_batch
        self.job_id = job_id or new_job_id()

    def write(self, iterator):
        import pyarrow as pa
        table = O.load_table(self.options)
        files, pending, n = [], [], 0

        def flush():
            nonlocal pending, n
            if pending:
                files.extend(write_job_files(table, pa.Table.from_batches(pending), self.job_id))
            pending, n = [], 0

        try:
            for batch in iterator:
                if batch.num_rows:
                    pending.append(batch)
                    n += batch.num_rows
                    if n >= self.rows_per_file_batch:
                        flush()
            flush()
        except BaseException:
            io = table.io
            for loc in written_locations(files):
                io.delete(loc)
            raise
        return DataFilesMessage(files, written_locations(files))

    def commit(self, messages):
        files = [df for m in messages if m is not None for df in m.data_files]
        commit_job_files(O.load_table(self.options), files, self.overwrite)

    def abort(self, messages):
        io = O.file_io(self.options)
        for m in messages:
            if m is None:
                continue
            for loc in m.locations:
                io.delete(loc)
        try:
            table = O.load_table(self.options)
        except Exception:   # nothing more to find without the table
            return
        abort_job(table.io, table, self.job_id)


class PaimonEngineDataSource(DataSource):
    """``format("paimon_engine")``: tables (by location, or by name with ``catalog.*`` options) and ``.row``
    files. See ``docs/spark.md`` for the options."""

    session_defaults = None   # split settings of a session, bound by ``register(spark)``

    @classmethod
    def name(cls):
        return "paimon_engine"

    def schema(self):
        if O.is_row_files(self.options):
            text = O._opt(self.options, "schema")
            if not text:
                from ..errors import InvalidArgumentError
                raise InvalidArgumentError(".row files carry no schema: give option('schema', 'ROW<...>') "
                                           "or a Spark DDL string")
            rt = O.row_type_option(text)
            if rt is None:
                return text
            import pyarrow as pa
            return O.spark_schema_from_arrow(pa.schema(list(rt.to_arrow())))
        table = O.load_table(self.options)
        tt = O.time_travel(self.options)
        scan = table.scan(columns=O.scan_columns(table, self.options, tt), **tt)
        return O.spark_schema_from_arrow(scan.task_reader().output_schema)

    def reader(self, schema):
        if O.is_row_files(self.options):
            return RowFilesReader(self.options, schema)
        if O.pushdown(self.options, pushdown_default()):
            if spark_version() <= PUSHDOWN_UNSAFE_UP_TO:
                _tell_once("unsafe", "paimon_engine: option pushdown=true on Spark <= 4.3: Spark reuses a read "
                           "planned with pushed filters for later unfiltered queries of the same DataFrame or view; "
                           "use each such DataFrame for one query (docs/spark.md, Filter pushdown)")
            return PushdownTableReader(self.options, schema, self.session_defaults)
        _tell_once("off", "paimon_engine: filter pushdown is off, Spark evaluates the filters (on Spark <= 4.3 "
                   "a pushed-down read could be reused for other queries). For pruned reads use "
                   "paimon_engine.spark.read_table(spark, table, row_filter=...) (docs/spark.md)")
        return TableReader(self.options, schema, self.session_defaults)

    def writer(self, schema, overwrite):
        if O.is_row_files(self.options):
            from ..errors import InvalidArgumentError
            raise InvalidArgumentError("writing .row files directly is not supported; write a table with "
                                       "option('table.write.format.default', 'row')")
        O.create_table_if_missing(self.options, O.arrow_schema_from_spark(schema))
        return TableWriter(self.options, overwrite)
