"""Deletes and upserts from Spark: executors write equality-delete files (and, for upserts, data files) for
their part of a DataFrame; the driver commits all of them in one snapshot."""

from __future__ import annotations

import pickle

from . import options as O

__all__ = ["delete_rows", "upsert"]


def _options(path, options):
    opts = {k: str(v) for k, v in (options or {}).items()}
    opts["path"] = path
    return opts


def _run(df, opts, key_columns, with_data):
    def write_part(batches):
        import pyarrow as pa
        from ..table.table import RowDelta
        table = O.load_table(opts)
        batches = [b for b in batches if b.num_rows]
        if not batches:
            return
        tbl = pa.Table.from_batches(batches)
        rd = RowDelta(table)
        try:
            rd.delete_keys(tbl, key_columns)
            if with_data:
                rd.add_rows(tbl)
        except BaseException:
            for f in rd._deletes + rd._data:
                table.io.delete(f.file_path)
            raise
        yield pa.record_batch([pa.array([pickle.dumps((rd._deletes, rd._data))], pa.binary())], names=["files"])

    rows = df.mapInArrow(write_part, "files binary").collect()
    deletes, data = [], []
    for r in rows:
        d, a = pickle.loads(r.files)
        deletes.extend(d)
        data.extend(a)
    table = O.load_table(opts)
    from ..table.table import RowDelta
    rd = RowDelta(table)
    for f in deletes:
        rd.add_delete_file(f)
    for f in data:
        rd.add_data_file(f)
    try:
        if not deletes and not data:
            return table.current_snapshot()
        return rd.commit()
    except BaseException:
        for f in deletes + data:
            table.io.delete(f.file_path)
        raise


def delete_rows(df, path: str, key_columns=None, options=None):
    """Delete the rows whose ``key_columns`` (default: the table's identifier fields) equal a row of ``df``, as one
    equality-delete commit. ``df`` must also hold the partition source columns of a partitioned table.
    ``options`` are the data source options (``catalog.*``, ``s3.*``). -> the new snapshot."""
    return _run(df, _options(path, options), list(key_columns) if key_columns else None, with_data=False)


def upsert(df, path: str, key_columns=None, options=None):
    """Insert the rows of ``df``, replacing existing rows with the same keys, in one snapshot (equality deletes
    on the keys plus the new data files). -> the new snapshot."""
    return _run(df, _options(path, options), list(key_columns) if key_columns else None, with_data=True)
