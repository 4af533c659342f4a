"""Atomic optimistic commits.

A :class:`SnapshotProducer` collects added data/delete files and files to remove, then ``commit()``:

1. writes manifests for the added files once (their entries inherit the sequence number, so they stay valid
   across retries);
2. per attempt, against the freshly loaded table metadata: validates (files to remove and data files that new
   position deletes reference must still be live; an ``append`` always re-applies), rewrites only the manifests
   that hold removed files (removed -> DELETED, others -> EXISTING with their sequence numbers), writes the
   manifest list, assigns the next sequence number, builds the snapshot summary with the spec's totals;
3. asks the catalog to swap the metadata atomically; on a conflict it cleans up that attempt's files, waits
   (exponential backoff with jitter) and retries up to ``commit.retry.num-retries``.

:func:`commit_metadata_change` does the same for changes without a snapshot (schema, spec, properties).
"""

from __future__ import annotations

import random
import time
import uuid

from ..errors import CommitConflictError, CommitFailedError, InvalidArgumentError, NotFoundError
from ..spec.manifest import (CONTENT_DATA, CONTENT_EQUALITY_DELETES, CONTENT_POSITION_DELETES, STATUS_ADDED,
                       STATUS_DELETED, STATUS_EXISTING, ManifestWriter, read_manifest)
from ..spec.manifest_list import read_manifest_list, write_manifest_list
from ..spec.metadata import Snapshot, SnapshotLogEntry, SnapshotRef

__all__ = ["SnapshotProducer", "commit_metadata_change", "new_snapshot_id", "retry_policy", "file_key",
           "is_deletion_vector"]

MAIN = "main"


def file_key(df):
    """The identity of a content file in a snapshot: its path; for a deletion vector also its blob offset (one
    Puffin file holds the vectors of many data files, each removable on its own)."""
    if df.content == CONTENT_POSITION_DELETES and df.content_offset is not None:
        return (df.file_path, df.content_offset)
    return df.file_path


def is_deletion_vector(df) -> bool:
    return df.content == CONTENT_POSITION_DELETES and str(df.file_format).upper() == "PUFFIN"


def new_snapshot_id() -> int:
    u = uuid.uuid4().int
    return ((u >> 64) ^ (u & ((1 << 64) - 1))) & ((1 << 63) - 1)


def retry_policy(props):
    return (int(props.get("commit.retry.num-retries", "10")),
            int(props.get("commit.retry.min-wait-ms", "20")),
            int(props.get("commit.retry.max-wait-ms", "2000")),
            int(props.get("commit.retry.total-timeout-ms", "120000")))


def _sleep(attempt, min_ms, max_ms):
    wait = min(max_ms, min_ms * (2 ** attempt))
    time.sleep(random.uniform(wait / 2, wait) / 1000.0)


class _StaleBase(Exception):
    """The base metadata's branch head lost its manifest list to a concurrent expire: the base is stale."""


class SnapshotProducer:
    """One snapshot-producing operation: ``append``, ``overwrite``, ``delete`` or ``replace``."""

    def __init__(self, table, operation: str, branch: str = MAIN):
        if operation not in ("append", "overwrite", "delete", "replace"):
            raise InvalidArgumentError(f"unknown snapshot operation {operation!r}")
        if hasattr(table, "_check_writable"):
            table._check_writable()
        self.table = table
        self.operation = operation
        self.branch = branch
        self.snapshot_id = new_snapshot_id()
        self.added_data = []
        self.added_deletes = []
        self.removed = {}            # path -> DataFile (data or delete files to remove)
        self.required_data_paths = set()
        self.extra_summary = {}
        # the snapshot this operation read; files it removes must not have gained deletes since then
        self.started_from = table.metadata.current_snapshot_id if branch == MAIN else \
            (table.metadata.refs[branch].snapshot_id if branch in table.metadata.refs else None)
        self.validate_no_new_deletes = operation != "append"
        self.conflict_filter = None   # bound expression: rows added concurrently must not match it
        self._added_manifests = None
        self._written = []           # files written by this producer (cleanup on failure)

    # -- building ----------------------------------------------------------------
    def add_data_file(self, df):
        if df.content != CONTENT_DATA:
            raise InvalidArgumentError(f"{df.file_path} is a delete file; use add_delete_file")
        self.added_data.append(df)
        return self

    def add_delete_file(self, df):
        if df.content == CONTENT_DATA:
            raise InvalidArgumentError(f"{df.file_path} is a data file; use add_data_file")
        fv = self.table.metadata.format_version
        if fv < 2:
            raise InvalidArgumentError("delete files need format version 2 (upgrade the table first)")
        if df.content == CONTENT_POSITION_DELETES:
            if fv >= 3 and not is_deletion_vector(df):
                raise InvalidArgumentError(f"{df.file_path}: format version 3 tables take deletion vectors, not "
                                           f"position-delete files")
            if is_deletion_vector(df):
                if fv < 3:
                    raise InvalidArgumentError(f"{df.file_path}: deletion vectors need format version 3")
                if df.referenced_data_file is None or df.content_offset is None or df.content_size_in_bytes is None:
                    raise InvalidArgumentError(f"{df.file_path}: a deletion vector needs referenced_data_file, "
                                               f"content_offset and content_size_in_bytes")
                if any(is_deletion_vector(d) and d.referenced_data_file == df.referenced_data_file
                       for d in self.added_deletes):
                    raise InvalidArgumentError(f"two deletion vectors for {df.referenced_data_file} in one commit")
        self.added_deletes.append(df)
        if df.content == CONTENT_POSITION_DELETES and df.referenced_data_file:
            self.required_data_paths.add(df.referenced_data_file)
        return self

    def remove_file(self, df):
        self.removed[file_key(df)] = df
        return self

    def set(self, key, value):
        self.extra_summary[str(key)] = str(value)
        return self

    # -- commit ------------------------------------------------------------------
    def commit(self):
        """Commit with retries. On a definite failure (validation, retries exhausted) every file this operation
        wrote is deleted, data and delete files included. When the catalog's swap itself fails in an unknown way
        nothing is deleted: the commit may have landed (``remove_orphan_files`` finds leftovers otherwise)."""
        table = self.table
        retries, min_ms, max_ms, total_ms = retry_policy(table.metadata.properties)
        deadline = time.monotonic() + total_ms / 1000.0
        base = table.metadata
        attempt = 0
        while True:
            attempt_files = []
            try:
                new_md = self._apply(base, attempt, attempt_files)
            except _StaleBase:
                new_md = None           # the base was expired under us: it is not current, reload and retry
            except BaseException:
                self._delete(attempt_files)
                self._abort()
                raise
            try:
                if new_md is None:
                    raise CommitConflictError("stale base")
                committed = table._commit(base, new_md)
            except CommitConflictError:
                self._delete(attempt_files)
                if attempt >= retries or time.monotonic() > deadline:
                    self._abort()
                    raise CommitFailedError(f"{self.operation} on {table.name} failed after {attempt + 1} "
                                            f"attempts: concurrent commits kept winning") from None
                _sleep(attempt, min_ms, max_ms)
                attempt += 1
                base = table._refresh_metadata()
                continue
            table._set_metadata(committed)
            return committed

    def _delete(self, paths):
        for p in paths:
            try:
                self.table.io.delete(p)
            except OSError:
                pass

    def _abort(self):
        """Delete everything this operation wrote: manifests of added files and the added files themselves. Only
        added files inside the table location are deleted: a file added from elsewhere belongs to its writer."""
        from .locations import is_within
        self._delete(self._written)
        location = self.table.location
        self._delete([df.file_path for df in self.added_data + self.added_deletes
                      if location and is_within(self.table.io, df.file_path, location)
                      and df.file_path.rstrip("/") != location.rstrip("/")])

    def _manifest_path(self, k):
        return f"{self.table.metadata_dir}/{uuid.uuid4()}-m{k}.avro"

    def _write_added_manifests(self, md):
        """Manifests of the added files, written once (entries inherit seq numbers)."""
        if self._added_manifests is not None:
            return self._added_manifests
        schema = md.schema()
        out = []
        k = 0
        for content, files in ((0, self.added_data), (1, self.added_deletes)):
            by_spec = {}
            for df in files:
                by_spec.setdefault(df.spec_id, []).append(df)
            for spec_id, dfs in sorted(by_spec.items()):
                w = ManifestWriter(md.spec(spec_id), schema, md.format_version, self.snapshot_id, content)
                for df in dfs:
                    w.add(df, STATUS_ADDED)
                path = self._manifest_path(k)
                k += 1
                out.append(w.write(self.table.io, path))
                self._written.append(path)
        self._added_manifests = out
        return out

    def _apply(self, base, attempt, attempt_files):
        io = self.table.io
        fv = base.format_version
        parent = base.snapshot_by_ref(self.branch)
        if parent is None and self.branch != MAIN:
            raise InvalidArgumentError(f"no branch {self.branch!r}")
        try:
            base_manifests = read_manifest_list(io, parent.manifest_list) if parent is not None and \
                parent.manifest_list else []
        except NotFoundError:
            # only an expired snapshot loses its manifest list, and the current one is never expired
            raise _StaleBase() from None
        if parent is not None and parent.manifest_list is None and parent.manifests:
            from ..spec.manifest_list import ManifestFile
            base_manifests = [ManifestFile(p, 0, 0, 0, 0, 0, parent.snapshot_id) for p in parent.manifests]
        seq = base.last_sequence_number + 1 if fv >= 2 else 0
        if self.validate_no_new_deletes and self.removed:
            self._check_no_new_deletes(base, parent)
        if any(is_deletion_vector(d) for d in self.added_deletes):
            self._check_no_concurrent_dvs(base, parent)
        if self.conflict_filter is not None:
            self._check_no_conflicting_data(base, parent)
        added = self._write_added_manifests(base)

        # validate + rewrite manifests holding removed files
        to_remove = dict(self.removed)
        required = set(self.required_data_paths) - set(to_remove)
        found_removed = {}
        kept = []
        specs = base.specs_by_id()
        schema = base.schema()
        removed_paths = set(to_remove)
        k = 1000 + attempt * 100
        removed_delete_files = []
        removed_data_files = []
        for m in base_manifests:
            needs_scan = False
            if removed_paths:
                needs_scan = m.has_added_files() or m.has_existing_files()
            if required and m.content == CONTENT_DATA:
                needs_scan = True
            if not needs_scan:
                kept.append(m)
                continue
            spec = specs.get(m.partition_spec_id)
            entries = read_manifest(io, m, spec.partition_type(schema) if spec else None)
            live = [e for e in entries if e.status != STATUS_DELETED]
            hit = [e for e in live if file_key(e.data_file) in removed_paths]
            if m.content == CONTENT_DATA:
                for e in live:
                    required.discard(e.data_file.file_path)
            if not hit:
                kept.append(m)
                continue
            w = ManifestWriter(spec, schema, fv, self.snapshot_id, m.content)
            for e in live:
                p = file_key(e.data_file)
                if p in removed_paths:
                    found_removed[p] = e.data_file
                    w.add(e.data_file, STATUS_DELETED, sequence_number=e.sequence_number,
                          file_sequence_number=e.file_sequence_number)
                    (removed_delete_files if e.data_file.content else removed_data_files).append(e.data_file)
                else:
                    w.add(e.data_file, STATUS_EXISTING, snapshot_id=e.snapshot_id,
                          sequence_number=e.sequence_number, file_sequence_number=e.file_sequence_number)
            path = self._manifest_path(k)
            k += 1
            mf = w.write(io, path)
            attempt_files.append(path)
            # rewritten manifests hold only existing/deleted entries: their seq is this commit's
            kept.append(mf)
        missing = removed_paths - set(found_removed)
        if missing:
            raise CommitFailedError(f"{self.operation} on {self.table.name}: {len(missing)} file(s) to remove are "
                                    f"no longer live (removed by a concurrent commit), e.g. "
                                    f"{sorted(map(str, missing))[0]}")
        if required:
            raise CommitFailedError(f"{self.operation} on {self.table.name}: data file(s) referenced by new "
                                    f"position deletes are no longer live, e.g. {sorted(required)[0]}")

        for m in added:
            m.sequence_number = None
            m.min_sequence_number = None
            m.first_row_id = None         # row ids are assigned from the base this attempt commits on
        if self.operation == "append" and base.properties.get("commit.manifest-merge.enabled", "false") == "true":
            added, kept = self._merge_manifests(base, added, kept, attempt, attempt_files)
        manifests = list(added) + kept
        list_path = f"{self.table.metadata_dir}/snap-{self.snapshot_id}-{attempt}-{uuid.uuid4()}.avro"
        first_row_id = base.next_row_id if fv >= 3 else None
        next_row_id = write_manifest_list(io, list_path, manifests, format_version=fv, snapshot_id=self.snapshot_id,
                                          parent_snapshot_id=parent.snapshot_id if parent else None,
                                          sequence_number=seq, next_row_id=first_row_id)
        attempt_files.append(list_path)

        summary = self._summary(parent, removed_data_files, removed_delete_files)
        now = int(time.time() * 1000)
        lineage = {"first-row-id": first_row_id, "added-rows": next_row_id - first_row_id} if fv >= 3 else None
        snap = Snapshot(self.snapshot_id, parent.snapshot_id if parent else None, seq,
                        max(now, base.last_updated_ms), list_path, None, summary, base.current_schema_id, lineage)
        md = base.copy()
        if fv >= 3:
            md.next_row_id = next_row_id
        md.snapshots.append(snap)
        md.last_sequence_number = seq if fv >= 2 else base.last_sequence_number
        md.last_updated_ms = snap.timestamp_ms
        old_ref = md.refs.get(self.branch)
        md.refs[self.branch] = SnapshotRef(self.snapshot_id, "branch",
                                           old_ref.min_snapshots_to_keep if old_ref else None,
                                           old_ref.max_snapshot_age_ms if old_ref else None,
                                           old_ref.max_ref_age_ms if old_ref else None,
                                           old_ref.extra if old_ref else None)
        if self.branch == MAIN:
            md.current_snapshot_id = self.snapshot_id
            md.snapshot_log.append(SnapshotLogEntry(snap.timestamp_ms, self.snapshot_id))
        return md

    def _merge_manifests(self, base, added, kept, attempt, attempt_files):
        """Merge append: when a spec has at least ``commit.manifest.min-count-to-merge`` (100) data manifests, fold
        them into one (this commit's files stay ADDED, others become EXISTING with their sequence numbers)."""
        min_count = int(base.properties.get("commit.manifest.min-count-to-merge", "100"))
        schema = base.schema()
        io = self.table.io
        groups = {}
        for m in list(added) + list(kept):
            if m.content == CONTENT_DATA:
                groups.setdefault(m.partition_spec_id, []).append(m)
        new_added, new_kept = list(added), list(kept)
        k = 5000 + attempt * 100
        for spec_id, group in groups.items():
            if len(group) < max(2, min_count):
                continue
            spec = base.spec(spec_id)
            w = ManifestWriter(spec, schema, base.format_version, self.snapshot_id, CONTENT_DATA)
            for m in group:
                mine = m in added
                for e in read_manifest(io, m, spec.partition_type(schema), include_deleted=False):
                    if mine:
                        w.add(e.data_file, STATUS_ADDED)
                    else:
                        w.add(e.data_file, STATUS_EXISTING, snapshot_id=e.snapshot_id,
                              sequence_number=e.sequence_number, file_sequence_number=e.file_sequence_number)
            path = self._manifest_path(k)
            k += 1
            merged = w.write(io, path)
            attempt_files.append(path)
            new_added = [m for m in new_added if m not in group] + [merged]
            new_kept = [m for m in new_kept if m not in group]
        return new_added, new_kept

    def _check_no_concurrent_dvs(self, base, parent):
        """Fail when a snapshot committed since this operation started added a deletion vector (or a
        position-delete file) for a data file this operation writes a deletion vector for: the table would hold
        two vectors for one file, or the new vector would miss the other commit's deletes."""
        if parent is None or parent.snapshot_id == self.started_from:
            return
        targets = {d.referenced_data_file for d in self.added_deletes if is_deletion_vector(d)}
        for snap in base.ancestors(parent.snapshot_id):
            if snap.snapshot_id == self.started_from:
                return
            if int(snap.summary.get("added-delete-files", "0") or 0) <= 0 or not snap.manifest_list:
                continue
            for m in read_manifest_list(self.table.io, snap.manifest_list):
                if m.content == CONTENT_DATA or m.added_snapshot_id != snap.snapshot_id:
                    continue
                for e in read_manifest(self.table.io, m, full=False, metrics=False):
                    d = e.data_file
                    if e.status == STATUS_ADDED and d.content == CONTENT_POSITION_DELETES and \
                            d.referenced_data_file in targets:
                        raise CommitFailedError(
                            f"{self.operation} on {self.table.name}: concurrent snapshot {snap.snapshot_id} added "
                            f"deletes for {d.referenced_data_file}, which this operation writes a deletion vector "
                            f"for ({d.file_path})")

    def _check_no_new_deletes(self, base, parent):
        """Fail when a snapshot committed since this operation started added delete files that apply to a data
        file this operation removes (the rewrite would silently drop those deletes)."""
        if parent is None or parent.snapshot_id == self.started_from:
            return
        removed_data = {p: df for p, df in self.removed.items() if df.content == CONTENT_DATA}
        if not removed_data:
            return
        parts = {(df.spec_id, df.partition) for df in removed_data.values()}
        specs = base.specs_by_id()
        schema = base.schema()
        for snap in self._snapshots_since(base, parent):
            if int(snap.summary.get("added-delete-files", "0") or 0) <= 0 or not snap.manifest_list:
                continue
            for m in self._read_for_validation(snap, read_manifest_list, snap.manifest_list):
                if m.content == CONTENT_DATA or m.added_snapshot_id != snap.snapshot_id:
                    continue
                spec = specs.get(m.partition_spec_id)
                for e in self._read_for_validation(snap, read_manifest, m,
                                                   spec.partition_type(schema) if spec else None):
                    if e.status != STATUS_ADDED:
                        continue
                    d = e.data_file
                    if d.content == CONTENT_POSITION_DELETES:
                        hit = d.referenced_data_file in removed_data if d.referenced_data_file else \
                            (d.spec_id, d.partition) in parts
                    else:
                        hit = spec is None or not spec.fields or (d.spec_id, d.partition) in parts
                    if hit:
                        raise CommitFailedError(
                            f"{self.operation} on {self.table.name}: concurrent snapshot {snap.snapshot_id} added "
                            f"delete files for data this operation rewrites ({d.file_path})")

    def _snapshots_since(self, base, parent):
        """The snapshots committed since this operation started (``parent`` back to ``started_from``, excluded).
        When part of that history was expired meanwhile it cannot be validated: CommitFailedError."""
        out = []
        snap = parent
        while snap is not None and snap.snapshot_id != self.started_from:
            out.append(snap)
            if snap.parent_snapshot_id is None:
                if self.started_from is None:
                    return out
                break
            snap = base.snapshot_by_id(snap.parent_snapshot_id)
        if snap is None or snap.snapshot_id != self.started_from:
            raise CommitFailedError(f"{self.operation} on {self.table.name}: snapshots committed since it started "
                                    f"were expired concurrently, so it cannot be validated against them; re-run it")
        return out

    def _read_for_validation(self, snap, read, *args):
        """Read a concurrent snapshot's file for validation; a file removed by a concurrent expire_snapshots makes
        the operation fail with CommitFailedError (re-runnable) instead of a bare NotFoundError."""
        try:
            return read(self.table.io, *args)
        except NotFoundError as exc:
            raise CommitFailedError(f"{self.operation} on {self.table.name}: cannot validate against concurrent "
                                    f"snapshot {snap.snapshot_id}, its files were removed by a concurrent "
                                    f"expire_snapshots ({exc}); re-run the operation") from None

    def _check_no_conflicting_data(self, base, parent):
        """Serializable isolation for filtered overwrites/deletes: no row added since this operation started may
        match its filter (exact: the added files are read and the filter evaluated)."""
        if parent is None or parent.snapshot_id == self.started_from:
            return
        from ..expressions import evaluate_numpy
        from .snapshot_files import read_data_file
        schema = base.schema()
        for snap in self._snapshots_since(base, parent):
            if snap.operation not in ("append", "overwrite") or not snap.manifest_list:
                continue
            for m in self._read_for_validation(snap, read_manifest_list, snap.manifest_list):
                if m.content != CONTENT_DATA or m.added_snapshot_id != snap.snapshot_id or not m.has_added_files():
                    continue
                spec = base.specs_by_id().get(m.partition_spec_id)
                for e in self._read_for_validation(snap, read_manifest, m,
                                                   spec.partition_type(schema) if spec else None):
                    if e.status != STATUS_ADDED or e.snapshot_id != snap.snapshot_id:
                        continue
                    tbl = self._read_for_validation(snap, read_data_file, e.data_file, schema, base)
                    if evaluate_numpy(self.conflict_filter, tbl).any():
                        raise CommitFailedError(
                            f"{self.operation} on {self.table.name}: concurrent snapshot {snap.snapshot_id} added "
                            f"rows matching the filter ({e.data_file.file_path})")

    def _summary(self, parent, removed_data, removed_deletes):
        s = {"operation": self.operation}
        add_data = self.added_data
        add_pos = [d for d in self.added_deletes if d.content == CONTENT_POSITION_DELETES]
        add_eq = [d for d in self.added_deletes if d.content == CONTENT_EQUALITY_DELETES]
        rem_pos = [d for d in removed_deletes if d.content == CONTENT_POSITION_DELETES]
        rem_eq = [d for d in removed_deletes if d.content == CONTENT_EQUALITY_DELETES]

        def put(key, val):
            if val:
                s[key] = str(val)
        put("added-data-files", len(add_data))
        put("deleted-data-files", len(removed_data))
        put("added-delete-files", len(self.added_deletes))
        put("added-position-delete-files", sum(1 for d in add_pos if not is_deletion_vector(d)))
        put("added-equality-delete-files", len(add_eq))
        put("removed-delete-files", len(removed_deletes))
        put("removed-position-delete-files", sum(1 for d in rem_pos if not is_deletion_vector(d)))
        put("removed-equality-delete-files", len(rem_eq))
        put("added-dvs", sum(1 for d in add_pos if is_deletion_vector(d)))
        put("removed-dvs", sum(1 for d in rem_pos if is_deletion_vector(d)))
        added_records = sum(d.record_count for d in add_data)
        deleted_records = sum(d.record_count for d in removed_data)
        put("added-records", added_records)
        put("deleted-records", deleted_records)
        added_size = sum(d.file_size_in_bytes for d in add_data + self.added_deletes)
        removed_size = sum(d.file_size_in_bytes for d in removed_data + removed_deletes)
        put("added-files-size", added_size)
        put("removed-files-size", removed_size)
        put("added-position-deletes", sum(d.record_count for d in add_pos))
        put("removed-position-deletes", sum(d.record_count for d in rem_pos))
        put("added-equality-deletes", sum(d.record_count for d in add_eq))
        put("removed-equality-deletes", sum(d.record_count for d in rem_eq))
        parts = {(d.spec_id, d.partition) for d in add_data + self.added_deletes + removed_data + removed_deletes}
        s["changed-partition-count"] = str(len(parts))
        prev = parent.summary if parent is not None else {}

        def total(key, delta):
            if parent is not None and key not in prev:
                return
            try:
                base = int(prev.get(key, "0"))
            except ValueError:
                return
            s[key] = str(base + delta)
        total("total-records", added_records - deleted_records)
        total("total-files-size", added_size - removed_size)
        total("total-data-files", len(add_data) - len(removed_data))
        total("total-delete-files", len(self.added_deletes) - len(removed_deletes))
        total("total-position-deletes", sum(d.record_count for d in add_pos) - sum(d.record_count for d in rem_pos))
        total("total-equality-deletes", sum(d.record_count for d in add_eq) - sum(d.record_count for d in rem_eq))
        s.update(self.extra_summary)
        return s


def commit_metadata_change(table, change):
    """Commit ``change(base_metadata) -> new_metadata`` with retries (``change`` must be re-appliable)."""
    retries, min_ms, max_ms, _ = retry_policy(table.metadata.properties)
    base = table.metadata
    for attempt in range(retries + 1):
        new = change(base.copy())
        new.last_updated_ms = max(int(time.time() * 1000), base.last_updated_ms)
        try:
            committed = table._commit(base, new)
            table._set_metadata(committed)
            return committed
        except CommitConflictError:
            if attempt >= retries:
                break
            _sleep(attempt, min_ms, max_ms)
            base = table._refresh_metadata()
    raise CommitFailedError(f"metadata change on {table.name} failed after {retries + 1} attempts")
