import pytest
from tests.net import free_port as _free_port


@pytest.fixture(scope="session")
def s3_endpoint():
    """A real S3 endpoint served by moto on 127.0.0.1 (random free port), for the whole test run."""
    server_mod = pytest.importorskip("moto.server", reason="moto[server] is not installed (pip install -e .[test])")
    port = _free_port()
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture(scope="session")
def s3_properties(s3_endpoint):
    return {"s3.endpoint": s3_endpoint, "s3.access-key-id": "testing", "s3.secret-access-key": "testing",
            "s3.region": "us-east-1", "s3.allow-bucket-creation": "true"}


_counter = [0]


@pytest.fixture
def s3_bucket(s3_properties):
    """A fresh bucket per test: -> 's3://<name>'."""
    import pyarrow.fs as pafs
    _counter[0] += 1
    name = f"bucket-{_counter[0]}"
    from paimon_engine.io import FileIO
    fs, _ = FileIO(properties=s3_properties).resolve(f"s3://{name}/x")
    fs.create_dir(name)
    assert fs.get_file_info(name).type == pafs.FileType.Directory
    return f"s3://{name}"
