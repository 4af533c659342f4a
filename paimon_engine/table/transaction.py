"""``with table.transaction() as tx:``: appends, overwrites, deletes, upserts, schema, spec and property updates
staged on a private copy of the table metadata and committed to the catalog as ONE new metadata version (the
transaction's snapshots in order, each the parent of the next). A transaction that fails to commit (a concurrent
commit won, or the block raised) leaves the table as it was and deletes every file it wrote."""

from __future__ import annotations

from ..errors import CommitConflictError, CommitFailedError, InvalidArgumentError, PaimonEngineError
from ..spec.manifest import STATUS_ADDED, read_manifest
from ..spec.manifest_list import read_manifest_list

__all__ = ["Transaction"]


def _staged_table_class(table_class):
    """A subclass of the table's own class (so this module needs no import of it) whose commits stay in memory."""

    class StagedTable(table_class):
        """The table as the transaction sees it: its commits replace the in-memory metadata only."""

        def _refresh_metadata(self):
            return self.metadata

        def _commit(self, base, new):
            if base is not self.metadata:
                raise CommitConflictError("a transaction's operation started from an older staged state")
            return new

    return StagedTable


class Transaction:
    """pyiceberg's ``Transaction``: the same write and update calls as :class:`~paimon_engine.table.table.Table`,
    committed together by :meth:`commit_transaction` (on leaving the ``with`` block without an exception)."""

    def __init__(self, table):
        self._table = table
        self._base = table.metadata
        self._staged = _staged_table_class(type(table))(table.identifier, table.metadata.copy(), table.io, table.catalog,
                                             table._fs_location)
        self._staged.metadata.metadata_location = self._base.metadata_location
        self._closed = False

    # -- context manager -----------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, exc_type, *rest):
        if exc_type is None:
            self.commit_transaction()
        else:
            self._rollback()

    @property
    def table_metadata(self):
        """The staged metadata (what the table will be after the commit)."""
        return self._staged.metadata

    def _open(self):
        if self._closed:
            raise InvalidArgumentError("the transaction was committed or rolled back already")
        return self._staged

    # -- operations ----------------------------------------------------------------
    def append(self, df, snapshot_properties=None, branch: str = "main"):
        self._open().append(df, branch=branch)
        self._set_summary(snapshot_properties)
        return self

    def overwrite(self, df, overwrite_filter=None, snapshot_properties=None, case_sensitive: bool = True):
        self._open().overwrite(df, overwrite_filter=overwrite_filter)
        self._set_summary(snapshot_properties)
        return self

    def delete(self, delete_filter, snapshot_properties=None, case_sensitive: bool = True, **options):
        self._open().delete(delete_filter, **options)
        self._set_summary(snapshot_properties)
        return self

    def upsert(self, df, join_cols=None, when_matched_update_all: bool = True,
               when_not_matched_insert_all: bool = True, case_sensitive: bool = True):
        return self._open().upsert(df, join_cols=join_cols, when_matched_update_all=when_matched_update_all,
                                   when_not_matched_insert_all=when_not_matched_insert_all)

    def update_schema(self, allow_incompatible_changes: bool = False, case_sensitive: bool = True):
        return self._open().update_schema()

    def update_spec(self, case_sensitive: bool = True):
        return self._open().update_spec()

    def set_properties(self, properties=None, **kwargs):
        if properties and kwargs:
            raise InvalidArgumentError("give properties as a dict or as keywords, not both")
        self._open().set_properties(properties or kwargs)
        return self

    def remove_properties(self, *removals):
        self._open().update_properties(removals=removals)
        return self

    def _set_summary(self, props):
        """Extra snapshot-summary entries go onto the snapshot the operation just staged."""
        if not props:
            return
        s = self._staged.metadata.current_snapshot()
        if s is not None and s.snapshot_id not in {x.snapshot_id for x in self._base.snapshots}:
            s.summary = dict(s.summary, **{str(k): str(v) for k, v in props.items()})

    # -- commit / rollback ---------------------------------------------------------
    def _new_snapshot_ids(self):
        old = {s.snapshot_id for s in self._base.snapshots}
        return [s for s in self._staged.metadata.snapshots if s.snapshot_id not in old]

    def commit_transaction(self):
        """Commit everything staged as one metadata version; -> the table. On a concurrent commit (or any
        failure) the table stays as it was, the files this transaction wrote are deleted and
        CommitFailedError is raised."""
        staged = self._open()
        self._closed = True
        if staged.metadata is self._base or self._unchanged():
            return self._table
        try:
            committed = self._table._commit(self._base, staged.metadata)
        except CommitConflictError as exc:
            self._delete_written()
            raise CommitFailedError(f"transaction on {self._table.name} failed: the table changed since the "
                                    f"transaction started ({exc}); nothing was committed") from None
        except BaseException:
            self._delete_written()
            raise
        self._table._set_metadata(committed)
        return self._table

    def _unchanged(self):
        a = self._base.to_dict() if hasattr(self._base, "to_dict") else None
        return a is not None and a == self._staged.metadata.to_dict()

    def _rollback(self):
        if not self._closed:
            self._closed = True
            self._delete_written()

    def _delete_written(self):
        """Delete the manifest lists, manifests and data/delete files of the transaction's snapshots (only files
        inside the table location: a file added from elsewhere belongs to its writer)."""
        from .locations import is_within
        io = self._table.io
        location = self._base.location
        doomed = []
        for snap in self._new_snapshot_ids():
            if not snap.manifest_list:
                continue
            doomed.append(snap.manifest_list)
            try:
                manifests = read_manifest_list(io, snap.manifest_list)
            except Exception:
                continue
            for m in manifests:
                if m.added_snapshot_id != snap.snapshot_id:
                    continue
                doomed.append(m.manifest_path)
                try:
                    entries = read_manifest(io, m, full=False, metrics=False)
                except Exception:
                    continue
                for e in entries:
                    if e.status == STATUS_ADDED and e.snapshot_id == snap.snapshot_id:
                        doomed.append(e.data_file.file_path)
        seen = set()
        for p in doomed:
            if p in seen or not location or not is_within(io, p, location):
                continue
            seen.add(p)
            try:
                io.delete(p)
            except (OSError, PaimonEngineError):
                pass
