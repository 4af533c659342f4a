"""The catalog base class: what every catalog (file system, SQL, REST) shares: create, load, list, drop and
rename tables and namespaces, and the commit primitive each one implements. A catalog is the
:class:`~paimon_engine.table.catalog_interface.TableCatalog` its tables commit through.
"""

from __future__ import annotations

import time

from ..errors import AlreadyExistsError, InvalidArgumentError, NotFoundError, UnsafeLocationError
from ..io import FileIO, normalize_location
from ..spec.metadata import TableMetadata, new_table_metadata, serialize_metadata
from ..spec.partitioning import UNPARTITIONED, PartitionSpec
from ..spec.schema import Schema
from ..table.catalog_interface import TableCatalog
from ..table.locations import check_deletable_root, is_within
from .identifiers import parse_identifier

__all__ = ["Catalog"]


class Catalog(TableCatalog):
    """Common behaviour: create/load/list/drop/rename tables, namespaces, and the commit primitive."""

    name = "default"

    def __init__(self, io: FileIO | None = None, properties: dict | None = None):
        self.properties = dict(properties or {})
        self.io = io or FileIO(self.properties)

    # -- to implement ----------------------------------------------------------
    def _load_metadata(self, namespace, name) -> TableMetadata:
        raise NotImplementedError

    def _create(self, namespace, name, md: TableMetadata) -> TableMetadata:
        raise NotImplementedError

    def commit(self, identifier, base: TableMetadata, new: TableMetadata) -> TableMetadata:
        """Atomically replace ``base`` by ``new``; CommitConflictError if ``base`` is no longer current."""
        raise NotImplementedError

    def default_location(self, namespace, name) -> str:
        raise NotImplementedError

    # -- public API ------------------------------------------------------------
    def create_table(self, identifier, schema, partition_spec=None, *, location=None, properties=None,
                     sort_order=None, format_version: int = 2):
        """Create an empty table. ``schema`` is a Schema, a RowType or a pyarrow Schema; ``partition_spec`` a
        PartitionSpec or a list like ``[("ts", "day"), ("id", "bucket[16]")]``."""
        from ..table.table import Table
        if isinstance(partition_spec, str) and location is None:
            partition_spec, location = None, partition_spec   # pyiceberg's third positional is the location
        namespace, name = parse_identifier(identifier)
        loc = (normalize_location(location).rstrip("/") or "/") if location else \
            self.default_location(namespace, name)
        if location:
            try:
                check_deletable_root(self.io, loc, getattr(self, "warehouse", None), "create a table there")
            except UnsafeLocationError as exc:
                raise InvalidArgumentError(f"table location {location!r} cannot be owned by one table: "
                                           f"{exc}") from None
        md = _new_metadata(schema, partition_spec, loc, properties, sort_order, format_version)
        md = self._create(namespace, name, md)
        return Table(namespace + (name,), md, self.io, self)

    def create_table_if_not_exists(self, identifier, schema, location=None, partition_spec=None, sort_order=None,
                                   properties=None, **kw):
        """The table if it exists, else a new one (pyiceberg's name)."""
        try:
            return self.load_table(identifier)
        except NotFoundError:
            pass
        try:
            return self.create_table(identifier, schema, partition_spec, location=location, properties=properties,
                                     sort_order=sort_order, **kw)
        except AlreadyExistsError:
            return self.load_table(identifier)

    def create_namespace_if_not_exists(self, namespace, properties=None):
        try:
            self.create_namespace(namespace, properties)
        except AlreadyExistsError:
            pass

    def purge_table(self, identifier):
        """Drop the table and delete its files (pyiceberg's name for ``drop_table(purge=True)``)."""
        return self.drop_table(identifier, purge=True)

    def load_table(self, identifier):
        from ..table.table import Table
        namespace, name = parse_identifier(identifier)
        return Table(namespace + (name,), self._load_metadata(namespace, name), self.io, self)

    def refresh(self, identifier) -> TableMetadata:
        namespace, name = parse_identifier(identifier)
        return self._load_metadata(namespace, name)

    # -- what a Table commits through (TableCatalog) ---------------------------
    def refresh_table(self, table) -> TableMetadata:
        return self.refresh(table.identifier)

    def commit_table(self, table, base: TableMetadata, new: TableMetadata) -> TableMetadata:
        return self.commit(table.identifier, base, new)

    def table_exists(self, identifier) -> bool:
        try:
            self.load_table(identifier)
            return True
        except NotFoundError:
            return False

    def _write_new_metadata(self, location: str, md: TableMetadata) -> bytes:
        md.last_updated_ms = max(md.last_updated_ms or 0, int(time.time() * 1000))
        return serialize_metadata(md)


def _new_metadata(schema, partition_spec, location, properties, sort_order, format_version):
    """Metadata of a new table: ``partition_spec`` a PartitionSpec or ``[(column, transform), ...]``; a
    ``format-version`` property overrides ``format_version``."""
    schema = _as_schema(schema)
    if partition_spec is None:
        partition_spec = UNPARTITIONED
    elif not isinstance(partition_spec, PartitionSpec):
        partition_spec = PartitionSpec.build(schema, *partition_spec)
    props = dict(properties or {})
    fv = int(props.pop("format-version", format_version))
    return new_table_metadata(schema, partition_spec, location, sort_order=sort_order, properties=props,
                              format_version=fv)


def _as_schema(schema) -> Schema:
    from .. import types as T
    if isinstance(schema, Schema):
        return schema
    if isinstance(schema, T.RowType):
        return Schema(schema)
    try:
        import pyarrow as pa
        if isinstance(schema, pa.Schema):
            return Schema.from_arrow(schema)
    except ImportError:
        pass
    raise InvalidArgumentError(f"cannot make a table schema from {type(schema).__name__}")


def _append_metadata_log(md: TableMetadata, base: TableMetadata | None) -> list:
    """Add the base metadata file to the log, keep ``write.metadata.previous-versions-max`` entries; -> the
    metadata files that fell off the log."""
    from ..spec.metadata import MetadataLogEntry
    dropped = []
    if base is not None and base.metadata_location:
        md.metadata_log = list(md.metadata_log) + [MetadataLogEntry(base.last_updated_ms, base.metadata_location)]
        keep = max(1, int(md.properties.get("write.metadata.previous-versions-max", "100")))
        if len(md.metadata_log) > keep:
            dropped = [e.metadata_file for e in md.metadata_log[:-keep]]
            md.metadata_log = md.metadata_log[-keep:]
    return dropped


def _delete_old_metadata(io, md: TableMetadata, dropped):
    """``write.metadata.delete-after-commit.enabled``: delete metadata files that left the log (only those inside
    the table location; the commit has landed, so one outside is left in place rather than failing it)."""
    if md.properties.get("write.metadata.delete-after-commit.enabled", "false").lower() != "true":
        return
    for path in dropped:
        try:
            if path and is_within(io, path, md.location) and path.rstrip("/") != md.location.rstrip("/"):
                io.delete(path)
        except OSError:
            pass
