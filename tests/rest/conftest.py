"""A REST catalog server over a fresh SQLite catalog, in a thread on a free loopback port."""
import pytest

pytest.importorskip("starlette", reason="the rest extra (starlette, uvicorn) is part of the test extra")
pytest.importorskip("uvicorn", reason="the rest extra (starlette, uvicorn) is part of the test extra")

from paimon_engine.rest.server import RestServer  # noqa: E402
from paimon_engine.catalog import SqlCatalog  # noqa: E402

TOKEN = "test-token-1"


@pytest.fixture
def backing(tmp_path):
    """The catalog behind the server, also used directly to check what the server did."""
    return SqlCatalog("srv", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"{tmp_path}/warehouse")


@pytest.fixture
def server(backing):
    with RestServer(backing) as srv:
        yield srv


@pytest.fixture
def token_server(backing):
    with RestServer(backing, token=TOKEN) as srv:
        yield srv
