"""The SQL catalog: Iceberg's JDBC catalog tables in SQLite or PostgreSQL, through SQLAlchemy Core.

The database holds the two tables of Iceberg's ``JdbcCatalog`` and of pyiceberg's ``SqlCatalog``
(``iceberg_tables`` with the ``iceberg_type`` column Java adds for views, and ``iceberg_namespace_properties``), so
Java, pyiceberg and this library share one catalog with nothing to migrate. They are created when missing and never
altered; a table lacking a column this catalog needs raises :class:`~paimon_engine.errors.CatalogSchemaError`
naming it, before anything is written.

* ``uri``: ``sqlite:///path/to/catalog.db`` (or a bare path) or ``postgresql+psycopg://user:pw@host:5432/db``
  (the ``postgres`` extra installs the driver). Connections are pooled (PostgreSQL) and checked before use.
* A commit writes the new metadata file, then swaps ``metadata_location`` with one conditional
  ``UPDATE ... WHERE metadata_location = <the one we started from>`` in a transaction and checks the row count:
  0 rows is a :class:`~paimon_engine.errors.CommitConflictError`. Serialization failures, deadlocks, a busy SQLite
  file and connections lost before the transaction commits are retried with exponential backoff. A connection lost
  while the database commits leaves the outcome unknown: the catalog reads the row back on a new connection, and
  when that does not show the new file it raises :class:`~paimon_engine.errors.CommitStateUnknownError` rather than
  retry into a second commit.
* An unreachable database raises :class:`~paimon_engine.errors.CatalogUnreachableError` naming host and port
  within ``connect-timeout`` seconds (default 10). The password is kept only inside the connection engine: it is
  not in ``repr``, errors, ``properties`` or anything written to a table.
"""

from __future__ import annotations

import os
import random
import time
import uuid

from ..errors import (AlreadyExistsError, CatalogSchemaError, CatalogUnreachableError, CommitConflictError,
                      CommitStateUnknownError, InvalidArgumentError, InvalidIdentifierError, NamespaceNotEmptyError,
                      NotFoundError, PaimonEngineError, UnsafeLocationError)
from ..io import FileIO, normalize_location
from ..spec.metadata import metadata_file_version
from ..table.locations import check_deletable_root, check_within, is_within
from .base import Catalog, _append_metadata_log, _delete_old_metadata
from .identifiers import check_namespace, parse_identifier
from ..spec.metadata import parse_metadata

__all__ = ["SqlCatalog", "MAX_SQL_NAMESPACE_BYTES"]

MAX_SQL_NAMESPACE_BYTES = 252   # <namespace>.db must fit in one 255-byte directory name

# The JDBC catalog's tables: column -> (required, max length). ``iceberg_type`` is optional (catalogs written by
# older Java releases and by pyiceberg do not have it).
_EXPECTED = {
    "iceberg_tables": {"catalog_name": True, "table_namespace": True, "table_name": True,
                       "metadata_location": True, "previous_metadata_location": True, "iceberg_type": False},
    "iceberg_namespace_properties": {"catalog_name": True, "namespace": True, "property_key": True,
                                     "property_value": True},
}
_TRANSIENT_SQLSTATES = {"40001", "40P01", "55P03", "57P01", "08000", "08003", "08006"}
_SECRET_PROPERTIES = ("uri", "password", "user")


def _tables():
    import sqlalchemy as sa
    meta = sa.MetaData()
    tables = sa.Table(
        "iceberg_tables", meta,
        sa.Column("catalog_name", sa.String(255), primary_key=True, nullable=False),
        sa.Column("table_namespace", sa.String(255), primary_key=True, nullable=False),
        sa.Column("table_name", sa.String(255), primary_key=True, nullable=False),
        sa.Column("metadata_location", sa.String(1000)),
        sa.Column("previous_metadata_location", sa.String(1000)),
        sa.Column("iceberg_type", sa.String(5)))
    props = sa.Table(
        "iceberg_namespace_properties", meta,
        sa.Column("catalog_name", sa.String(255), primary_key=True, nullable=False),
        sa.Column("namespace", sa.String(255), primary_key=True, nullable=False),
        sa.Column("property_key", sa.String(255), primary_key=True, nullable=False),
        sa.Column("property_value", sa.String(1000), nullable=False))
    return meta, tables, props


def _swap_statement(t):
    """The commit's compare-and-swap of a table's metadata location, built once per catalog: its values are bound
    at execution, so SQLAlchemy compiles it and caches its key once instead of at every commit."""
    import sqlalchemy as sa
    return sa.update(t).where(
        t.c.catalog_name == sa.bindparam("b_catalog"), t.c.table_namespace == sa.bindparam("b_namespace"),
        t.c.table_name == sa.bindparam("b_name"), t.c.metadata_location == sa.bindparam("b_base")).values(
        metadata_location=sa.bindparam("b_new"), previous_metadata_location=sa.bindparam("b_base"))


def mask_uri(uri) -> str:
    """``uri`` with any password replaced by ``***`` (for messages and logs)."""
    try:
        from sqlalchemy.engine import make_url
        return make_url(uri).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not a URL SQLAlchemy parses: show only its scheme
        text = str(uri)
        return text.split("://", 1)[0] + "://..." if "@" in text else text


def _parse_url(uri):
    """The SQLAlchemy URL of ``uri`` (a bare path means a SQLite file). Errors never echo the uri (a password)."""
    from sqlalchemy.engine import URL, make_url
    from sqlalchemy.exc import ArgumentError
    if not isinstance(uri, str) or not uri:
        raise InvalidArgumentError("SqlCatalog needs a uri (sqlite:///path/to/catalog.db or "
                                   "postgresql+psycopg://user@host:5432/db)")
    if "://" not in uri and not uri.startswith("sqlite:"):
        return URL.create("sqlite", database=uri)
    try:
        url = make_url(uri)
    except (ArgumentError, ValueError):
        scheme = uri.split(":", 1)[0]
        raise InvalidArgumentError(f"cannot parse the SQL catalog uri (scheme {scheme!r}); expected "
                                   f"sqlite:///path or postgresql+psycopg://user@host:port/db") from None
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            raise InvalidArgumentError("a SQLite catalog needs a file: sqlite:///path/to/catalog.db")
        return url
    if backend == "postgresql":
        if not url.host and not url.query.get("host"):
            raise InvalidArgumentError("a PostgreSQL catalog uri needs a host: postgresql+psycopg://user@host:5432/db")
        return url
    raise InvalidArgumentError(f"SqlCatalog supports SQLite and PostgreSQL, got a {backend!r} uri")


def _where(url) -> str:
    """Where the database is, for messages: host:port/db or the SQLite path; never credentials."""
    if url.get_backend_name() == "sqlite":
        return f"SQLite file {url.database}"
    return f"PostgreSQL at {url.host or url.query.get('host')}:{url.port or 5432} (database {url.database})"


class SqlCatalog(Catalog):
    """A catalog in a SQL database (SQLite file or PostgreSQL server), table files under ``warehouse``.

    ``name`` is the ``catalog_name`` column (pyiceberg's and Java's catalog name) so several catalogs can share a
    database. Properties: ``uri``, ``warehouse``, ``connect-timeout`` (seconds, default 10), ``pool-size``
    (default 5), ``commit-retries`` (transient database errors retried per operation, default 6).
    """

    def __init__(self, name: str = "default", uri: str | None = None, warehouse: str | None = None,
                 io: FileIO | None = None, properties: dict | None = None):
        props = dict(properties or {})
        uri = uri or props.get("uri")
        warehouse = warehouse or props.get("warehouse")
        url = _parse_url(uri)
        for key in _SECRET_PROPERTIES:
            props.pop(key, None)
        super().__init__(io, props)
        self.name = name
        self.warehouse = normalize_location(warehouse).rstrip("/") if warehouse else None
        self.uri = url.render_as_string(hide_password=True)
        self.db_path = url.database if url.get_backend_name() == "sqlite" else None
        self._url = url
        self._where = _where(url)
        self._sqlite = url.get_backend_name() == "sqlite"
        self._attempts = max(1, int(props.get("commit-retries", 6)))
        self._connect_timeout = float(props.get("connect-timeout", 10))
        self._engine = self._make_engine(url, props)
        self._pid = os.getpid()
        self._meta, self._t, self._p = _tables()
        self._swap = _swap_statement(self._t)
        self._has_type = True
        self._prepare()

    def __repr__(self):
        return f"SqlCatalog({self.name!r}, uri={self.uri!r}, warehouse={self.warehouse!r})"

    # -- connections -------------------------------------------------------------
    def _make_engine(self, url, props):
        import sqlalchemy as sa
        if self._sqlite:
            from sqlalchemy.pool import NullPool
            engine = sa.create_engine(url, poolclass=NullPool,
                                      connect_args={"timeout": 60, "check_same_thread": False})

            @sa.event.listens_for(engine, "connect")
            def _no_implicit_transactions(dbapi_conn, record):
                dbapi_conn.isolation_level = None     # the begin hook below opens every transaction

            @sa.event.listens_for(engine, "begin")
            def _begin_immediate(conn):
                conn.exec_driver_sql("BEGIN IMMEDIATE")   # take the write lock up front: no upgrade deadlocks
            return engine
        try:
            return sa.create_engine(
                url, pool_pre_ping=True, pool_size=int(props.get("pool-size", 5)), max_overflow=10,
                pool_recycle=1800, hide_parameters=True,
                connect_args={"connect_timeout": max(1, int(round(self._connect_timeout))),
                              "application_name": "paimon_engine"})
        except ImportError as exc:
            raise InvalidArgumentError(f"a PostgreSQL catalog needs its driver ({exc.name}): "
                                       f"pip install 'paimon_engine[postgres]'") from None

    def _connect(self):
        """A connection from the pool; CatalogUnreachableError (host and port, no credentials) when there is none."""
        import sqlalchemy as sa
        if os.getpid() != self._pid:          # a forked child must not share the parent's sockets
            self._engine.dispose(close=False)
            self._pid = os.getpid()
        try:
            return self._engine.connect()
        except sa.exc.DBAPIError as exc:
            raise CatalogUnreachableError(f"cannot connect to the catalog database, {self._where}: "
                                          f"{self._reason(exc)}") from None

    def _reason(self, exc) -> str:
        text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        reason = text[0] if text else type(exc).__name__
        if self._url.password:
            reason = reason.replace(str(self._url.password), "***")
        return reason[:300]

    def _transient(self, exc) -> bool:
        import sqlalchemy as sa
        if not isinstance(exc, sa.exc.DBAPIError):
            return False
        if exc.connection_invalidated:
            return True
        if self._sqlite:
            msg = str(exc.orig)
            return isinstance(exc, sa.exc.OperationalError) and ("locked" in msg or "busy" in msg)
        return getattr(exc.orig, "sqlstate", None) in _TRANSIENT_SQLSTATES

    def _backoff(self, attempt):
        time.sleep(min(2.0, 0.02 * (2 ** attempt)) * (0.5 + random.random()))

    def _run(self, work, *, write=True, confirm=None, serializable=False):
        """``work(conn)`` in one transaction; transient failures before the commit are retried with backoff.

        A failure of the COMMIT itself is retried only for reads. For writes, ``confirm()`` (run on a fresh
        connection) says whether the change landed; if it cannot say yes, CommitStateUnknownError."""
        import sqlalchemy as sa
        for attempt in range(self._attempts):
            last = attempt == self._attempts - 1
            conn = self._connect()
            try:
                if serializable and not self._sqlite:
                    conn = conn.execution_options(isolation_level="SERIALIZABLE")
                trans = conn.begin()
                try:
                    result = work(conn)
                except BaseException:
                    try:
                        trans.rollback()
                    except sa.exc.DBAPIError:
                        pass
                    raise
                try:
                    trans.commit()
                except sa.exc.DBAPIError as exc:
                    if not write and self._transient(exc) and not last:
                        self._backoff(attempt)
                        continue
                    if write and not self._transient(exc):
                        raise self._translate(exc) from None
                    if write and self._commit_was_lost(exc) and confirm is not None:
                        try:
                            if confirm():
                                return result
                        except PaimonEngineError:
                            pass
                    if write and self._commit_was_lost(exc):
                        raise CommitStateUnknownError(
                            f"the connection to {self._where} was lost while committing; whether the change "
                            f"took effect is unknown ({self._reason(exc)}). Reload before retrying.") from None
                    if last:
                        raise self._translate(exc) from None
                    self._backoff(attempt)     # refused before it committed (serialization failure, busy)
                    continue
                return result
            except sa.exc.IntegrityError:
                raise
            except sa.exc.DBAPIError as exc:
                if not self._transient(exc) or last:
                    raise self._translate(exc) from None
                self._backoff(attempt)
            finally:
                conn.close()
        raise AssertionError("unreachable")

    @staticmethod
    def _commit_was_lost(exc) -> bool:
        return bool(getattr(exc, "connection_invalidated", False)) or \
            getattr(getattr(exc, "orig", None), "sqlstate", None) in ("08000", "08003", "08006", "57P01")

    def _translate(self, exc):
        import sqlalchemy as sa
        if isinstance(exc, sa.exc.OperationalError) and exc.connection_invalidated:
            return CatalogUnreachableError(f"lost the connection to the catalog database, {self._where}: "
                                           f"{self._reason(exc)}")
        return PaimonEngineError(f"catalog database error ({self._where}): {self._reason(exc)}")

    # -- the catalog tables ------------------------------------------------------
    def _prepare(self):
        """Create the catalog tables that are missing; check the columns of those that exist. Never alters."""
        import sqlalchemy as sa

        def inspect(conn):
            insp = sa.inspect(conn)
            return {t: {c["name"].lower(): c for c in insp.get_columns(t)}
                    for t in _EXPECTED if insp.has_table(t)}

        found = self._run(inspect, write=False)
        self._check_columns(found)             # an existing table that differs: refused before any change
        missing = [t for t in _EXPECTED if t not in found]
        if missing:
            try:
                self._run(lambda conn: self._meta.create_all(
                    conn, tables=[self._meta.tables[t] for t in missing], checkfirst=True))
            except (PaimonEngineError, sa.exc.DBAPIError):
                pass          # another process created them at the same moment; the check below decides
            found = self._run(inspect, write=False)
            self._check_columns(found)
        for table in _EXPECTED:
            if table not in found:
                raise CatalogUnreachableError(f"could not create the catalog table {table} in {self._where}")
        self._has_type = "iceberg_type" in found["iceberg_tables"]

    def _check_columns(self, found):
        import sqlalchemy as sa
        for table, have in found.items():
            for column, required in _EXPECTED[table].items():
                if column not in have:
                    if required:
                        raise CatalogSchemaError(
                            f"catalog table {table} in {self._where} has no column {column}; it is not an "
                            f"Iceberg JDBC catalog table (nothing was changed)", table=table, column=column)
                    continue
                if not isinstance(have[column]["type"], sa.String):
                    raise CatalogSchemaError(
                        f"column {table}.{column} in {self._where} is {have[column]['type']}, expected a string "
                        f"type (nothing was changed)", table=table, column=column)

    def default_location(self, namespace, name) -> str:
        if not self.warehouse:
            raise InvalidArgumentError("SqlCatalog needs a warehouse (or an explicit table location)")
        return f"{self.warehouse}/{'.'.join(namespace)}.db/{name}"

    # -- namespaces ------------------------------------------------------------
    def _below(self, column, ns):
        """``column`` is ``ns`` or a namespace under it (compared by prefix, never as a LIKE pattern)."""
        import sqlalchemy as sa
        return sa.or_(column == ns, sa.func.substr(column, 1, len(ns) + 1) == ns + ".")

    def create_namespace(self, namespace, properties=None):
        import sqlalchemy as sa
        ns = ".".join(check_namespace(namespace))
        if len(ns.encode("utf-8")) > MAX_SQL_NAMESPACE_BYTES:
            raise InvalidIdentifierError(
                f"namespace {ns[:40]!r}... is {len(ns.encode('utf-8'))} bytes joined with dots; a SQL catalog "
                f"keeps at most {MAX_SQL_NAMESPACE_BYTES} (its tables live in the directory <namespace>.db)",
                part=ns, reason="too long")
        props = dict(properties or {}) or {"exists": "true"}
        p = self._p

        def work(conn):
            if self._namespace_exists(conn, ns):
                raise AlreadyExistsError(f"namespace {ns} exists already")
            conn.execute(sa.insert(p), [{"catalog_name": self.name, "namespace": ns, "property_key": str(k),
                                         "property_value": str(v)} for k, v in props.items()])
        try:
            self._run(work, serializable=True, confirm=lambda: self.namespace_exists(ns))
        except sa.exc.IntegrityError:
            raise AlreadyExistsError(f"namespace {ns} exists already") from None

    def _namespace_exists(self, conn, ns) -> bool:
        import sqlalchemy as sa
        p, t = self._p, self._t
        row = conn.execute(sa.select(sa.literal(1)).select_from(p).where(
            p.c.catalog_name == self.name, self._below(p.c.namespace, ns)).limit(1)).first()
        if row is not None:
            return True
        row = conn.execute(sa.select(sa.literal(1)).select_from(t).where(
            t.c.catalog_name == self.name, self._below(t.c.table_namespace, ns)).limit(1)).first()
        return row is not None

    def namespace_exists(self, namespace) -> bool:
        ns = ".".join(check_namespace(namespace))
        return self._run(lambda conn: self._namespace_exists(conn, ns), write=False)

    def list_namespaces(self):
        import sqlalchemy as sa
        p, t = self._p, self._t
        q = sa.union(sa.select(p.c.namespace).where(p.c.catalog_name == self.name),
                     sa.select(t.c.table_namespace).where(t.c.catalog_name == self.name))
        rows = self._run(lambda conn: conn.execute(q).fetchall(), write=False)
        return sorted(tuple(r[0].split(".")) for r in rows)

    def load_namespace_properties(self, namespace) -> dict:
        import sqlalchemy as sa
        ns = ".".join(check_namespace(namespace))
        p = self._p
        rows = self._run(lambda conn: conn.execute(sa.select(p.c.property_key, p.c.property_value).where(
            p.c.catalog_name == self.name, p.c.namespace == ns)).fetchall(), write=False)
        if not rows and not self.namespace_exists(ns):
            raise NotFoundError(f"namespace {ns} does not exist")
        return {k: v for k, v in rows}

    def update_namespace_properties(self, namespace, removals=(), updates=None) -> dict:
        """Remove and set namespace properties in one transaction -> ``{"updated", "removed", "missing"}``. A
        namespace whose last property is removed stays (it keeps the ``exists`` marker)."""
        import sqlalchemy as sa
        ns = ".".join(check_namespace(namespace))
        updates = {str(k): str(v) for k, v in (updates or {}).items()}
        removals = set(removals or ())
        p = self._p

        def work(conn):
            rows = dict(conn.execute(sa.select(p.c.property_key, p.c.property_value).where(
                p.c.catalog_name == self.name, p.c.namespace == ns)).fetchall())
            if not rows and not self._namespace_exists(conn, ns):
                raise NotFoundError(f"namespace {ns} does not exist")
            removed = sorted(k for k in removals if k in rows)
            missing = sorted(k for k in removals if k not in rows)
            gone = set(removed) | set(updates)
            if gone:
                conn.execute(sa.delete(p).where(p.c.catalog_name == self.name, p.c.namespace == ns,
                                                p.c.property_key.in_(sorted(gone))))
            rows_left = set(rows) - gone
            new = dict(updates)
            if not rows_left and not new:
                new = {"exists": "true"}
            if new:
                conn.execute(sa.insert(p), [{"catalog_name": self.name, "namespace": ns, "property_key": k,
                                             "property_value": v} for k, v in new.items()])
            return {"updated": sorted(updates), "removed": removed, "missing": missing}
        return self._run(work, serializable=True)

    def drop_namespace(self, namespace):
        """Drop an empty namespace; a table in it or in any namespace below it, or a namespace below it, raises
        NamespaceNotEmptyError. Only catalog rows are deleted, never files."""
        import sqlalchemy as sa
        ns = ".".join(check_namespace(namespace))
        p, t = self._p, self._t

        def work(conn):
            table = conn.execute(sa.select(t.c.table_namespace, t.c.table_name).where(
                t.c.catalog_name == self.name, self._below(t.c.table_namespace, ns)).limit(1)).first()
            if table is not None:
                raise NamespaceNotEmptyError(f"namespace {ns} is not empty: it holds table {table[0]}.{table[1]}")
            child = conn.execute(sa.select(p.c.namespace).where(
                p.c.catalog_name == self.name, p.c.namespace != ns,
                sa.func.substr(p.c.namespace, 1, len(ns) + 1) == ns + ".").limit(1)).first()
            if child is not None:
                raise NamespaceNotEmptyError(f"namespace {ns} is not empty: it holds namespace {child[0]}")
            cur = conn.execute(sa.delete(p).where(p.c.catalog_name == self.name, p.c.namespace == ns))
            if cur.rowcount == 0:
                raise NotFoundError(f"namespace {ns} does not exist")
        self._run(work, serializable=True, confirm=lambda: not self.namespace_exists(ns))

    # -- tables ----------------------------------------------------------------
    def _is_table(self):
        import sqlalchemy as sa
        if not self._has_type:
            return sa.true()
        return sa.or_(self._t.c.iceberg_type == "TABLE", self._t.c.iceberg_type.is_(None))

    def list_tables(self, namespace):
        import sqlalchemy as sa
        ns = ".".join(check_namespace(namespace))
        t = self._t
        rows = self._run(lambda conn: conn.execute(sa.select(t.c.table_name).where(
            t.c.catalog_name == self.name, t.c.table_namespace == ns, self._is_table())).fetchall(), write=False)
        return sorted(tuple(ns.split(".")) + (r[0],) for r in rows)

    def _current_location(self, ns, name):
        import sqlalchemy as sa
        t = self._t
        row = self._run(lambda conn: conn.execute(sa.select(t.c.metadata_location).where(
            t.c.catalog_name == self.name, t.c.table_namespace == ns, t.c.table_name == name,
            self._is_table())).first(), write=False)
        return None if row is None else row[0]

    def _location_of(self, namespace, name):
        ns = ".".join(namespace)
        loc = self._current_location(ns, name)
        if loc is None:
            raise NotFoundError(f"table {ns}.{name} does not exist in catalog {self.name!r}")
        return loc

    def _load_metadata(self, namespace, name):
        loc = self._location_of(namespace, name)
        md = parse_metadata(self.io.read_bytes(loc), loc)
        md.metadata_location = loc
        return md

    def _new_metadata_path(self, location, version):
        return f"{location}/metadata/{version:05d}-{uuid.uuid4()}.metadata.json"

    def _table_directories(self):
        """(identifier, table directory) of every table in this catalog (the directory above ``metadata/``)."""
        import sqlalchemy as sa
        t = self._t
        rows = self._run(lambda conn: conn.execute(sa.select(
            t.c.table_namespace, t.c.table_name, t.c.metadata_location).where(
            t.c.catalog_name == self.name, t.c.metadata_location.is_not(None))).fetchall(), write=False)
        return [(f"{r[0]}.{r[1]}", normalize_location(r[2]).rsplit("/", 2)[0]) for r in rows]

    def _create(self, namespace, name, md):
        import sqlalchemy as sa
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
        row = {"catalog_name": self.name, "table_namespace": ns, "table_name": name, "metadata_location": path,
               "previous_metadata_location": None}
        if self._has_type:
            row["iceberg_type"] = "TABLE"
        try:
            self._run(lambda conn: conn.execute(sa.insert(self._t), [row]),
                      confirm=lambda: self._current_location(ns, name) == path)
        except sa.exc.IntegrityError:
            self.io.delete(path)
            raise AlreadyExistsError(f"table {ns}.{name} exists already") from None
        md.metadata_location = path
        return md

    def commit(self, identifier, base, new):
        namespace, name = parse_identifier(identifier)
        ns = ".".join(namespace)
        check_deletable_root(self.io, new.location, self.warehouse, f"commit to table {ns}.{name} (its metadata "
                                                                    f"names this location)")
        version = metadata_file_version(base.metadata_location) + 1
        path = self._new_metadata_path(new.location, version)
        dropped = _append_metadata_log(new, base)
        self.io.write_bytes(path, self._write_new_metadata(path, new))
        swap = {"b_catalog": self.name, "b_namespace": ns, "b_name": name, "b_base": base.metadata_location,
                "b_new": path}
        try:
            ok = self._run(lambda conn: conn.execute(self._swap, swap).rowcount == 1,
                           confirm=lambda: self._current_location(ns, name) == path)
        except CommitStateUnknownError:
            raise             # the new metadata file stays: the catalog may point at it
        except BaseException:
            self.io.delete(path)
            raise
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
        import sqlalchemy as sa
        namespace, name = parse_identifier(identifier)
        ns = ".".join(namespace)
        full = ".".join(namespace + (name,))
        files = []
        if purge:
            from ..table.table import Table
            md = self._load_metadata(namespace, name)
            table = Table(namespace + (name,), md, self.io, self)
            files = table._referenced_files(md)
            check_deletable_root(self.io, md.location, self.warehouse, f"purge table {full}")
            check_within(self.io, files, md.location, f"purge table {full}")
        t = self._t
        deleted = self._run(lambda conn: conn.execute(sa.delete(t).where(
            t.c.catalog_name == self.name, t.c.table_namespace == ns, t.c.table_name == name)).rowcount,
            confirm=lambda: self._current_location(ns, name) is None)
        if deleted == 0:
            raise NotFoundError(f"table {full} does not exist")
        for path in sorted(files, key=lambda p: p.endswith(".metadata.json")):   # metadata files last
            try:
                self.io.delete(path)
            except OSError:
                pass

    def rename_table(self, from_identifier, to_identifier):
        import sqlalchemy as sa
        fns, fname = parse_identifier(from_identifier)
        tns, tname = parse_identifier(to_identifier)
        if not self.namespace_exists(".".join(tns)):
            raise NotFoundError(f"namespace {'.'.join(tns)} does not exist")
        t = self._t
        q = sa.update(t).where(t.c.catalog_name == self.name, t.c.table_namespace == ".".join(fns),
                               t.c.table_name == fname).values(table_namespace=".".join(tns), table_name=tname)
        try:
            renamed = self._run(lambda conn: conn.execute(q).rowcount,
                                confirm=lambda: self._current_location(".".join(fns), fname) is None)
        except sa.exc.IntegrityError:
            raise AlreadyExistsError(f"table {'.'.join(tns + (tname,))} exists already") from None
        if renamed == 0:
            raise NotFoundError(f"table {'.'.join(fns + (fname,))} does not exist")
        return self.load_table(tns + (tname,))

    def register_table(self, identifier, metadata_location: str):
        import sqlalchemy as sa
        namespace, name = parse_identifier(identifier)
        md = parse_metadata(self.io.read_bytes(metadata_location), metadata_location)
        try:
            check_deletable_root(self.io, md.location, self.warehouse, "register a table there")
        except UnsafeLocationError as exc:
            raise InvalidArgumentError(f"cannot register {metadata_location}: its table location "
                                       f"{md.location!r} cannot be owned by one table ({exc})") from None
        ns = ".".join(namespace)
        row = {"catalog_name": self.name, "table_namespace": ns, "table_name": name,
               "metadata_location": metadata_location}
        try:
            self._run(lambda conn: conn.execute(sa.insert(self._t), [row]),
                      confirm=lambda: self._current_location(ns, name) == metadata_location)
        except sa.exc.IntegrityError:
            raise AlreadyExistsError(f"table {'.'.join(namespace + (name,))} exists already") from None
        return self.load_table(identifier)
