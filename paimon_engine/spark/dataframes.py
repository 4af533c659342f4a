"""``read_table`` and ``write_table``: tables as Spark DataFrames through ``mapInArrow`` (Spark 3.3 and later,
including Spark 4), beside the data source.

Reading: the driver plans the scan and groups the tasks the way Spark sizes file splits; the groups travel as
rows of a small DataFrame (one row per Spark partition), and ``mapInArrow`` reads them in the executors with the
scan's task reader, which is shipped once with the function. Writing: ``mapInArrow`` writes data files partitioned
by the table's spec in the executors and returns their descriptions; the driver commits them in one snapshot. A
failed job commits nothing and deletes every file its tasks wrote (they write under a directory of the job, see
:mod:`.writing`).
"""

from __future__ import annotations

import pickle

from ..errors import InvalidArgumentError, NotFoundError, SchemaError
from . import options as O
from .planning import SPARK_BATCH_ROWS, plan_groups
from .writing import abort_job, commit_job_files, new_job_id, remove_job_files, write_job_files, written_locations

__all__ = ["read_table", "write_table", "table_options"]

#: read_table / write_table keywords that are catalog properties (they become ``catalog.<key>`` options)
_CATALOG_KEYS = ("uri", "warehouse", "name", "type", "token", "credential", "prefix", "connect-timeout",
                 "pool-size", "commit-retries")


def table_options(table: str, catalog_properties: dict) -> dict:
    """Data source options for ``table`` and the ``catalog_properties`` of :func:`read_table` /
    :func:`write_table`: ``uri``, ``warehouse``, ``name``, ``type``, ``token``, ``credential`` and the SQL
    catalog's ``connect-timeout`` / ``pool-size`` / ``commit-retries`` (or their ``catalog.`` forms) name the catalog,
    ``s3.*`` and the like configure file I/O, split options (``split-size``, ...) pass through."""
    if not isinstance(table, str) or not table:
        raise InvalidArgumentError(f"table must be a catalog identifier or a table location, got {table!r}")
    opts = {}
    for k, v in catalog_properties.items():
        if v is None:
            continue
        key = k.replace("_", "-") if k in ("split_size", "max_partition_bytes", "open_cost_bytes", "connect_timeout",
                                           "pool_size", "commit_retries") else k
        opts[f"catalog.{key}" if key in _CATALOG_KEYS else key] = str(v)
    opts["path"] = table
    return opts


def _describe_catalog(opts) -> str:
    uri, wh = O._opt(opts, "catalog.uri"), O._opt(opts, "catalog.warehouse")
    if uri:
        from ..catalog.sql import mask_uri
        kind = "REST" if str(uri).startswith(("http://", "https://")) else "SQL"
        return f"{kind} catalog {O._opt(opts, 'catalog.name', default='default')!r} at {mask_uri(uri)}"
    if wh:
        return f"file-system catalog at {wh}"
    return "no catalog (a table location was expected)"


def _load(opts):
    try:
        return O.load_table(opts)
    except NotFoundError as exc:
        raise NotFoundError(f"table {opts['path']!r} not found in {_describe_catalog(opts)}: {exc}") from None


def _arrow_target(spark_schema):
    return O.arrow_schema_from_spark(spark_schema)


# -- reading -------------------------------------------------------------------
def read_table(spark, table, row_filter=None, selected_fields=None, snapshot_id=None, ref=None, as_of=None,
               metadata_columns=None, **catalog_properties):
    """A DataFrame of ``table`` (a catalog identifier with ``uri``/``warehouse`` properties, or a table location).

    ``row_filter`` (an expression or a filter string) prunes partitions, files and row groups and is evaluated
    exactly; ``selected_fields`` picks columns; ``metadata_columns`` adds metadata columns after them
    (``_row_id``, ``_last_updated_sequence_number``, ``_file``, ``_pos``); ``snapshot_id``, ``ref`` or ``as_of``
    time-travel. Planning happens now, on the driver: the DataFrame reads the snapshot that was current at this
    call."""
    opts = table_options(table, catalog_properties)
    tbl = _load(opts)
    columns = list(selected_fields) if selected_fields is not None else None
    if metadata_columns:
        text = metadata_columns if isinstance(metadata_columns, str) else ",".join(metadata_columns)
        meta = O.metadata_columns_option({"metadata-columns": text})
        if columns is None:
            columns = tbl.scan(snapshot_id=snapshot_id, ref=ref, as_of=as_of).projected.names
        columns += [m for m in meta if m not in columns]
    scan = tbl.scan(filter=row_filter, columns=columns, snapshot_id=snapshot_id, ref=ref, as_of=as_of)
    settings = O.split_settings(opts, O.session_split_defaults(spark))
    groups, _ = plan_groups(scan, **settings)
    reader = scan.task_reader()
    spark_schema = O.spark_schema_from_arrow(reader.output_schema)
    target = _arrow_target(spark_schema)
    rows = [(i, pickle.dumps(g, protocol=pickle.HIGHEST_PROTOCOL)) for i, g in enumerate(groups)]
    from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType
    task_schema = StructType([StructField("index", IntegerType(), False), StructField("tasks", BinaryType(), False)])
    rdd = spark.sparkContext.parallelize(rows, max(1, len(rows)))
    tasks_df = spark.createDataFrame(rdd, task_schema)

    def read_groups(batches):
        for b in batches:
            for blob in b.column(1).to_pylist():
                for task in pickle.loads(blob):
                    for batch in reader.read_task(task, batch_size=SPARK_BATCH_ROWS):
                        if batch.num_rows:
                            yield O.conform_batch(batch, target)

    return tasks_df.mapInArrow(read_groups, spark_schema)


# -- writing -------------------------------------------------------------------
def _kind(t):
    import pyarrow as pa
    import pyarrow.types as pt
    if pt.is_integer(t):
        return "int"
    if pt.is_floating(t):
        return "float"
    if pt.is_string(t) or pt.is_large_string(t):
        return "string"
    if pt.is_binary(t) or pt.is_large_binary(t) or pt.is_fixed_size_binary(t):
        return "binary"
    if pt.is_timestamp(t):
        return "timestamp"
    if pt.is_decimal(t):
        return "decimal"
    if pt.is_date(t):
        return "date"
    if pt.is_boolean(t):
        return "bool"
    if isinstance(t, pa.DataType):
        return str(t)
    return repr(t)


def _fits(src, dst) -> bool:
    """Whether values of Arrow type ``src`` (the DataFrame) can be written to a column of ``dst`` (the table)
    without loss of kind: equal types, widening integers and floats, string and binary flavours, timestamps of
    any unit and zone, decimals of the same scale and no smaller precision."""
    if src.equals(dst):
        return True
    ks, kd = _kind(src), _kind(dst)
    if ks != kd:
        return False
    if ks == "int":
        import pyarrow.types as pt
        if pt.is_signed_integer(src):
            return pt.is_signed_integer(dst) and dst.bit_width >= src.bit_width
        return dst.bit_width > src.bit_width or (not pt.is_signed_integer(dst) and dst.bit_width == src.bit_width)
    if ks == "float":
        return dst.bit_width >= src.bit_width
    if ks == "decimal":
        return src.scale == dst.scale and dst.precision >= src.precision
    if ks in ("string", "binary", "timestamp", "date", "bool"):
        return True
    return False


def check_write_schema(spark_schema, table_schema):
    """Raise :class:`SchemaError` naming the first column of the DataFrame that does not fit the table."""
    target = {f.name: f for f in table_schema.to_arrow()}
    required = {f.name for f in table_schema.fields if f.required}
    src = _arrow_target(spark_schema)
    for f in src:
        if f.name not in target:
            raise SchemaError(f"column {f.name!r} of the DataFrame is not in the table (columns: "
                              f"{', '.join(target)})")
        if not _fits(f.type, target[f.name].type):
            raise SchemaError(f"column {f.name!r}: the DataFrame's {f.type} does not fit the table's "
                              f"{target[f.name].type}")
    missing = sorted(required - set(src.names))
    if missing:
        raise SchemaError(f"column {missing[0]!r} is required by the table and missing from the DataFrame")


def write_table(df, table, mode="append", overwrite_filter=None, **catalog_properties):
    """Write ``df`` into ``table`` (a catalog identifier or a table location) in one snapshot.

    ``mode``: ``"append"`` adds the rows; ``"overwrite"`` replaces the rows matching ``overwrite_filter`` (every
    row when it is None). The executors write the data files; the driver commits once. -> the new snapshot."""
    if mode not in ("append", "overwrite"):
        raise InvalidArgumentError(f"mode must be one of 'append', 'overwrite'; got {mode!r}")
    if overwrite_filter is not None and mode != "overwrite":
        raise InvalidArgumentError("overwrite_filter needs mode='overwrite'")
    opts = table_options(table, catalog_properties)
    tbl = _load(opts)
    check_write_schema(df.schema, tbl.schema())
    bound = None
    if overwrite_filter is not None:
        from ..table.table import _as_filter
        try:
            bound = _as_filter(overwrite_filter).bind(tbl.schema().struct)
        except Exception as exc:
            raise InvalidArgumentError(f"overwrite_filter {overwrite_filter!r} does not bind to the table: "
                                       f"{exc}") from None
    spark = df.sparkSession
    sc = spark.sparkContext
    schema_id = tbl.schema().schema_id
    job_id = new_job_id()

    def write_part(batches):
        import pyarrow as pa
        t = O.load_table(opts)
        if t.schema().schema_id != schema_id:
            raise SchemaError(f"the schema of table {opts['path']!r} changed while the job ran")
        files = []
        try:
            pending = [b for b in batches if b.num_rows]
            if pending:
                files = write_job_files(t, pa.Table.from_batches(pending), job_id)
        except BaseException:
            for loc in written_locations(files):
                t.io.delete(loc)
            raise
        yield pa.record_batch([pa.array([pickle.dumps(files, protocol=pickle.HIGHEST_PROTOCOL)], pa.binary())],
                              names=["files"])

    group = f"paimon_engine-write-{job_id}"
    previous = sc.getLocalProperty("spark.jobGroup.id")
    sc.setLocalProperty("spark.jobGroup.id", group)
    try:
        results = df.mapInArrow(write_part, "files binary").collect()
    except BaseException:
        _wait_for_tasks(sc, group)
        abort_job(tbl.io, tbl, job_id)
        raise
    finally:
        sc.setLocalProperty("spark.jobGroup.id", previous)
    files = [f for r in results for f in pickle.loads(r.files)]
    committed = written_locations(files)
    try:
        snap = commit_job_files(O.load_table(opts), files, mode == "overwrite", bound)
    except BaseException:
        abort_job(tbl.io, tbl, job_id)
        raise
    # files of task attempts whose results Spark did not use (retried or speculative tasks)
    _wait_for_tasks(sc, group)
    remove_job_files(tbl.io, tbl, job_id, keep=committed)
    return snap


def _wait_for_tasks(sc, group, limit_s=120.0):
    """Wait until no task of the job group runs any more (tasks of a failed job are killed asynchronously and
    may still be writing), at most ``limit_s`` seconds."""
    import time
    tracker = sc.statusTracker()
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        active = 0
        for jid in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(jid)
            for sid in (info.stageIds if info is not None else ()):
                st = tracker.getStageInfo(sid)
                active += st.numActiveTasks if st is not None else 0
        if active == 0:
            return
        time.sleep(0.1)
