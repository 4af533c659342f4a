"""Data files written by one Spark job: every task writes under a directory of its job
(``<data path>/spark-<job id>/``), so a failed job can remove the files of all its tasks, including tasks that
wrote files and were killed before they reported them. Committed files stay where they were written (metadata
records full paths).

Python workers of killed tasks may run on after Spark considers the tasks ended. An aborting driver therefore
first leaves a marker (``_aborted``) in the job's directory, then deletes the files there; a task checks for the
marker after it wrote its files and deletes them itself when it finds it. Whichever comes second removes the
file; the empty marker stays as the job's tombstone."""

from __future__ import annotations

import uuid

__all__ = ["new_job_id", "job_data_path", "write_job_files", "remove_job_files", "abort_job", "written_locations"]

ABORTED = "_aborted"


def new_job_id() -> str:
    return uuid.uuid4().hex


def job_data_path(table, job_id: str) -> str:
    """The directory a job writes under; the job id is one path segment of letters, digits, ``-`` and ``_``, so
    every file a job writes, and every file its abort deletes, stays inside the table's data directory."""
    if not isinstance(job_id, str) or not job_id or not all(c.isascii() and (c.isalnum() or c in "-_")
                                                            for c in job_id):
        from ..errors import InvalidArgumentError
        raise InvalidArgumentError(f"bad Spark job id {job_id!r}: letters, digits, '-' and '_' only")
    base = table.properties.get("write.data.path", f"{table.location}/data").rstrip("/")
    return f"{base}/spark-{job_id}"


def write_job_files(table, data, job_id: str):
    """Write ``data`` (Arrow) as data files of ``table``, partitioned and rolled like ``Table.append``, under the
    job's directory; -> list of DataFile."""
    from ..table.data_writer import prepare_arrow, write_data_files
    schema = table.schema()
    props = table.properties
    root = props["write.data.path"] = job_data_path(table, job_id)
    marker = f"{root}/{ABORTED}"
    if table.io.exists(marker):
        raise JobAbortedError(f"write job {job_id} was aborted")
    files = write_data_files(table.io, table.location, prepare_arrow(data, schema), table.spec(), schema, props)
    if table.io.exists(marker):
        for loc in written_locations(files):
            table.io.delete(loc)
        raise JobAbortedError(f"write job {job_id} was aborted")
    return files


class JobAbortedError(RuntimeError):
    """A task of a write job that the driver already aborted (its files are deleted)."""


def written_locations(files):
    """Every file a task wrote: data files and their ``.index`` files."""
    out = []
    for df in files:
        out.append(df.file_path)
        if df.file_index and not df.file_index.startswith("base64:"):
            out.append(df.file_index)
    return out


def abort_job(io, table, job_id: str) -> int:
    """Mark the job aborted, then delete every file it wrote; -> how many were deleted."""
    root = job_data_path(table, job_id)
    io.write_bytes(f"{root}/{ABORTED}", b"")
    return remove_job_files(io, table, job_id, keep=(f"{root}/{ABORTED}",))


def remove_job_files(io, table, job_id: str, keep=()) -> int:
    """Delete the files under the job's directory except ``keep``; -> how many were deleted."""
    keep = set(keep)
    root = job_data_path(table, job_id)
    n = 0
    for info in io.list(root):
        loc = info.path if "://" not in root else f"{root.split('://', 1)[0]}://{info.path}"
        if loc not in keep and info.path not in keep:
            io.delete(loc)
            n += 1
    if not keep:
        try:
            io.delete_dir(root)
        except (FileNotFoundError, OSError):
            pass
    return n


def commit_job_files(table, files, overwrite: bool, overwrite_filter=None):
    """The driver's one commit of a job's data files: an append, or an overwrite that replaces the rows matching
    the bound ``overwrite_filter`` (every row when it is None); -> the new current snapshot."""
    from ..expressions import AlwaysTrue
    from ..table.commit import SnapshotProducer
    p = SnapshotProducer(table, "overwrite" if overwrite else "append")
    if overwrite:
        p.conflict_filter = overwrite_filter if overwrite_filter is not None else AlwaysTrue()
        table._rewrite_matching(p, overwrite_filter, False)
    for df in files:
        p.add_data_file(df)
    p.commit()
    return table.current_snapshot()
