"""Scan tasks: what a reader needs to produce the rows of one data file (or a byte range of it).

Tasks are plain picklable objects (no file handles, no manifest objects, no statistics) so Spark executors and
process pools can receive them. :func:`split_tasks` cuts large files at their split offsets (Parquet row-group
starts) and :func:`combine_tasks` bin-packs small ones into :class:`CombinedScanTask` groups by a target size.
"""

from __future__ import annotations

import copy

from ..expressions import AlwaysTrue

__all__ = ["FileScanTask", "CombinedScanTask", "TaskFile", "split_tasks", "split_row_file", "combine_tasks"]


class TaskFile:
    """A content file as pyiceberg's scan tasks show it: ``task.file`` (the data file) and the entries of
    ``task.delete_files``. ``content``: 0 data, 1 position deletes (or a deletion vector), 2 equality deletes.
    Immutable, equal when every field is, hashable."""

    __slots__ = ("file_path", "file_format", "record_count", "file_size_in_bytes", "content", "spec_id",
                 "partition", "referenced_data_file", "content_offset")

    def __init__(self, file_path: str, file_format: str, record_count: int, file_size_in_bytes: int,
                 content: int = 0, spec_id: int = 0, partition: tuple = (), referenced_data_file: str | None = None,
                 content_offset: int | None = None):
        put = object.__setattr__
        put(self, "file_path", file_path)
        put(self, "file_format", file_format)
        put(self, "record_count", record_count)
        put(self, "file_size_in_bytes", file_size_in_bytes)
        put(self, "content", content)
        put(self, "spec_id", spec_id)
        put(self, "partition", partition)
        put(self, "referenced_data_file", referenced_data_file)
        put(self, "content_offset", content_offset)

    def _key(self):
        return tuple(getattr(self, x) for x in self.__slots__)

    def __setattr__(self, name, value):
        raise AttributeError(f"TaskFile is immutable: cannot set {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"TaskFile is immutable: cannot delete {name!r}")

    def __eq__(self, other):
        return self._key() == other._key() if type(other) is TaskFile else NotImplemented

    def __hash__(self):
        return hash(self._key())

    def __reduce__(self):
        return TaskFile, self._key()

    def __repr__(self):
        return "TaskFile(" + ", ".join(f"{x}={getattr(self, x)!r}" for x in self.__slots__) + ")"


class FileScanTask:
    """The rows of one data file (or of a byte range of it) to read, with the delete files that apply to it."""

    def __init__(self, path: str, file_format: str, record_count: int, file_size: int, spec_id: int = 0,
                 partition: tuple = (), sequence_number: int = 0, deletes: list | None = None, residual=None,
                 selection=None, start: int | None = None, length: int | None = None,
                 split_offsets: tuple | None = None, snapshot_id: int | None = None, file_schema=None,
                 first_row_id: int | None = None):
        self.path = path
        self.file_format = file_format
        self.record_count = record_count
        self.file_size = file_size
        self.spec_id = spec_id
        self.partition = partition
        self.sequence_number = sequence_number
        self.deletes = [] if deletes is None else deletes
        self.residual = AlwaysTrue() if residual is None else residual
        self.selection = selection            # sorted row positions to keep (a row-file index result), or None
        self.start = start                    # byte range of a split: row groups starting inside [start, start+length)
        self.length = length
        self.split_offsets = split_offsets
        self.snapshot_id = snapshot_id        # the snapshot that added the file (incremental scans)
        self.file_schema = file_schema        # RowType a ``row`` file was written with (row files store no schema)
        self.first_row_id = first_row_id      # v3 row lineage: row id of the file's first row (None: no lineage)

    def replace(self, **changes) -> "FileScanTask":
        """A copy of the task with some fields changed."""
        unknown = set(changes) - set(self.__dict__)
        if unknown:
            raise TypeError(f"FileScanTask has no field {sorted(unknown)[0]!r}")
        c = copy.copy(self)
        c.__dict__.update(changes)
        return c

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


class CombinedScanTask:
    """Scan tasks read as one unit (a Spark partition, a worker's share)."""

    def __init__(self, tasks: list):
        self.tasks = tasks

    def __repr__(self):
        return f"CombinedScanTask(tasks={self.tasks!r})"

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


def split_row_file(t: FileScanTask, offsets, row_starts, row_count: int, target_size: int):
    """Cut the task of a ``.row`` file at block starts into byte-range tasks of about ``target_size`` bytes.

    ``offsets`` / ``row_starts``: the byte offset and first row of every block (the file's block index). A range
    holds the blocks whose first byte lies in it (the reader picks them the same way); the first range starts at
    byte 0 and the last one ends at the file's end, so every block belongs to exactly one range. Each range keeps
    the deletion vector and equality deletes of its data file, and only the position-delete files whose ``pos``
    bounds may hold one of its rows (files without bounds are kept)."""
    offs = [int(o) for o in offsets]
    starts = [int(r) for r in row_starts]
    if t.start is not None or len(offs) < 2 or t.file_size <= target_size:
        return [t]
    pieces = []          # (first block, end block)
    first = 0
    for b in range(1, len(offs) + 1):
        end_byte = offs[b] if b < len(offs) else t.file_size
        if end_byte - offs[first] >= target_size or b == len(offs):
            pieces.append((first, b))
            first = b
    if len(pieces) < 2:
        return [t]
    out = []
    for i, (b0, b1) in enumerate(pieces):
        s = 0 if i == 0 else offs[b0]
        e = t.file_size if i == len(pieces) - 1 else offs[b1]
        lo, hi = starts[b0], (starts[b1] if b1 < len(starts) else row_count)
        c = _range(t, s, e - s)
        c.record_count = hi - lo
        c.deletes = [d for d in t.deletes if _may_delete_rows(d, lo, hi)]
        out.append(c)
    return out


def _may_delete_rows(d, lo: int, hi: int) -> bool:
    """Whether delete file ``d`` may apply to rows ``lo .. hi - 1``: a position-delete file (not a deletion
    vector) whose ``pos`` bounds miss the range cannot."""
    from .delete_index import POS_ID, POSITION
    if d.content != POSITION or d.is_deletion_vector or d.stats is None:
        return True
    from .. import types as T
    try:
        low, high = d.stats.lower_bound(POS_ID, T.BigIntType()), d.stats.upper_bound(POS_ID, T.BigIntType())
    except Exception:   # unusable bounds never prune
        return True
    if low is not None and int(low) >= hi:
        return False
    if high is not None and int(high) < lo:
        return False
    return True


def _range(t: FileScanTask, start, length):
    return t.replace(start=start, length=length, record_count=-1)   # (a part of a file: its row count unknown)


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
