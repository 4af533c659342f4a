import threading

import pytest

from paimon_engine.errors import AlreadyExistsError, NotFoundError
from paimon_engine.io import FileIO, normalize_location


def test_normalize_location():
    assert normalize_location("file:/tmp/x") == "/tmp/x"
    assert normalize_location("file:///tmp/x") == "/tmp/x"
    assert normalize_location("/tmp/x") == "/tmp/x"
    assert normalize_location("s3://b/k") == "s3://b/k"


def test_roundtrip_and_ranges(tmp_path):
    io = FileIO()
    loc = f"file://{tmp_path}/a/b/c.bin"
    io.write_bytes(loc, b"0123456789")
    assert io.exists(loc) and io.size(loc) == 10
    with io.open_input(str(tmp_path / "a/b/c.bin")) as f:
        assert f.read_at(3, 4) == b"3456"
        assert f.read_all() == b"0123456789"
    assert [i.path.endswith("c.bin") for i in io.list(str(tmp_path))] == [True]
    assert io.delete(loc) and not io.delete(loc)
    with pytest.raises(NotFoundError):
        io.open_input(loc)
    assert io.list(str(tmp_path / "nope")) == []


def test_create_exclusive_is_atomic_and_exclusive(tmp_path):
    io = FileIO()
    target = str(tmp_path / "meta" / "v2.metadata.json")
    wins, losses = [], []

    def attempt(i):
        try:
            io.create_exclusive(target, b"writer %d" % i)
            wins.append(i)
        except AlreadyExistsError:
            losses.append(i)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1 and len(losses) == 7
    assert io.read_bytes(target) == b"writer %d" % wins[0]
    assert sorted(p.name for p in (tmp_path / "meta").iterdir()) == ["v2.metadata.json"]
