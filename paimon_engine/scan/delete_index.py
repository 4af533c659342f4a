"""Which delete files apply to which data file.

Rules (Iceberg spec v2/v3 as the reference implementations apply them; "seq" is an entry's data sequence
number, inherited from the manifest when null):

* position-delete file: same spec id and partition, data seq <= delete seq, and ``referenced_data_file`` equal
  to the data file's path when that field is set (its ``file_path`` bounds, when present, must cover the path);
* deletion vector (a position delete stored in Puffin, always with ``referenced_data_file``): as a position
  delete; once a deletion vector applies, position-delete files for that data file are ignored; a snapshot
  holds at most one deletion vector per data file (two are a :class:`CorruptFileError` naming both);
* equality-delete file: data seq < delete seq (strictly), and same spec id and partition, or the delete file
  was written with an unpartitioned spec (a global delete); skipped when its key ranges cannot meet the data
  file's;
* entries with status DELETED are never used.
"""

from __future__ import annotations

import bisect

from ..errors import CorruptFileError
from .evaluators import FileStats

__all__ = ["DeleteFile", "DeleteFileIndex", "POSITION", "EQUALITY", "FILE_PATH_ID", "POS_ID"]

POSITION = 1
EQUALITY = 2
FILE_PATH_ID = 2147483546
POS_ID = 2147483545


class DeleteFile:
    """A delete file as a scan task carries it (picklable, no manifest objects). ``content``: POSITION or
    EQUALITY; ``file_format``: parquet / avro / orc / puffin / row; ``stats``: its statistics while the index is
    built (not pickled); ``file_schema``: the RowType of a ``row`` delete file."""

    def __init__(self, path: str, content: int, file_format: str, sequence_number: int, spec_id: int = 0,
                 partition: tuple = (), record_count: int = 0, file_size: int = 0,
                 referenced_data_file: str | None = None, equality_ids: tuple = (), content_offset: int | None = None,
                 content_size: int | None = None, stats: FileStats | None = None, file_schema=None):
        self.path = path
        self.content = content
        self.file_format = file_format
        self.sequence_number = sequence_number
        self.spec_id = spec_id
        self.partition = partition
        self.record_count = record_count
        self.file_size = file_size
        self.referenced_data_file = referenced_data_file
        self.equality_ids = equality_ids
        self.content_offset = content_offset
        self.content_size = content_size
        self.stats = stats
        self.file_schema = file_schema

    def __repr__(self):
        shown = ("path", "content", "file_format", "sequence_number", "spec_id", "partition", "record_count",
                 "file_size", "referenced_data_file", "equality_ids", "content_offset", "content_size")
        return "DeleteFile(" + ", ".join(f"{x}={getattr(self, x)!r}" for x in shown) + ")"

    @property
    def is_deletion_vector(self) -> bool:
        return self.content == POSITION and self.file_format.lower() == "puffin"

    def __getstate__(self):
        # statistics are only needed while the index is built; tasks ship without them
        d = self.__dict__.copy()
        d["stats"] = None
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)


def _pkey(spec_id, partition):
    return spec_id, tuple(partition) if partition is not None else ()


class DeleteFileIndex:
    """Index of the live delete files of one snapshot.

    ``unpartitioned_specs``: ids of the table's specs with no partition fields (their equality deletes are
    global). ``types_by_id``: field id -> type, used to compare equality-key bounds. ``for_data_file(path, seq, spec_id, partition, stats=None)`` returns the delete files to apply, in
    ascending sequence order.
    """

    def __init__(self, delete_files, unpartitioned_specs=(), types_by_id=None):
        self.unpartitioned_specs = set(unpartitioned_specs)
        self.types = dict(types_by_id or {})
        self._pos_by_part: dict = {}
        self._pos_by_path: dict = {}
        self._dv_by_path: dict = {}
        self._eq_by_part: dict = {}
        self._eq_global: list = []
        self.size = 0
        for d in delete_files:
            self.add(d)
        self._finish()

    def add(self, d: DeleteFile):
        self.size += 1
        if d.content == POSITION:
            if d.is_deletion_vector:
                if d.referenced_data_file is None:
                    raise CorruptFileError("deletion vector entry without referenced_data_file", path=d.path,
                                           offset=d.content_offset)
                have = self._dv_by_path.setdefault(d.referenced_data_file, [])
                if have:
                    o = have[0]
                    raise CorruptFileError(
                        f"two deletion vectors for data file {d.referenced_data_file} in one snapshot: "
                        f"{o.path} at offset {o.content_offset} and {d.path} at offset {d.content_offset}",
                        path=d.path, offset=d.content_offset)
                have.append(d)
            elif d.referenced_data_file is not None:
                self._pos_by_path.setdefault(d.referenced_data_file, []).append(d)
            else:
                self._pos_by_part.setdefault(_pkey(d.spec_id, d.partition), []).append(d)
        elif d.content == EQUALITY:
            if d.spec_id in self.unpartitioned_specs or not d.partition:
                self._eq_global.append(d)
            else:
                self._eq_by_part.setdefault(_pkey(d.spec_id, d.partition), []).append(d)
        else:
            raise ValueError(f"not a delete file content: {d.content}")

    def _finish(self):
        def sort(groups):
            for k, v in groups.items():
                v.sort(key=lambda d: d.sequence_number)
                groups[k] = (v, [d.sequence_number for d in v])
        for g in (self._pos_by_part, self._pos_by_path, self._dv_by_path, self._eq_by_part):
            sort(g)
        self._eq_global.sort(key=lambda d: d.sequence_number)
        self._eq_global_seqs = [d.sequence_number for d in self._eq_global]

    def is_empty(self):
        return self.size == 0

    @staticmethod
    def _at_least(group, seq, strictly):
        if group is None:
            return []
        files, seqs = group
        i = bisect.bisect_right(seqs, seq) if strictly else bisect.bisect_left(seqs, seq)
        return files[i:]

    def for_data_file(self, path, seq, spec_id, partition, stats: FileStats | None = None):
        if self.size == 0:
            return []
        out = []
        dvs = [d for d in self._at_least(self._dv_by_path.get(path), seq, False)
               if d.spec_id == spec_id]
        if dvs:
            out.append(dvs[-1])  # one DV per data file; the newest wins
        else:
            key = _pkey(spec_id, partition)
            for d in self._at_least(self._pos_by_path.get(path), seq, False):
                if d.spec_id == spec_id and _pkey(d.spec_id, d.partition) == key:
                    out.append(d)
            for d in self._at_least(self._pos_by_part.get(key), seq, False):
                if _path_may_be_in(d, path):
                    out.append(d)
        eqs = list(self._at_least(self._eq_by_part.get(_pkey(spec_id, partition)), seq, True))
        eqs += self._at_least((self._eq_global, self._eq_global_seqs), seq, True)
        for d in eqs:
            if stats is None or d.stats is None or _ranges_may_meet(d, stats, self.types):
                out.append(d)
        out.sort(key=lambda d: (d.sequence_number, d.content, d.path))
        return out


def _path_may_be_in(d: DeleteFile, path: str) -> bool:
    s = d.stats
    if s is None:
        return True
    lo, hi = s.lower.get(FILE_PATH_ID), s.upper.get(FILE_PATH_ID)
    try:
        p = path.encode("utf-8")
        if isinstance(lo, (bytes, bytearray)) and p < bytes(lo):
            return False
        if isinstance(hi, (bytes, bytearray)) and p > bytes(hi) and not _is_truncated_prefix(bytes(hi), p):
            return False
    except Exception:  # pragma: no cover - unusable bounds never prune
        return True
    return True


def _is_truncated_prefix(bound: bytes, value: bytes) -> bool:
    return value.startswith(bound)


def _ranges_may_meet(d: DeleteFile, data_stats: FileStats, types: dict) -> bool:
    """False only when some equality column's values in the delete file and the data file cannot be equal."""
    ds = d.stats
    for fid in d.equality_ids:
        d_null = ds.null_counts.get(fid)
        f_null = data_stats.null_counts.get(fid)
        if d_null is not None and f_null is not None and d_null > 0 and f_null > 0:
            continue  # null keys meet null rows
        if ds.all_null(fid) and data_stats.no_nulls(fid):
            return False
        if data_stats.all_null(fid) and ds.no_nulls(fid):
            return False
        t = types.get(fid)
        if t is None:
            continue
        try:
            dl, dh = ds.lower_bound(fid, t), ds.upper_bound(fid, t)
            fl, fh = data_stats.lower_bound(fid, t), data_stats.upper_bound(fid, t)
            if None in (dl, dh, fl, fh):
                continue
            if dh < fl or fh < dl:
                return False
        except Exception:  # unusable bounds never prune
            continue
    return True
