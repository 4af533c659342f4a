"""Catalogs: where a table's current metadata file is recorded, and the atomic step of a commit.

* :class:`FileSystemCatalog` — ``<warehouse>/<ns...>/<table>/metadata/v<N>.metadata.json`` plus
  ``version-hint.text``. A commit creates ``v<N+1>.metadata.json`` with an atomic create-if-absent
  (``FileIO.create_exclusive``); whoever creates it first wins, the other sees a conflict. Never an overwriting
  rename. The hint is only a hint: loading probes past it.
* :class:`SqlCatalog` (in :mod:`.sql_catalog`, importable from here) — a SQLite or PostgreSQL database with the
  tables of Iceberg's JDBC catalog and pyiceberg's ``SqlCatalog`` (``iceberg_tables``,
  ``iceberg_namespace_properties``), so Java, pyiceberg and this library open each other's catalog. A commit is a
  compare-and-swap ``UPDATE ... WHERE metadata_location = <the one we started from>``. Metadata files are named
  ``<NNNNN>-<uuid>.metadata.json``.
"""

from __future__ import annotations

import os
import re
import time

from ..errors import (AlreadyExistsError, CommitConflictError, InvalidArgumentError,
                      NamespaceNotEmptyError, NotFoundError, PaimonEngineError, UnsafeLocationError)
from ..io import FileIO, normalize_location
from .identifiers import check_namespace, parse_identifier
from .locations import check_deletable_root, check_within, is_within
from ..spec.metadata import TableMetadata, new_table_metadata, parse_metadata, serialize_metadata
from ..spec.partitioning import UNPARTITIONED, PartitionSpec
from ..spec.schema import Schema

__all__ = ["Catalog", "FileSystemCatalog", "SqlCatalog", "load_catalog", "parse_identifier"]  # noqa: F822 (module __getattr__)

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
# metadata file versions, and load_catalog (the SQL catalog is in sql_catalog.py)
# ---------------------------------------------------------------------------

def _catalog_version(location) -> int:
    if not location:
        return -1
    m = _CATALOG_FILE.match(os.path.basename(location))
    if m:
        return int(m.group(1))
    m = _VERSION_FILE.match(os.path.basename(location))
    return int(m.group(1)) if m else -1


def _sql_catalog(name, props):
    from .sql_catalog import SqlCatalog
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
CATALOG_TYPES = {"sql": _sql_catalog, "sqlite": _sql_catalog, "postgresql": _sql_catalog,
                 "filesystem": _fs_catalog, "fs": _fs_catalog, "hadoop": _fs_catalog, "rest": _rest_catalog}

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
    if uri.startswith(("sqlite", "postgresql")) or uri.endswith(".db"):
        return "sql"
    if uri.startswith(("http://", "https://")):
        return "rest"
    if props.get("warehouse") and not uri:
        return "filesystem"
    raise InvalidArgumentError(f"catalog {name!r}: give a type ({', '.join(sorted(CATALOG_TYPES))}) or a uri")


def load_catalog(name: str | None = None, /, **properties) -> Catalog:
    """A catalog by name, as pyiceberg's ``load_catalog``: ``properties`` (``type``, ``uri``, ``warehouse``, ...)
    merged over the ``catalog.<name>`` section of ``.paimon-engine.yaml`` / ``.pyiceberg.yaml`` and the
    ``PAIMON_ENGINE_CATALOG__<NAME>__<PROP>`` / ``PYICEBERG_CATALOG__<NAME>__<PROP>`` environment variables.
    ``type`` is ``sql`` (SQLite or PostgreSQL, by the ``uri``), ``filesystem`` or ``rest``; without one it is
    inferred from ``uri``.

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


def __getattr__(name):
    # SqlCatalog lives in sql_catalog.py (which imports this module); it stays importable from here.
    if name in ("SqlCatalog", "MAX_SQL_NAMESPACE_BYTES"):
        from . import sql_catalog
        return getattr(sql_catalog, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
