"""Catalogs: where a table's current metadata file is recorded, and the atomic step of a commit.

* :class:`FileSystemCatalog` — ``<warehouse>/<ns...>/<table>/metadata/v<N>.metadata.json`` plus
  ``version-hint.text``. A commit creates ``v<N+1>.metadata.json`` with an atomic create-if-absent
  (``FileIO.create_exclusive``); whoever creates it first wins, the other sees a conflict. Never an overwriting
  rename. The hint is only a hint: loading probes past it.
* :class:`SqlCatalog` — a SQLite database with the same tables as pyiceberg's ``SqlCatalog`` (``iceberg_tables``,
  ``iceberg_namespace_properties``), so either library opens the other's catalog. A commit is a compare-and-swap
  ``UPDATE ... WHERE metadata_location = <the one we started from>``. Metadata files are named
  ``<NNNNN>-<uuid>.metadata.json``.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
import uuid

from ..errors import (AlreadyExistsError, CommitConflictError, InvalidArgumentError, InvalidIdentifierError,
                      NamespaceNotEmptyError, NotFoundError, PaimonEngineError, UnsafeLocationError)
from ..io import FileIO, normalize_location
from .identifiers import check_namespace, parse_identifier
from .locations import check_deletable_root, check_within, is_within
from .metadata import TableMetadata, new_table_metadata, parse_metadata, serialize_metadata
from .partitioning import UNPARTITIONED, PartitionSpec
from .schema import Schema

__all__ = ["Catalog", "FileSystemCatalog", "SqlCatalog", "load_catalog", "parse_identifier"]

_VERSION_FILE = re.compile(r"^v(\d+)(\.gz)?\.metadata\.json$")
_CATALOG_FILE = re.compile(r"^(\d+)-[0-9a-fA-F-]+(\.gz)?\.metadata\.json$")


_ns = check_namespace


class Catalog:
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
        from .table import Table
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
        from .table import Table
        namespace, name = parse_identifier(identifier)
        return Table(namespace + (name,), self._load_metadata(namespace, name), self.io, self)

    def refresh(self, identifier) -> TableMetadata:
        namespace, name = parse_identifier(identifier)
        return self._load_metadata(namespace, name)

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
    from .metadata import MetadataLogEntry
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


def _is_metadata_json_name(name) -> bool:
    """A table metadata file name of either catalog (``v<N>.metadata.json``, ``<NNNNN>-<uuid>.metadata.json``)."""
    return bool(_VERSION_FILE.match(name) or _CATALOG_FILE.match(name))


def _table_markers(io, location, own_metadata_dir):
    """Metadata files of another table found below ``location``: version files, hints or catalog metadata files
    anywhere but in this table's own metadata directory."""
    from .locations import comparable
    own = comparable(io, own_metadata_dir, True)
    scheme = location.split("://", 1)[0] + "://" if "://" in location else ""
    found = []
    for info in io.list(location):
        name = info.base_name
        if name == "version-hint.text" or _is_metadata_json_name(name):
            path = info.path if "://" in info.path or not scheme else scheme + info.path
            if comparable(io, path).rsplit("/", 1)[0] != own:
                found.append(path)
    return found


# ---------------------------------------------------------------------------
# file-system catalog
# ---------------------------------------------------------------------------

class FileSystemCatalog(Catalog):
    """Tables in directories under ``warehouse``: ``<warehouse>/<ns>/<table>``."""

    def __init__(self, warehouse: str, io: FileIO | None = None, properties: dict | None = None,
                 name: str = "fs"):
        super().__init__(io, properties)
        self.name = name
        self.warehouse = normalize_location(warehouse).rstrip("/")

    def default_location(self, namespace, name) -> str:
        return "/".join((self.warehouse,) + tuple(namespace) + (name,))

    def _table_location(self, namespace, name):
        return self.default_location(namespace, name)

    # namespaces are directories
    def _namespace_location(self, ns):
        loc = "/".join((self.warehouse,) + ns)
        check_within(self.io, [loc], self.warehouse, f"use namespace {'.'.join(ns)}", directory=True)
        return loc

    def _check_not_in_table(self, ns, what):
        """Refuse a namespace or table path that would lie inside an existing table's directory."""
        for i in range(1, len(ns) + 1):
            loc = "/".join((self.warehouse,) + ns[:i])
            if self._is_table_dir(loc):
                raise InvalidArgumentError(f"cannot {what}: {'.'.join(ns[:i])} is a table")

    def create_namespace(self, namespace, properties=None):
        ns = _ns(namespace)
        loc = self._namespace_location(ns)
        self._check_not_in_table(ns, f"create namespace {'.'.join(ns)}")
        if self.io.exists(loc):
            raise AlreadyExistsError(f"namespace {'.'.join(ns)} exists already")
        fs, path = self.io.resolve(loc)
        fs.create_dir(path, recursive=True)

    def namespace_exists(self, namespace) -> bool:
        import pyarrow.fs as pafs
        ns = _ns(namespace)
        loc = self._namespace_location(ns)
        fs, path = self.io.resolve(loc)
        return fs.get_file_info(path).type == pafs.FileType.Directory and not self._is_table_dir(loc)

    def list_namespaces(self):
        import pyarrow.fs as pafs
        fs, path = self.io.resolve(self.warehouse)
        infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
        return [(i.base_name,) for i in infos if i.type == pafs.FileType.Directory
                and not self._is_table_dir(f"{self.warehouse}/{i.base_name}")]

    def _is_table_dir(self, loc):
        return self.io.exists(f"{loc}/metadata/version-hint.text") or bool(self._versions(loc))

    def list_tables(self, namespace):
        import pyarrow.fs as pafs
        ns = _ns(namespace)
        base = self._namespace_location(ns)
        fs, path = self.io.resolve(base)
        infos = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
        return sorted(ns + (i.base_name,) for i in infos
                      if i.type == pafs.FileType.Directory and self._is_table_dir(f"{base}/{i.base_name}"))

    def drop_namespace(self, namespace):
        """Delete an empty namespace directory. Anything below it (a table or namespace at any depth, or any
        other file) raises NamespaceNotEmptyError; nothing is ever deleted recursively."""
        import pyarrow.fs as pafs
        ns = _ns(namespace)
        name = ".".join(ns)
        loc = self._namespace_location(ns)
        fs, path = self.io.resolve(loc)
        if fs.get_file_info(path).type != pafs.FileType.Directory or self._is_table_dir(loc):
            raise NotFoundError(f"namespace {name} does not exist")
        below = fs.get_file_info(pafs.FileSelector(path, recursive=False, allow_not_found=True))
        if below:
            raise NamespaceNotEmptyError(f"namespace {name} is not empty: it holds "
                                         f"{', '.join(sorted(i.base_name for i in below)[:5])}")
        if self.io.is_local(loc):
            try:
                os.rmdir(path)      # fails rather than deletes if something appeared meanwhile
            except OSError as exc:
                raise NamespaceNotEmptyError(f"namespace {name} could not be dropped: {exc.strerror}") from None
        else:
            fs.delete_dir(path)

    def _versions(self, location):
        out = []
        for info in self.io.list(f"{location}/metadata", recursive=False):
            m = _VERSION_FILE.match(info.base_name)
            if m:
                out.append((int(m.group(1)), info.path if "://" not in location else f"{location}/metadata/"
                                                                                     f"{info.base_name}"))
        return sorted(out)

    def current_version(self, location) -> tuple:
        """(version, metadata path) of the newest committed version, or (0, None)."""
        hint = f"{location}/metadata/version-hint.text"
        version = 0
        try:
            version = int(self.io.read_bytes(hint).decode().strip() or "0")
        except (NotFoundError, ValueError, UnicodeDecodeError):
            version = 0
        path = None
        if version > 0:
            path = f"{location}/metadata/v{version}.metadata.json"
            if not self.io.exists(path):
                version, path = 0, None
        if version == 0:
            versions = self._versions(location)
            if not versions:
                return 0, None
            version, path = versions[-1]
        # the hint may lag behind a commit whose writer died before updating it
        while True:
            nxt = f"{location}/metadata/v{version + 1}.metadata.json"
            if not self.io.exists(nxt):
                break
            version, path = version + 1, nxt
        return version, path

    def load_table_at(self, location: str):
        """Open the table stored at ``location`` (no catalog identifier needed)."""
        from .table import Table
        location = normalize_location(location).rstrip("/")
        md = self._load_at(location)
        return Table(("", location.rsplit("/", 1)[-1]), md, self.io, self, location=location)

    def _load_at(self, location):
        version, path = self.current_version(location)
        if path is None:
            raise NotFoundError(f"no table at {location}")
        md = parse_metadata(self.io.read_bytes(path), path)
        md.metadata_location = path
        return md

    def _load_metadata(self, namespace, name):
        return self._load_at(self._table_location(namespace, name))

    def create_table_at(self, location: str, schema, partition_spec=None, *, properties=None, sort_order=None,
                        format_version: int = 2):
        """Create an empty table stored at ``location`` (no catalog identifier needed); the twin of
        :meth:`load_table_at`."""
        from .table import Table
        location = normalize_location(location).rstrip("/")
        md = _new_metadata(schema, partition_spec, location, properties, sort_order, format_version)
        md = self._create_at(location, md)
        return Table(("", location.rsplit("/", 1)[-1]), md, self.io, self, location=location)

    def _create(self, namespace, name, md):
        loc = md.location
        if loc != self.default_location(namespace, name):
            raise InvalidArgumentError(f"a file-system catalog keeps table {name!r} at "
                                       f"{self.default_location(namespace, name)}; it cannot use {loc}")
        check_within(self.io, [loc], self.warehouse, f"create table {'.'.join(namespace + (name,))}",
                     directory=True)
        self._check_not_in_table(namespace, f"create table {'.'.join(namespace + (name,))}")
        if _table_markers(self.io, loc, f"{loc}/metadata"):
            raise InvalidArgumentError(f"cannot create table {'.'.join(namespace + (name,))}: {loc} is a "
                                       f"namespace holding tables")
        return self._create_at(loc, md)

    def _create_at(self, loc, md):
        if self.current_version(loc)[1] is not None:
            raise AlreadyExistsError(f"a table exists already at {loc}")
        path = f"{loc}/metadata/v1.metadata.json"
        try:
            self.io.create_exclusive(path, self._write_new_metadata(path, md))
        except AlreadyExistsError:
            raise AlreadyExistsError(f"table at {loc} exists already") from None
        self._write_hint(loc, 1)
        md.metadata_location = path
        return md

    def _write_hint(self, loc, version):
        try:
            self.io.write_bytes(f"{loc}/metadata/version-hint.text", str(version).encode())
        except OSError:
            pass   # the hint is advisory; loading probes for newer versions

    def commit_at(self, location, base: TableMetadata, new: TableMetadata) -> TableMetadata:
        m = _VERSION_FILE.match(os.path.basename(base.metadata_location or ""))
        if not m:
            raise CommitConflictError(f"base metadata {base.metadata_location!r} is not a version file")
        version = int(m.group(1)) + 1
        path = f"{location}/metadata/v{version}.metadata.json"
        dropped = _append_metadata_log(new, base)
        data = self._write_new_metadata(path, new)
        try:
            self.io.create_exclusive(path, data)
        except AlreadyExistsError:
            raise CommitConflictError(f"{path} was created by a concurrent commit") from None
        self._write_hint(location, version)
        new.metadata_location = path
        _delete_old_metadata(self.io, new, dropped)
        return new

    def commit(self, identifier, base, new):
        return self.commit_at(base.location, base, new)

    def drop_table(self, identifier, purge: bool = False):
        """Drop a table: its ``metadata`` directory (the table is gone, data files stay), or with ``purge`` its
        whole directory. Either is refused unless it lies inside the warehouse after resolving symlinks."""
        namespace, name = parse_identifier(identifier)
        full = ".".join(namespace + (name,))
        loc = self._table_location(namespace, name)
        check_within(self.io, [loc], self.warehouse, f"drop table {full}", directory=True)
        if self.current_version(loc)[1] is None:
            raise NotFoundError(f"table {full} does not exist")
        if purge:
            nested = _table_markers(self.io, loc, f"{loc}/metadata")
            if nested:
                raise UnsafeLocationError(f"refusing to purge table {full}: another table's metadata lies inside "
                                        f"it ({nested[0]}); nothing was deleted", path=nested[0], root=loc)
            self.io.delete_dir(loc)
        else:
            target = f"{loc}/metadata"
            check_within(self.io, [target], loc, f"drop table {full}", directory=True)
            self.io.delete_dir(target)

    def rename_table(self, from_identifier, to_identifier):
        raise PaimonEngineError("a file-system catalog cannot rename tables atomically (the location is the "
                                "identity); use a SQL catalog")


# ---------------------------------------------------------------------------
# SQL catalog (SQLite), compatible with pyiceberg's SqlCatalog
# ---------------------------------------------------------------------------

_DDL = (
    "CREATE TABLE IF NOT EXISTS iceberg_tables ("
    "catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, "
    "table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
    "previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5), "
    "PRIMARY KEY (catalog_name, table_namespace, table_name))",
    "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties ("
    "catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL, "
    "property_key VARCHAR(255) NOT NULL, property_value VARCHAR(1000) NOT NULL, "
    "PRIMARY KEY (catalog_name, namespace, property_key))",
)


class SqlCatalog(Catalog):
    """A catalog in a SQLite database file (``uri`` = ``sqlite:///path`` or a path), tables under ``warehouse``.

    ``name`` is the ``catalog_name`` column (pyiceberg's catalog name) so several catalogs can share a database.
    """

    def __init__(self, name: str = "default", uri: str | None = None, warehouse: str | None = None,
                 io: FileIO | None = None, properties: dict | None = None):
        props = dict(properties or {})
        uri = uri or props.get("uri")
        warehouse = warehouse or props.get("warehouse")
        if not uri:
            raise InvalidArgumentError("SqlCatalog needs a uri (sqlite:///path/to/catalog.db)")
        super().__init__(io, props)
        self.name = name
        self.db_path = self._sqlite_path(uri)
        self.warehouse = normalize_location(warehouse).rstrip("/") if warehouse else None
        self._has_type = True
        with self._connect() as conn:
            for ddl in _DDL:
                conn.execute(ddl)
            cols = [r[1] for r in conn.execute("PRAGMA table_info(iceberg_tables)")]
            self._has_type = "iceberg_type" in cols

    @staticmethod
    def _sqlite_path(uri):
        if uri.startswith("sqlite:///"):
            return uri[len("sqlite:///"):]   # SQLAlchemy form: sqlite:///rel.db, sqlite:////abs/path.db
        if uri.startswith("sqlite:"):
            raise InvalidArgumentError(f"unsupported SQLite uri {uri!r}; use sqlite:///path")
        if "://" in uri:
            raise InvalidArgumentError(f"SqlCatalog supports SQLite only, got {uri!r}")
        return uri

    def _connect(self):
        conn = sqlite3.connect(self.db_path, timeout=60, isolation_level=None)
        return _Conn(conn)

    def default_location(self, namespace, name) -> str:
        if not self.warehouse:
            raise InvalidArgumentError("SqlCatalog needs a warehouse (or an explicit table location)")
        return f"{self.warehouse}/{'.'.join(namespace)}.db/{name}"

    # -- namespaces ------------------------------------------------------------
    def create_namespace(self, namespace, properties=None):
        ns = ".".join(_ns(namespace))
        if len(ns.encode("utf-8")) > MAX_SQL_NAMESPACE_BYTES:
            raise InvalidIdentifierError(
                f"namespace {ns[:40]!r}... is {len(ns.encode('utf-8'))} bytes joined with dots; a SQL catalog "
                f"keeps at most {MAX_SQL_NAMESPACE_BYTES} (its tables live in the directory <namespace>.db)",
                part=ns, reason="too long")
        if self.namespace_exists(ns):
            raise AlreadyExistsError(f"namespace {ns} exists already")
        props = dict(properties or {}) or {"exists": "true"}
        with self._connect() as conn:
            for k, v in props.items():
                conn.execute("INSERT INTO iceberg_namespace_properties VALUES (?, ?, ?, ?)",
                             (self.name, ns, str(k), str(v)))

    def namespace_exists(self, namespace) -> bool:
        ns = ".".join(_ns(namespace))
        with self._connect() as conn:
            row = conn.execute("SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name=? AND "
                               "(namespace=? OR substr(namespace, 1, ?)=?) LIMIT 1",
                               (self.name, ns, len(ns) + 1, ns + ".")).fetchone()
            if row:
                return True
            row = conn.execute("SELECT 1 FROM iceberg_tables WHERE catalog_name=? AND "
                               "(table_namespace=? OR substr(table_namespace, 1, ?)=?) LIMIT 1",
                               (self.name, ns, len(ns) + 1, ns + ".")).fetchone()
        return row is not None

    def list_namespaces(self):
        with self._connect() as conn:
            rows = conn.execute("SELECT DISTINCT namespace FROM iceberg_namespace_properties WHERE catalog_name=? "
                                "UNION SELECT DISTINCT table_namespace FROM iceberg_tables WHERE catalog_name=?",
                                (self.name, self.name)).fetchall()
        return sorted(tuple(r[0].split(".")) for r in rows)

    def load_namespace_properties(self, namespace) -> dict:
        ns = ".".join(_ns(namespace))
        with self._connect() as conn:
            rows = conn.execute("SELECT property_key, property_value FROM iceberg_namespace_properties "
                                "WHERE catalog_name=? AND namespace=?", (self.name, ns)).fetchall()
        if not rows and not self.namespace_exists(ns):
            raise NotFoundError(f"namespace {ns} does not exist")
        return dict(rows)

    def update_namespace_properties(self, namespace, removals=(), updates=None) -> dict:
        """Remove and set namespace properties in one transaction -> ``{"updated", "removed", "missing"}``."""
        ns = ".".join(_ns(namespace))
        updates = {str(k): str(v) for k, v in (updates or {}).items()}
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                rows = dict(conn.execute("SELECT property_key, property_value FROM iceberg_namespace_properties "
                                         "WHERE catalog_name=? AND namespace=?", (self.name, ns)).fetchall())
                if not rows and not self.namespace_exists(ns):
                    raise NotFoundError(f"namespace {ns} does not exist")
                removed = sorted(k for k in set(removals) if k in rows)
                missing = sorted(k for k in set(removals) if k not in rows)
                for k in removed:
                    conn.execute("DELETE FROM iceberg_namespace_properties WHERE catalog_name=? AND namespace=? "
                                 "AND property_key=?", (self.name, ns, k))
                for k, v in updates.items():
                    conn.execute("INSERT OR REPLACE INTO iceberg_namespace_properties VALUES (?, ?, ?, ?)",
                                 (self.name, ns, k, v))
                if set(rows) <= set(removed) and not updates:    # keep the namespace when its last key goes
                    conn.execute("INSERT INTO iceberg_namespace_properties VALUES (?, ?, 'exists', 'true')",
                                 (self.name, ns))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return {"updated": sorted(updates), "removed": removed, "missing": missing}

    def drop_namespace(self, namespace):
        """Drop an empty namespace; a table in it or in any namespace below it, or a namespace below it, raises
        NamespaceNotEmptyError. Only catalog rows are deleted, never files."""
        ns = ".".join(_ns(namespace))
        below = (self.name, ns, len(ns) + 1, ns + ".")
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                table = conn.execute("SELECT table_namespace, table_name FROM iceberg_tables WHERE catalog_name=? "
                                     "AND (table_namespace=? OR substr(table_namespace, 1, ?)=?) LIMIT 1",
                                     below).fetchone()
                child = conn.execute("SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name=? "
                                     "AND namespace<>? AND substr(namespace, 1, ?)=? LIMIT 1", below).fetchone()
                if table is not None:
                    raise NamespaceNotEmptyError(f"namespace {ns} is not empty: it holds table "
                                                 f"{table[0]}.{table[1]}")
                if child is not None:
                    raise NamespaceNotEmptyError(f"namespace {ns} is not empty: it holds namespace {child[0]}")
                cur = conn.execute("DELETE FROM iceberg_namespace_properties WHERE catalog_name=? AND "
                                   "namespace=?", (self.name, ns))
                if cur.rowcount == 0:
                    raise NotFoundError(f"namespace {ns} does not exist")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    # -- tables ----------------------------------------------------------------
    def _type_filter(self):
        return " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)" if self._has_type else ""

    def list_tables(self, namespace):
        ns = ".".join(_ns(namespace))
        with self._connect() as conn:
            rows = conn.execute("SELECT table_name FROM iceberg_tables WHERE catalog_name=? AND table_namespace=?"
                                + self._type_filter(), (self.name, ns)).fetchall()
        return sorted(tuple(ns.split(".")) + (r[0],) for r in rows)

    def _location_of(self, namespace, name):
        ns = ".".join(namespace)
        with self._connect() as conn:
            row = conn.execute("SELECT metadata_location FROM iceberg_tables WHERE catalog_name=? AND "
                               "table_namespace=? AND table_name=?" + self._type_filter(),
                               (self.name, ns, name)).fetchone()
        if row is None or row[0] is None:
            raise NotFoundError(f"table {ns}.{name} does not exist in catalog {self.name!r}")
        return row[0]

    def _load_metadata(self, namespace, name):
        loc = self._location_of(namespace, name)
        md = parse_metadata(self.io.read_bytes(loc), loc)
        md.metadata_location = loc
        return md

    def _new_metadata_path(self, location, version):
        return f"{location}/metadata/{version:05d}-{uuid.uuid4()}.metadata.json"

    def _table_directories(self):
        """(identifier, table directory) of every table in this catalog (the directory above ``metadata/``)."""
        with self._connect() as conn:
            rows = conn.execute("SELECT table_namespace, table_name, metadata_location FROM iceberg_tables WHERE "
                                "catalog_name=? AND metadata_location IS NOT NULL", (self.name,)).fetchall()
        return [(f"{r[0]}.{r[1]}", normalize_location(r[2]).rsplit("/", 2)[0]) for r in rows]

    def _create(self, namespace, name, md):
        ns = ".".join(namespace)
        if not self.namespace_exists(ns):
            raise NotFoundError(f"namespace {ns} does not exist")
        for other, directory in self._table_directories():
            if other == f"{ns}.{name}":
                continue    # the same table: the insert below reports that it exists
            if is_within(self.io, md.location, directory) or is_within(self.io, directory, md.location):
                raise InvalidArgumentError(f"table location {md.location} overlaps table {other} at {directory}; "
                                           f"one table's maintenance would delete the other's files")
        path = self._new_metadata_path(md.location, 0)
        self.io.write_bytes(path, self._write_new_metadata(path, md))
        try:
            with self._connect() as conn:
                if self._has_type:
                    conn.execute("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                                 "metadata_location, previous_metadata_location, iceberg_type) "
                                 "VALUES (?, ?, ?, ?, NULL, 'TABLE')", (self.name, ns, name, path))
                else:
                    conn.execute("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                                 "metadata_location, previous_metadata_location) VALUES (?, ?, ?, ?, NULL)",
                                 (self.name, ns, name, path))
        except sqlite3.IntegrityError:
            self.io.delete(path)
            raise AlreadyExistsError(f"table {ns}.{name} exists already") from None
        md.metadata_location = path
        return md

    def commit(self, identifier, base, new):
        namespace, name = parse_identifier(identifier)
        ns = ".".join(namespace)
        check_deletable_root(self.io, new.location, self.warehouse, f"commit to table {ns}.{name} (its metadata "
                                                                    f"names this location)")
        version = _catalog_version(base.metadata_location) + 1
        path = self._new_metadata_path(new.location, version)
        dropped = _append_metadata_log(new, base)
        self.io.write_bytes(path, self._write_new_metadata(path, new))
        with self._connect() as conn:
            cur = conn.execute("UPDATE iceberg_tables SET metadata_location=?, previous_metadata_location=? "
                               "WHERE catalog_name=? AND table_namespace=? AND table_name=? AND "
                               "metadata_location=?", (path, base.metadata_location, self.name, ns, name,
                                                       base.metadata_location))
            ok = cur.rowcount == 1
        if not ok:
            self.io.delete(path)
            raise CommitConflictError(f"table {ns}.{name} changed since {base.metadata_location}")
        new.metadata_location = path
        _delete_old_metadata(self.io, new, dropped)
        return new

    def drop_table(self, identifier, purge: bool = False):
        """Remove the table from the catalog. With ``purge`` also delete the files its metadata references (every
        metadata file in the log, manifest lists, manifests, data and delete files, file indexes, statistics),
        as Iceberg does; all of them must lie inside the table location (which may not be the warehouse, an
        ancestor of it, or a file-system root), else UnsafeLocationError before anything is dropped or deleted.
        Files nothing references (a killed writer's leftovers) stay: run ``remove_orphan_files`` first."""
        namespace, name = parse_identifier(identifier)
        full = ".".join(namespace + (name,))
        files = []
        if purge:
            from .table import Table
            md = self._load_metadata(namespace, name)
            table = Table(namespace + (name,), md, self.io, self)
            files = table._referenced_files(md)
            check_deletable_root(self.io, md.location, self.warehouse, f"purge table {full}")
            check_within(self.io, files, md.location, f"purge table {full}")
        with self._connect() as conn:
            cur = conn.execute("DELETE FROM iceberg_tables WHERE catalog_name=? AND table_namespace=? AND "
                               "table_name=?", (self.name, ".".join(namespace), name))
            if cur.rowcount == 0:
                raise NotFoundError(f"table {full} does not exist")
        for path in sorted(files, key=lambda p: p.endswith(".metadata.json")):   # metadata files last
            try:
                self.io.delete(path)
            except OSError:
                pass

    def rename_table(self, from_identifier, to_identifier):
        fns, fname = parse_identifier(from_identifier)
        tns, tname = parse_identifier(to_identifier)
        if not self.namespace_exists(".".join(tns)):
            raise NotFoundError(f"namespace {'.'.join(tns)} does not exist")
        try:
            with self._connect() as conn:
                cur = conn.execute("UPDATE iceberg_tables SET table_namespace=?, table_name=? WHERE catalog_name=? "
                                   "AND table_namespace=? AND table_name=?",
                                   (".".join(tns), tname, self.name, ".".join(fns), fname))
                if cur.rowcount == 0:
                    raise NotFoundError(f"table {'.'.join(fns + (fname,))} does not exist")
        except sqlite3.IntegrityError:
            raise AlreadyExistsError(f"table {'.'.join(tns + (tname,))} exists already") from None
        return self.load_table(tns + (tname,))

    def register_table(self, identifier, metadata_location: str):
        namespace, name = parse_identifier(identifier)
        md = parse_metadata(self.io.read_bytes(metadata_location), metadata_location)
        try:
            check_deletable_root(self.io, md.location, self.warehouse, "register a table there")
        except UnsafeLocationError as exc:
            raise InvalidArgumentError(f"cannot register {metadata_location}: its table location "
                                       f"{md.location!r} cannot be owned by one table ({exc})") from None
        try:
            with self._connect() as conn:
                conn.execute("INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                             "metadata_location) VALUES (?, ?, ?, ?)",
                             (self.name, ".".join(namespace), name, metadata_location))
        except sqlite3.IntegrityError:
            raise AlreadyExistsError(f"table {'.'.join(namespace + (name,))} exists already") from None
        return self.load_table(identifier)


class _Conn:
    """A SQLite connection as a context manager that commits (autocommit statements) and always closes."""

    def __init__(self, conn):
        self.conn = conn

    def execute(self, *args):
        for attempt in range(200):
            try:
                return self.conn.execute(*args)
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                time.sleep(0.01 * (1 + attempt % 10))
        return self.conn.execute(*args)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.conn.close()


MAX_SQL_NAMESPACE_BYTES = 252   # <namespace>.db must fit in one 255-byte directory name


def _catalog_version(location) -> int:
    if not location:
        return -1
    m = _CATALOG_FILE.match(os.path.basename(location))
    if m:
        return int(m.group(1))
    m = _VERSION_FILE.match(os.path.basename(location))
    return int(m.group(1)) if m else -1


def _sql_catalog(name, props):
    props = dict(props)
    extra = props.pop("properties", None) or {}
    return SqlCatalog(name, uri=props.pop("uri", None), warehouse=props.pop("warehouse", None),
                      io=props.pop("io", None), properties={**props, **extra})


def _fs_catalog(name, props):
    props = dict(props)
    warehouse = props.pop("warehouse", None)
    if not warehouse:
        raise InvalidArgumentError(f"catalog {name!r} of type filesystem needs a warehouse")
    extra = props.pop("properties", None) or {}
    return FileSystemCatalog(warehouse, io=props.pop("io", None), properties={**props, **extra}, name=name)


def _rest_catalog(name, props):
    from ..rest.client import RestCatalog
    props = dict(props)
    known = {k: props.pop(k) for k in ("uri", "warehouse", "token", "credential", "headers", "io", "timeout")
             if k in props}
    extra = props.pop("properties", None) or {}
    return RestCatalog(name, properties={**props, **extra}, **known)


#: catalog ``type`` -> factory(name, properties); other catalog types register here
CATALOG_TYPES = {"sql": _sql_catalog, "sqlite": _sql_catalog, "filesystem": _fs_catalog, "fs": _fs_catalog,
                 "hadoop": _fs_catalog, "rest": _rest_catalog}

CONFIG_FILES = (".paimon-engine.yaml", ".pyiceberg.yaml")
ENV_PREFIXES = ("PAIMON_ENGINE_", "PYICEBERG_")


def _config_file_catalogs() -> dict:
    """``catalog:`` sections of the first config file found: in ``$PAIMON_ENGINE_HOME`` / ``$PYICEBERG_HOME``,
    the home directory, then the working directory; our file name before pyiceberg's."""
    dirs = [os.environ.get("PAIMON_ENGINE_HOME"), os.environ.get("PYICEBERG_HOME"), os.path.expanduser("~"),
            os.getcwd()]
    for d in dirs:
        if not d:
            continue
        for fname in CONFIG_FILES:
            path = os.path.join(d, fname)
            if os.path.isfile(path):
                import yaml
                try:
                    with open(path, encoding="utf-8") as f:
                        conf = yaml.safe_load(f) or {}
                except yaml.YAMLError as exc:
                    raise InvalidArgumentError(f"cannot parse catalog configuration {path}: {exc}") from None
                if not isinstance(conf, dict):
                    raise InvalidArgumentError(f"catalog configuration {path} is not a mapping")
                return {str(k).lower(): v for k, v in (conf.get("catalog") or {}).items()}, conf
    return {}, {}


def _env_catalogs() -> dict:
    """``<PREFIX>CATALOG__<NAME>__<PROP>`` variables: ``__`` in a property becomes ``.`` and ``_`` ``-``, as
    pyiceberg reads them (pyiceberg's prefix first, ours wins)."""
    out = {}
    for prefix in reversed(ENV_PREFIXES):
        head = (prefix + "CATALOG__").lower()
        for key, value in os.environ.items():
            low = key.lower()
            if not low.startswith(head):
                continue
            parts = low[len(head):].split("__", 1)
            if len(parts) != 2 or not parts[0] or not parts[1]:
                continue
            prop = parts[1].replace("__", ".").replace("_", "-")
            out.setdefault(parts[0], {})[prop] = value
    return out


def catalog_properties(name: str) -> dict:
    """The configured properties of catalog ``name`` (config file, overridden by environment variables)."""
    files, _ = _config_file_catalogs()
    props = dict(files.get(name.lower()) or {})
    props.update(_env_catalogs().get(name.lower(), {}))
    return {str(k): v for k, v in props.items()}


def _infer_type(name, props):
    uri = str(props.get("uri") or "")
    if uri.startswith("sqlite") or uri.endswith(".db"):
        return "sql"
    if uri.startswith(("http://", "https://")):
        return "rest"
    if props.get("warehouse") and not uri:
        return "filesystem"
    raise InvalidArgumentError(f"catalog {name!r}: give a type ({', '.join(sorted(CATALOG_TYPES))}) or a uri")


def load_catalog(name: str | None = None, **properties) -> Catalog:
    """A catalog by name, as pyiceberg's ``load_catalog``: ``properties`` (``type``, ``uri``, ``warehouse``, ...)
    merged over the ``catalog.<name>`` section of ``.paimon-engine.yaml`` / ``.pyiceberg.yaml`` and the
    ``PAIMON_ENGINE_CATALOG__<NAME>__<PROP>`` / ``PYICEBERG_CATALOG__<NAME>__<PROP>`` environment variables.
    ``type`` is ``sql`` (SQLite), ``filesystem`` or ``rest``; without one it is inferred from ``uri``.

    The older form ``load_catalog("sql", uri=...)`` / ``load_catalog("fs", warehouse=...)`` (a type as the
    name, no ``type`` property, no configured catalog of that name) still works."""
    files, whole = _config_file_catalogs()
    if name is None:
        name = str(whole.get("default-catalog") or "default")
    props = catalog_properties(name)
    props.update({k: v for k, v in properties.items()})
    kind = props.pop("type", None)
    if kind is None and name.lower() in CATALOG_TYPES and not catalog_properties(name):
        kind, name = name.lower(), ("fs" if name.lower() in ("fs", "filesystem", "hadoop") else "default")
        if "name" in props:
            name = props.pop("name")
    if kind is None:
        kind = _infer_type(name, props)
    factory = CATALOG_TYPES.get(str(kind).lower())
    if factory is None:
        raise InvalidArgumentError(f"unknown catalog type {kind!r}; known: {', '.join(sorted(CATALOG_TYPES))}")
    return factory(name, props)
