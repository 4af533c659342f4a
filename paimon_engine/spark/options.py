"""Option parsing shared by the data source, the mutation helpers and the CLI: which table or files a path
names, and how to convert schemas between the engine, Arrow and Spark. No Spark import at module level."""

from __future__ import annotations

from ..errors import AlreadyExistsError, InvalidArgumentError, NotFoundError

IO_PREFIXES = ("s3.", "gcs.", "hdfs.")


def io_properties(options) -> dict:
    """``s3.*`` (and other filesystem) options -> FileIO properties."""
    return {k: v for k, v in options.items() if k.startswith(IO_PREFIXES)}


def file_io(options):
    from ..io import FileIO
    return FileIO(properties=io_properties(options))


def _opt(options, *names, default=None):
    for n in names:
        for k in (n, n.lower()):
            if k in options and options[k] not in (None, ""):
                return options[k]
    return default


def catalog_from_options(options):
    """The catalog the options name, or None. Every ``catalog.<property>`` option is a catalog property of
    :func:`~paimon_engine.catalog.load_catalog` (``catalog.type``, ``catalog.uri``, ``catalog.warehouse``,
    ``catalog.token``, ``catalog.connect-timeout``, ...; ``catalog.name`` names the catalog, default
    ``default``): ``catalog.uri`` alone picks the type from the URL (``sqlite:`` / ``postgresql+psycopg:`` a SQL
    catalog, ``http(s):`` a REST catalog), ``catalog.warehouse`` alone a file-system catalog."""
    from ..catalog.loader import load_catalog
    props = {}
    for k, v in options.items():
        low = str(k).lower()
        if low.startswith("catalog.") and v is not None and low != "catalog.name":
            props[low[len("catalog."):]] = v
    if not props.get("uri") and not props.get("warehouse") and not props.get("type"):
        return None
    name = _opt(options, "catalog.name", default="default")
    if not props.get("type"):
        uri = str(props.get("uri") or "")
        props["type"] = "rest" if uri.startswith(("http://", "https://")) else ("sql" if uri else "filesystem")
    props["io"] = file_io(options)
    return load_catalog(name, **props)


def table_path(options) -> str:
    path = _opt(options, "path", "table")
    if not path:
        raise InvalidArgumentError("give a table location or name: load('<path>') or option('path', ...)")
    return path


def load_table(options):
    """The table named by ``path``: an identifier in the catalog the options give, else a table location (a
    file-system catalog table directory)."""
    from ..catalog.filesystem import FileSystemCatalog
    path = table_path(options)
    cat = catalog_from_options(options)
    if cat is not None:
        return cat.load_table(path)
    return FileSystemCatalog(path.rsplit("/", 1)[0] or "/", io=file_io(options)).load_table_at(path)


def create_table_if_missing(options, arrow_schema):
    """Load the table, or create it from ``arrow_schema`` (``partition-by`` option: ``col`` or
    ``col:transform`` comma-separated, e.g. ``day:identity,id:bucket[8]``)."""
    try:
        return load_table(options)
    except NotFoundError:
        pass
    from ..catalog.filesystem import FileSystemCatalog
    spec = []
    for part in (_opt(options, "partition-by", default="") or "").split(","):
        part = part.strip()
        if part:
            c, _, tr = part.partition(":")
            spec.append((c.strip(), (tr or "identity").strip()))
    props = {k[len("table."):]: v for k, v in options.items() if k.startswith("table.")}
    path = table_path(options)
    cat = catalog_from_options(options)
    if cat is not None:
        ns = path.rsplit(".", 1)[0] if "." in path else None
        if ns and hasattr(cat, "namespace_exists") and not cat.namespace_exists(ns):
            cat.create_namespace(ns)
        return cat.create_table(path, arrow_schema, spec or None, properties=props)
    fs_cat = FileSystemCatalog(path.rsplit("/", 1)[0] or "/", io=file_io(options))
    try:
        return fs_cat.create_table_at(path, arrow_schema, spec or None, properties=props)
    except AlreadyExistsError:  # another writer created it first
        return fs_cat.load_table_at(path)


def is_row_files(options) -> bool:
    fmt = (_opt(options, "format", default="") or "").lower()
    if fmt:
        if fmt not in ("row", "table"):
            raise InvalidArgumentError(f"option format must be 'row' or 'table', got {fmt!r}")
        return fmt == "row"
    path = _opt(options, "path", default="") or ""
    return path.endswith(".row")


def time_travel(options) -> dict:
    out = {}
    sid = _opt(options, "snapshot-id", "snapshot_id", "snapshotId")
    if sid is not None:
        try:
            out["snapshot_id"] = int(sid)
        except ValueError:
            raise InvalidArgumentError(f"snapshot-id must be an integer, got {sid!r}") from None
    as_of = _opt(options, "as-of", "as_of", "as-of-timestamp")
    if as_of is not None:
        out["as_of"] = int(as_of) if str(as_of).lstrip("-").isdigit() else str(as_of)
    ref = _opt(options, "ref", "branch", "tag")
    if ref is not None:
        out["ref"] = ref
    return out


def columns_option(options):
    cols = _opt(options, "columns")
    if cols is None:
        return None
    return [c.strip() for c in str(cols).split(",") if c.strip()]


def metadata_columns_option(options):
    """The ``metadata-columns`` option: metadata columns read after the table's (or ``columns``') columns --
    ``_row_id`` and ``_last_updated_sequence_number`` (v3 row lineage, Iceberg's names), ``_file``, ``_pos``.
    Iceberg's Spark tables expose them as hidden metadata columns; a Python data source has no hidden columns,
    so they are asked for by name."""
    from ..scan.reader import METADATA_COLUMNS
    text = _opt(options, "metadata-columns", "metadata_columns")
    if text is None:
        return []
    names = [c.strip() for c in str(text).split(",") if c.strip()]
    bad = [c for c in names if c not in METADATA_COLUMNS]
    if bad:
        raise InvalidArgumentError(f"option metadata-columns: unknown metadata column(s) {', '.join(bad)}; "
                                   f"known: {', '.join(METADATA_COLUMNS)}")
    return list(dict.fromkeys(names))


def scan_columns(table, options, time_travel):
    """The columns a data-source read of ``table`` asks its scan for (None: every column): the ``columns``
    option's (default all of the snapshot's schema) plus the ``metadata-columns`` option's."""
    columns = columns_option(options)
    meta = metadata_columns_option(options)
    if not meta:
        return columns
    if columns is None:
        columns = table.scan(**time_travel).projected.names
    return list(columns) + [m for m in meta if m not in columns]


def pushdown(options, default: bool) -> bool:
    v = _opt(options, "pushdown")
    if v is None:
        return default
    v = str(v).strip().lower()
    if v not in ("true", "false"):
        raise InvalidArgumentError(f"option pushdown must be one of true, false; got {v!r}")
    return v == "true"


def split_settings(options, session_defaults=None) -> dict:
    """Keyword arguments of :func:`~paimon_engine.spark.planning.plan_groups` from the options: ``split-size``
    (bytes per partition, replaces Spark's rule), else Spark's rule with ``max-partition-bytes``,
    ``open-cost-bytes`` and ``parallelism`` (defaults: the session's values where known, else Spark's defaults
    and the number of cores of this host)."""
    import os

    from .planning import SPARK_MAX_PARTITION_BYTES, SPARK_OPEN_COST_BYTES, positive_int
    d = dict(session_defaults or {})
    out = {
        "max_partition_bytes": positive_int("max-partition-bytes", _opt(
            options, "max-partition-bytes", default=d.get("max_partition_bytes", SPARK_MAX_PARTITION_BYTES))),
        "open_cost": positive_int("open-cost-bytes", _opt(
            options, "open-cost-bytes", default=d.get("open_cost", SPARK_OPEN_COST_BYTES))),
        "parallelism": positive_int("parallelism", _opt(
            options, "parallelism", default=d.get("parallelism", os.cpu_count() or 1)), "a positive integer"),
        "split_size": None,
    }
    size = _opt(options, "split-size", "split_size")
    if size is not None:
        out["split_size"] = positive_int("split-size", size)
    return out


def session_split_defaults(spark) -> dict:
    """The session's ``spark.sql.files.maxPartitionBytes``, ``spark.sql.files.openCostInBytes`` and default
    parallelism, as :func:`split_settings` defaults."""
    from .planning import SPARK_MAX_PARTITION_BYTES, SPARK_OPEN_COST_BYTES

    def size(key, default):
        v = spark.conf.get(key, None)
        if v is None:
            return default
        return _byte_size(key, v)
    return {"max_partition_bytes": size("spark.sql.files.maxPartitionBytes", SPARK_MAX_PARTITION_BYTES),
            "open_cost": size("spark.sql.files.openCostInBytes", SPARK_OPEN_COST_BYTES),
            "parallelism": max(1, int(spark.sparkContext.defaultParallelism))}


_UNITS = {"b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30,
          "t": 1 << 40, "tb": 1 << 40}


def _byte_size(name, text) -> int:
    """A Spark byte-size string (``134217728``, ``128m``, ``4MB``) -> bytes."""
    import re
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _UNITS and m.group(2):
        raise InvalidArgumentError(f"{name} must be a byte size such as 134217728 or 128m, got {text!r}")
    return int(m.group(1)) * _UNITS.get(m.group(2).lower() or "b")


# -- schemas ---------------------------------------------------------------------
def spark_schema_from_arrow(arrow_schema):
    from pyspark.sql.pandas.types import from_arrow_schema
    return from_arrow_schema(arrow_schema)


def arrow_schema_from_spark(struct):
    """Spark StructType -> the exact Arrow schema Spark expects from ``read()`` (UTC for timestamps)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema
    try:
        sch = to_arrow_schema(struct, timezone="UTC")
    except TypeError:       # Spark 3.5: no timezone argument (timestamps are UTC already)
        sch = to_arrow_schema(struct)
    return pa.schema([f.with_nullable(sf.nullable) for f, sf in zip(sch, struct.fields)])


def row_type_option(text: str):
    """The ``schema`` option of ``.row`` reads: a Paimon ``ROW<...>`` type string -> RowType, else None (then it
    is Spark DDL and Spark parses it)."""
    from ..types import RowType, parse_paimon_type
    t = text.strip()
    if t.upper().startswith("ROW<") or t.upper().startswith("ROW <"):
        rt = parse_paimon_type(t)
        if not isinstance(rt, RowType):
            raise InvalidArgumentError(f"schema must be a ROW type, got {t!r}")
        return rt
    return None


def conform_batch(batch, target):
    """Select ``target``'s columns from ``batch`` in order and cast each to exactly ``target``'s type."""
    import pyarrow as pa
    if batch.schema.equals(target):
        return batch                       # what the engine produced is what Spark expects: no copy, no cast
    cols = []
    for f in target:
        arr = batch.column(batch.schema.get_field_index(f.name))
        if not arr.type.equals(f.type):
            arr = arr.cast(f.type)
        cols.append(arr)
    return pa.RecordBatch.from_arrays(cols, schema=target)
