"""A throwaway PostgreSQL server for the catalog tests.

``initdb`` and ``pg_ctl`` (PostgreSQL 15 or newer) must be on PATH. The server lives in a fresh temporary
directory, listens on a free loopback port (its unix socket stays in that directory) and is stopped and removed at
the end of the session. PostgreSQL refuses to run as root, so under root the server runs as the ``postgres`` system
user when there is one, else as ``nobody``.

``PAIMON_ENGINE_TEST_PG_URI`` names an existing server instead (``postgresql+psycopg://user:pw@host:port/db``;
the user must be allowed to create databases). When neither is available the tests that need PostgreSQL fail
with a message saying what to install; they are not skipped.
"""
from __future__ import annotations

import itertools
import os
import pwd
import shutil
import subprocess
import tempfile

import pytest
from tests.net import free_port as _free_port

PG_URI_ENV = "PAIMON_ENGINE_TEST_PG_URI"
_DB_COUNTER = itertools.count()
PG_CATALOG_ENV = "PAIMON_ENGINE_TEST_PG_CATALOG"   # the database of the running kind="pg" test


def _run_as():
    """(user name, preexec function) to run the server as: the current user, or a system user under root."""
    if os.geteuid() != 0:
        return None, None
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue

        def demote(uid=entry.pw_uid, gid=entry.pw_gid):
            os.setgid(gid)
            os.setuid(uid)
        return entry, demote
    raise RuntimeError("running as root and neither a 'postgres' nor a 'nobody' user exists to run PostgreSQL")


class PostgresServer:
    """A running server: ``admin_uri`` reaches its ``postgres`` database; :meth:`new_database` makes a fresh one."""

    def __init__(self, host, port, user, password=None, admin_db="postgres"):
        self.host, self.port, self.user, self.password, self.admin_db = host, port, user, password, admin_db

    def uri(self, db):
        auth = self.user if self.password is None else f"{self.user}:{self.password}"
        return f"postgresql+psycopg://{auth}@{self.host}:{self.port}/{db}"

    @property
    def admin_uri(self):
        return self.uri(self.admin_db)

    def new_database(self) -> str:
        """Create an empty database and return its SQLAlchemy URL."""
        import psycopg
        name = f"t_{os.getpid()}_{next(_DB_COUNTER)}"
        with psycopg.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                             dbname=self.admin_db, autocommit=True, connect_timeout=10) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.uri(name)


def _pg_tool(tool):
    """``tool`` on PATH, else in the newest Debian-style ``/usr/lib/postgresql/<version>/bin``."""
    found = shutil.which(tool)
    if found:
        return found
    import glob
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{tool}"),
                        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return candidates[-1] if candidates else None


def _start_local_server():
    tools = {}
    for tool in ("initdb", "pg_ctl"):
        tools[tool] = _pg_tool(tool)
        if tools[tool] is None:
            pytest.fail(f"PostgreSQL is needed by the SQL catalog tests: {tool!r} is not on PATH nor in "
                        f"/usr/lib/postgresql/*/bin. Install the PostgreSQL server (make test does it with "
                        f"apt-get when it runs as root) or set {PG_URI_ENV} to a server the tests may create "
                        f"databases on.", pytrace=False)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.fail("the SQL catalog tests need psycopg: pip install -e '.[test]'", pytrace=False)
    entry, demote = _run_as()
    root = tempfile.mkdtemp(prefix="paimon-engine-pg-")
    os.chmod(root, 0o755)
    data, sock = os.path.join(root, "data"), os.path.join(root, "sock")
    os.mkdir(sock)
    if entry is not None:
        os.chown(root, entry.pw_uid, entry.pw_gid)
        os.chown(sock, entry.pw_uid, entry.pw_gid)
    user = "paimon"
    port = _free_port()
    env = dict(os.environ, LC_ALL="C", LANG="C")
    kw = dict(env=env, preexec_fn=demote, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    res = subprocess.run([tools["initdb"], "-D", data, "-U", user, "--auth=trust", "-E", "UTF8", "--no-sync"],
                         timeout=120, **kw)
    if res.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"initdb failed:\n{res.stdout.decode(errors='replace')}", pytrace=False)
    opts = f"-c listen_addresses=127.0.0.1 -p {port} -k {sock} -c fsync=off -c max_connections=200"
    res = subprocess.run([tools["pg_ctl"], "-D", data, "-l", os.path.join(root, "server.log"), "-o", opts, "-w",
                          "-t", "60", "start"], timeout=120, **kw)
    if res.returncode != 0:
        log = ""
        try:
            with open(os.path.join(root, "server.log"), errors="replace") as f:
                log = f.read()[-4000:]
        except OSError:
            pass
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"pg_ctl start failed:\n{res.stdout.decode(errors='replace')}\n{log}", pytrace=False)

    def stop():
        subprocess.run([tools["pg_ctl"], "-D", data, "-m", "immediate", "-w", "stop"], timeout=120, **kw)
        shutil.rmtree(root, ignore_errors=True)
    return PostgresServer("127.0.0.1", port, user), stop


def _server_from_env(uri):
    from sqlalchemy.engine import make_url
    url = make_url(uri)
    return PostgresServer(url.host or "127.0.0.1", url.port or 5432, url.username, url.password,
                          url.database or "postgres")


@pytest.fixture(scope="session")
def pg_server():
    uri = os.environ.get(PG_URI_ENV)
    if uri:
        yield _server_from_env(uri)
        return
    server, stop = _start_local_server()
    try:
        yield server
    finally:
        stop()


@pytest.fixture
def pg_uri(pg_server):
    """A fresh, empty PostgreSQL database for one test (SQLAlchemy URL)."""
    return pg_server.new_database()


def sql_catalog_uri(kind, root) -> str:
    """The catalog uri of a test parametrized on ``kind``: a SQLite file in ``root`` for ``"sql"``, for ``"pg"``
    the fresh PostgreSQL database the fixture below made for this test (passed in the environment, so the test's
    worker processes find it too)."""
    if kind == "pg":
        uri = os.environ.get(PG_CATALOG_ENV)
        if not uri:
            raise RuntimeError(f"{PG_CATALOG_ENV} is not set: a kind='pg' test runs under the fixture in "
                               f"tests/table/pg_fixture.py")
        return uri
    return f"sqlite:///{root}/cat.db"


@pytest.fixture(autouse=True)
def _pg_database_for_pg_kind(request, monkeypatch):
    """A test parametrized with ``kind="pg"`` gets a fresh PostgreSQL database."""
    callspec = getattr(request.node, "callspec", None)
    if callspec is not None and callspec.params.get("kind") == "pg":
        monkeypatch.setenv(PG_CATALOG_ENV, request.getfixturevalue("pg_uri"))
