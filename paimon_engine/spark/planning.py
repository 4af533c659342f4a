"""How a table scan becomes Spark partitions, shared by the data source and :func:`read_table`. No Spark import.

The split size follows Spark's own rule for file sources (``FilePartition.maxSplitBytes``)::

    min(maxPartitionBytes, max(openCostInBytes, total bytes / default parallelism))

where total bytes counts every planned file (and its delete files) plus ``openCostInBytes`` per file. An explicit
``split-size`` replaces the rule. Parquet files are cut at row-group starts (their split offsets); each piece keeps
the delete files of its data file, and the reader applies them to the rows of its row groups only.
"""

from __future__ import annotations

from ..errors import InvalidArgumentError

__all__ = ["SPARK_MAX_PARTITION_BYTES", "SPARK_OPEN_COST_BYTES", "SPARK_BATCH_ROWS", "spark_split_size", "plan_groups",
           "positive_int"]

SPARK_MAX_PARTITION_BYTES = 128 << 20     # spark.sql.files.maxPartitionBytes default
SPARK_OPEN_COST_BYTES = 4 << 20           # spark.sql.files.openCostInBytes default
#: rows per Arrow batch handed to Spark: one batch per file (up to the whole file) makes the JVM allocate and
#: ingest it in one piece; 64K-row batches cost the executor JVM less CPU (measured on a 2M-row count/scan) and
#: the Python reader no more
SPARK_BATCH_ROWS = 1 << 16


def positive_int(name, value, allowed="a positive number of bytes"):
    """``value`` (int or str) as a positive int, or an error naming the option and what it accepts."""
    try:
        n = int(str(value).strip())
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"option {name} must be {allowed}, got {value!r}") from None
    if n <= 0:
        raise InvalidArgumentError(f"option {name} must be {allowed}, got {value!r}")
    return n


def spark_split_size(total_bytes: int, max_partition_bytes: int = SPARK_MAX_PARTITION_BYTES,
                     open_cost: int = SPARK_OPEN_COST_BYTES, parallelism: int = 1) -> int:
    """Spark's split size for ``total_bytes`` of input on ``parallelism`` cores."""
    per_core = total_bytes // max(1, parallelism)
    return max(1, min(max_partition_bytes, max(open_cost, per_core)))


def plan_groups(scan, split_size=None, max_partition_bytes=SPARK_MAX_PARTITION_BYTES,
                open_cost=SPARK_OPEN_COST_BYTES, parallelism=1):
    """The scan's tasks as a list of task lists, one per Spark partition, and the split size used."""
    from ..scan.tasks import combine_tasks
    files = scan.plan_files()
    if split_size is None:
        total = sum(t.size_bytes + open_cost for t in files)
        split_size = spark_split_size(total, max_partition_bytes, open_cost, parallelism)
    groups = combine_tasks(split_files(files, split_size, scan.io), split_size, open_cost)
    return [list(g) for g in groups], split_size


def split_files(tasks, split_size, io):
    """Tasks cut to ``split_size``: Parquet files at their split offsets (row-group starts), ``.row`` files
    larger than the split size at block starts (their block index is read here, one tail read per such file)."""
    from ..scan.tasks import split_row_file, split_tasks
    out = []
    for t in split_tasks(tasks, split_size):
        if t.file_format == "row" and t.start is None and t.file_size > split_size and t.file_schema is not None:
            from ..formats.row import RowFileReader
            with RowFileReader(t.path, t.file_schema, file_io=io) as r:
                ix = r.index
                out.extend(split_row_file(t, ix.offsets, ix.row_starts, r.num_rows, split_size))
        else:
            out.append(t)
    return out
