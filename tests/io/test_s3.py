"""FileIO against a real S3 endpoint (moto's server on 127.0.0.1)."""

import pytest

from paimon_engine.errors import NotFoundError
from paimon_engine.io import FileIO


def test_write_read_ranges_list_delete(s3_properties, s3_bucket):
    io = FileIO(properties=s3_properties)
    loc = f"{s3_bucket}/dir/a/b.bin"
    payload = bytes(range(256)) * 100
    io.write_bytes(loc, payload)
    assert io.exists(loc)
    assert io.size(loc) == len(payload)
    assert io.read_bytes(loc) == payload
    with io.open_input(loc) as f:
        assert f.size == len(payload)
        assert f.read_at(0, 10) == payload[:10]
        assert f.read_at(1000, 300) == payload[1000:1300]
        assert f.read_at(len(payload) - 5, 5) == payload[-5:]
    io.write_bytes(f"{s3_bucket}/dir/c.bin", b"c")
    names = sorted(i.path.rsplit("/", 1)[1] for i in io.list(f"{s3_bucket}/dir"))
    assert names == ["b.bin", "c.bin"]
    assert [i.path.rsplit("/", 1)[1] for i in io.list(f"{s3_bucket}/dir", recursive=False)] == ["c.bin"]
    assert io.delete(loc)
    assert not io.exists(loc)
    assert not io.delete(loc)
    with pytest.raises(NotFoundError):
        io.open_input(loc)
    with pytest.raises(NotFoundError):
        io.size(loc)
    assert io.list(f"{s3_bucket}/nothing-here") == []


def test_overwrite_and_empty_file(s3_properties, s3_bucket):
    io = FileIO(properties=s3_properties)
    loc = f"{s3_bucket}/x.bin"
    io.write_bytes(loc, b"first")
    io.write_bytes(loc, b"second!")
    assert io.read_bytes(loc) == b"second!"
    io.write_bytes(f"{s3_bucket}/empty", b"")
    assert io.size(f"{s3_bucket}/empty") == 0
    assert io.read_bytes(f"{s3_bucket}/empty") == b""


def test_not_local_and_no_exclusive_create(s3_properties, s3_bucket):
    io = FileIO(properties=s3_properties)
    assert not io.is_local(f"{s3_bucket}/m.json")
    with pytest.raises(NotImplementedError):
        io.create_exclusive(f"{s3_bucket}/m.json", b"{}")


def test_fileio_pickles_with_its_settings(s3_properties, s3_bucket):
    import pickle
    io = FileIO(properties=s3_properties)
    io.write_bytes(f"{s3_bucket}/p.bin", b"pickled")
    io2 = pickle.loads(pickle.dumps(io))
    assert io2.read_bytes(f"{s3_bucket}/p.bin") == b"pickled"
