"""Scan tasks: what a reader needs to produce the rows of one data file (or a byte range of it).

Tasks are plain picklable objects (no file handles, no manifest objects, no statistics) so Spark executors and
process pools can receive them. :func:`split_tasks` cuts large files at their split offsets (Parquet row-group
starts) and :func:`combine_tasks` bin-packs small ones into :class:`CombinedScanTask` groups by a target size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..expressions import AlwaysTrue

__all__ = ["FileScanTask", "CombinedScanTask", "TaskFile", "split_tasks", "combine_tasks"]


@dataclass(frozen=True)
class TaskFile:
    """A content file as pyiceberg's scan tasks show it: ``task.file`` (the data file) and the entries of
    ``task.delete_files``. ``content``: 0 data, 1 position deletes (or a deletion vector), 2 equality deletes."""

    file_path: str
    file_format: str
    record_count: int
    file_size_in_bytes: int
    content: int = 0
    spec_id: int = 0
    partition: tuple = ()
    referenced_data_file: str | None = None
    content_offset: int | None = None


@dataclass(eq=False)
class FileScanTask:
    path: str
    file_format: str
    record_count: int
    file_size: int
    spec_id: int = 0
    partition: tuple = ()
    sequence_number: int = 0
    deletes: list = field(default_factory=list)
    residual: object = field(default_factory=AlwaysTrue)
    selection: object = None          # sorted row positions to keep (a row-file index result), or None
    start: int | None = None          # byte range of a split: row groups starting inside [start, start+length)
    length: int | None = None
    split_offsets: tuple | None = None
    snapshot_id: int | None = None    # the snapshot that added the file (incremental scans)
    file_schema: object = None        # RowType a ``row`` file was written with (row files store no schema)
    first_row_id: int | None = None   # v3 row lineage: row id of the file's first row (None: no lineage)

    @property
    def size_bytes(self) -> int:
        if self.length is not None:
            return self.length
        return self.file_size + sum(d.file_size for d in self.deletes)

    def has_deletes(self) -> bool:
        return bool(self.deletes)

    @property
    def file(self) -> TaskFile:
        """The data file, as pyiceberg's ``task.file`` (``file_path``, ``record_count``, ``file_format`` ...)."""
        return TaskFile(self.path, self.file_format.upper(), self.record_count, self.file_size, 0, self.spec_id,
                        tuple(self.partition))

    @property
    def delete_files(self) -> set:
        """The delete files that apply to this task's data file, as pyiceberg's ``task.delete_files``."""
        return {TaskFile(d.path, d.file_format.upper(), d.record_count, d.file_size, d.content, d.spec_id,
                         tuple(d.partition), d.referenced_data_file, d.content_offset) for d in self.deletes}

    def __repr__(self):
        extra = "" if self.start is None else f" [{self.start}+{self.length}]"
        return f"FileScanTask({self.path!r}{extra}, rows={self.record_count}, deletes={len(self.deletes)}, " \
               f"residual={self.residual!r})"


@dataclass(eq=False)
class CombinedScanTask:
    tasks: list

    @property
    def size_bytes(self):
        return sum(t.size_bytes for t in self.tasks)

    def __iter__(self):
        return iter(self.tasks)

    def __len__(self):
        return len(self.tasks)


def split_tasks(tasks, target_size: int):
    """Cut tasks of files larger than ``target_size`` at their split offsets into byte-range tasks."""
    out = []
    for t in tasks:
        offs = t.split_offsets
        if not offs or t.file_size <= target_size or t.start is not None or len(offs) < 2:
            out.append(t)
            continue
        offs = sorted(o for o in offs if 0 <= o < t.file_size)
        if not offs:
            out.append(t)
            continue
        edges = offs + [t.file_size]
        s = 0  # the first range also covers the file header
        for i in range(1, len(edges)):
            if edges[i] - s >= target_size or i == len(edges) - 1:
                out.append(_range(t, s, edges[i] - s))
                s = edges[i]
    return out


def _range(t: FileScanTask, start, length):
    import copy
    c = copy.copy(t)
    c.start = start
    c.length = length
    c.record_count = -1  # unknown for a part of a file
    return c


def combine_tasks(tasks, target_size: int, open_file_cost: int = 4 << 20):
    """Bin-pack tasks (in order) into groups of about ``target_size`` bytes, each task weighing at least
    ``open_file_cost``."""
    groups = []
    cur, cur_size = [], 0
    for t in tasks:
        w = max(t.size_bytes, open_file_cost)
        if cur and cur_size + w > target_size:
            groups.append(CombinedScanTask(cur))
            cur, cur_size = [], 0
        cur.append(t)
        cur_size += w
    if cur:
        groups.append(CombinedScanTask(cur))
    return groups
