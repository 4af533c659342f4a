"""The file-system catalog: ``<warehouse>/<ns...>/<table>/metadata/v<N>.metadata.json`` plus
``version-hint.text``. A commit creates ``v<N+1>.metadata.json`` with an atomic create-if-absent
(``FileIO.create_exclusive``); whoever creates it first wins, the other sees a conflict. Never an overwriting
rename. The hint is only a hint: loading probes past it.
"""

from __future__ import annotations

import os

from ..errors import (AlreadyExistsError, CommitConflictError, InvalidArgumentError,
                      NamespaceNotEmptyError, NotFoundError, PaimonEngineError, UnsafeLocationError)
from ..io import FileIO, normalize_location
from ..spec.metadata import VERSION_METADATA_FILE, TableMetadata, is_metadata_file_name, parse_metadata
from ..table.locations import check_within
from .base import Catalog, _append_metadata_log, _delete_old_metadata, _new_metadata
from .identifiers import check_namespace, parse_identifier

__all__ = ["FileSystemCatalog"]

_ns = check_namespace


def _table_markers(io, location, own_metadata_dir):
    """Metadata files of another table found below ``location``: version files, hints or catalog metadata files
    anywhere but in this table's own metadata directory."""
    from ..table.locations import comparable
    own = comparable(io, own_metadata_dir, True)
    scheme = location.split("://", 1)[0] + "://" if "://" in location else ""
    found = []
    for info in io.list(location):
        name = info.base_name
        if name == "version-hint.text" or is_metadata_file_name(name):
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
            m = VERSION_METADATA_FILE.match(info.base_name)
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
        from ..table.table import Table
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
        from ..table.table import Table
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
        m = VERSION_METADATA_FILE.match(os.path.basename(base.metadata_location or ""))
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

    def refresh_table(self, table) -> TableMetadata:
        if table._fs_location is not None:
            return self._load_at(table._fs_location)
        return self.refresh(table.identifier)

    def commit_table(self, table, base, new) -> TableMetadata:
        return self.commit_at(table._fs_location or base.location, base, new)

    def table_directory(self, table) -> str:
        return table._fs_location or self.default_location(table.identifier[:-1], table.identifier[-1])

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
