import os
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


def test_local_reads_at_any_offset(tmp_path):
    """A local input file reads by position: past the end gives the bytes there are, threads share it, a second
    close is harmless; a directory or a path under a file is not a readable file."""
    io = FileIO()
    payload = bytes(range(256)) * 4096
    (tmp_path / "f.bin").write_bytes(payload)
    f = io.open_input(str(tmp_path / "f.bin"))
    assert f.size == len(payload)
    assert f.read_at(len(payload) - 3, 10) == payload[-3:]
    assert f.read_at(len(payload), 5) == b""
    assert f.read_at(0, 0) == b""
    assert f.read_at(5, 1 << 62) == payload[5:]   # an absurd length reads what is there, allocating no more
    for off, n in ((-1, 4), (0, -1)):
        with pytest.raises(ValueError):
            f.read_at(off, n)
    results = {}

    def read(i):
        results[i] = [f.read_at(off, 1000) for off in range(i, len(payload), 7919)]

    threads = [threading.Thread(target=read, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, parts in results.items():
        assert parts == [payload[off:off + 1000] for off in range(i, len(payload), 7919)]
    f.close()
    f.close()
    with pytest.raises(IsADirectoryError, match="directory"):
        io.open_input(str(tmp_path))
    with pytest.raises(NotFoundError):
        io.open_input(str(tmp_path / "f.bin" / "inner"))


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


def test_local_paths_are_normalized_like_abspath():
    """A local location resolves to the path os.path.abspath gives, whether or not it is already normal."""
    import os
    from paimon_engine.io import _local_path
    io = FileIO()
    for p in ["/a/b.row", "/a//b", "/a/./b", "/a/../b", "/a/b/", "/.hidden/x", "/a/b/.", "/a/b/..", "/", "//a",
              "rel/x", "./x", "../x", "x", "/a/b..c/d", "/a/.b/c", "/a.b/c"]:
        assert _local_path(p) == os.path.abspath(p), p
        assert io.resolve(p)[1] == os.path.abspath(p), p
        assert io.resolve("file://" + p if p.startswith("/") else p)[1] == os.path.abspath(p), p


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="open descriptors are listed in /proc on Linux")
def test_a_local_input_file_dropped_without_close_gives_its_descriptor_back(tmp_path):
    """A reader dropped without close() (a .row file read by a scan, a file object given up on an error) does
    not keep its descriptor: the input file closes it when it is collected; closing twice is harmless."""
    from paimon_engine.io import FileIO
    p = tmp_path / "f.bin"
    p.write_bytes(b"abc")
    before = set(os.listdir("/proc/self/fd"))
    f = FileIO().open_input(str(p))
    assert len(set(os.listdir("/proc/self/fd")) - before) == 1 and f.read_at(1, 2) == b"bc"
    del f
    assert set(os.listdir("/proc/self/fd")) == before
    g = FileIO().open_input(str(p))
    g.close()
    g.close()
    del g
    assert set(os.listdir("/proc/self/fd")) == before
