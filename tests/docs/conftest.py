import pytest

from tests.net import free_port as _free_port


@pytest.fixture(scope="session")
def docs_s3_endpoint():
    """moto's S3 server on 127.0.0.1 at a free port, for the pages with ```python s3 blocks."""
    from moto.server import ThreadedMotoServer
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


from tests.table.pg_fixture import pg_server, pg_uri  # noqa: E402,F401  (PostgreSQL for ```python postgres pages)
