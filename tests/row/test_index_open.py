"""Opening a .row file decodes and checks its block index in one kernel call: every byte of a real index
changed to other values opens the same way with the compiled kernel and its twin (the same arrays, or the same
CorruptFileError), and nothing else is ever raised."""
import io
import os

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine import _speedups
from paimon_engine import types as T
from paimon_engine.errors import CorruptFileError, InvalidArgumentError
from paimon_engine.formats.row import RowFileReader, RowFileWriter
from paimon_engine.formats.row.footer import FOOTER_SIZE, Footer

SCHEMA = T.RowType.of(("id", T.BigIntType()), ("s", T.STRING()))


@pytest.fixture(scope="module")
def small_file():
    buf = io.BytesIO()
    n = 300
    with RowFileWriter(buf, SCHEMA, block_size=512) as w:
        w.write(pa.table({"id": np.arange(n, dtype=np.int64), "s": [f"v{i}" for i in range(n)]}))
    return buf.getvalue()


def _open(data, impl):
    saved = _speedups._loaded.get("rowindex")
    _speedups._loaded["rowindex"] = impl
    try:
        r = RowFileReader(io.BytesIO(data), SCHEMA)
        ix = r.index
        return ("ok", ix.compressed_sizes.tolist(), ix.uncompressed_sizes.tolist(), ix.row_starts.tolist(),
                ix.offsets.tolist())
    except CorruptFileError as e:
        return ("corrupt", e.reason, e.offset, e.block)
    finally:
        if saved is None:
            _speedups._loaded.pop("rowindex", None)
        else:
            _speedups._loaded["rowindex"] = saved


def test_every_index_byte_changed_opens_alike(small_file):
    compiled = None if _speedups.PURE_PYTHON else _speedups.compiled("rowindex")
    if compiled is None:
        pytest.skip("the compiled rowindex kernel is not built in this run")
    twin = _speedups.twin("rowindex")
    ft = Footer.parse(small_file[-FOOTER_SIZE:], len(small_file))
    assert ft.block_count > 5
    good = _open(small_file, compiled)
    assert good[0] == "ok" and good == _open(small_file, twin)
    outcomes = set()
    for at in range(ft.index_offset, ft.index_offset + ft.index_length):
        for value in (0x00, 0x01, 0x7F, 0x80, 0xFF, small_file[at] ^ 0x01):
            bad = bytearray(small_file)
            bad[at] = value
            got = _open(bytes(bad), compiled)
            assert got == _open(bytes(bad), twin), (at, value)
            outcomes.add(got[0] if got[0] == "ok" else got[1].split(":")[0])
    assert len(outcomes) > 5, outcomes  # the mutations reach many different checks


def _stepwise(data):
    """What the footer and index checks of Footer.parse and BlockIndex.parse give, one after the other (opening
    a file checks both in one kernel call)."""
    from paimon_engine.formats.row.footer import BlockIndex
    from paimon_engine.formats.row.reader import DEFAULT_MAX_BLOCK_SIZE
    try:
        ft = Footer.parse(data[-FOOTER_SIZE:], len(data))
        ix = BlockIndex.parse(data[ft.index_offset:ft.index_offset + ft.index_length], ft,
                              max_block_size=DEFAULT_MAX_BLOCK_SIZE)
        return ("ok", ix.compressed_sizes.tolist(), ix.uncompressed_sizes.tolist(), ix.row_starts.tolist(),
                ix.offsets.tolist())
    except CorruptFileError as e:
        return ("corrupt", e.reason, e.offset, e.block)


def test_every_footer_byte_changed_opens_as_the_stepwise_checks_say(small_file):
    """Each byte of the footer set to other values: opening (the compiled kernel and its twin) gives what the
    footer and index parsed one after the other give, the same arrays or the same error at the same offset."""
    impls = [_speedups.twin("rowindex")]
    if not _speedups.PURE_PYTHON and _speedups.compiled("rowindex") is not None:
        impls.append(_speedups.compiled("rowindex"))
    outcomes = set()
    size = len(small_file)
    for at in range(size - FOOTER_SIZE, size):
        for value in (0x00, 0x01, 0x7F, 0x80, 0xFF, small_file[at] ^ 0x01, small_file[at] ^ 0x40):
            bad = bytearray(small_file)
            bad[at] = value
            want = _stepwise(bytes(bad))
            for impl in impls:
                assert _open(bytes(bad), impl) == want, (at, value, impl.__name__)
            outcomes.add(want[0] if want[0] == "ok" else want[1].split(" ")[0])
    assert len(outcomes) > 4, outcomes


def test_index_bytes_changed_open_as_the_stepwise_checks_say(small_file):
    ft = Footer.parse(small_file[-FOOTER_SIZE:], len(small_file))
    twin = _speedups.twin("rowindex")
    for at in range(ft.index_offset, ft.index_offset + ft.index_length, 3):
        for value in (0x00, 0x80, 0xFF, small_file[at] ^ 0x01):
            bad = bytearray(small_file)
            bad[at] = value
            assert _open(bytes(bad), twin) == _stepwise(bytes(bad)), (at, value)


def test_index_longer_than_the_first_read(tmp_path):
    """An index that starts before the tail the first read takes (thousands of blocks) is read on its own:
    the reader opens such a file and finds every row as a full read does."""
    from paimon_engine.formats.row.reader import TAIL_READ
    n = 30_000
    path = str(tmp_path / "many.row")
    with RowFileWriter(path, SCHEMA, block_size=64) as w:
        w.write(pa.table({"id": np.arange(n, dtype=np.int64), "s": [f"v{i}" for i in range(n)]}))
    with RowFileReader(path, SCHEMA) as r:
        assert r.footer.index_length > TAIL_READ
        assert r.index.block_count == r.num_blocks > 3000
        rows = r.read_all().to_arrow().to_pylist()
        for i in (0, 1, 63, 4999, 12345, n - 2, n - 1):
            assert r.get_row(i) == rows[i] == {"id": i, "s": f"v{i}"}
        assert r.blocks_read >= 7


def _open_fds():
    return set(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="open descriptors are listed in /proc on Linux")
def test_a_file_that_fails_to_open_is_closed(small_file, tmp_path):
    """A location whose footer or index is broken raises CorruptFileError and leaves no descriptor open; a
    good file's reader holds one until it is closed."""
    good = tmp_path / "good.row"
    good.write_bytes(small_file)
    broken = {"magic.row": small_file[:-1] + b"\0", "index.row": small_file[:-FOOTER_SIZE - 2] + b"\xff\xff"
              + small_file[-FOOTER_SIZE:], "short.row": small_file[:20]}
    before = _open_fds()
    for name, data in broken.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(CorruptFileError):
            RowFileReader(str(tmp_path / name), SCHEMA)
        assert _open_fds() == before, name
    r = RowFileReader(str(good), SCHEMA)
    assert len(_open_fds() - before) == 1
    r.close()
    assert _open_fds() == before


def test_a_given_file_stays_open_when_opening_fails(small_file):
    """A file object or a pyarrow input file given by the caller is the caller's: a reader that fails to open it
    leaves it open, as a reader that opened it does."""
    for source in (io.BytesIO(small_file[:-1] + b"\0"), pa.BufferReader(small_file[:-1] + b"\0")):
        with pytest.raises(CorruptFileError):
            RowFileReader(source, SCHEMA)
        assert not source.closed


def test_every_kind_of_source_reads_alike(small_file, tmp_path):
    """A location (plain, relative, ``file:`` URI, with ``//`` or ``/./`` in it), a binary file object and a
    pyarrow input file give the same rows; a given file object stays open after the reader closes."""
    import pyarrow.fs as pafs
    path = tmp_path / "f.row"
    path.write_bytes(small_file)
    want = RowFileReader(io.BytesIO(small_file), SCHEMA).read_all().to_pylist()
    rel = os.path.relpath(path)
    odd = str(tmp_path) + "//./f.row"
    for src in (str(path), rel, "file://" + str(path), odd):
        with RowFileReader(src, SCHEMA) as r:
            assert r.path == src
            assert r.read_all().to_pylist() == want
            assert r.get_row(7) == want[7]
    with open(path, "rb") as f:
        with RowFileReader(f, SCHEMA) as r:
            assert r.read_all().to_pylist() == want
            assert r.path == str(path)
        assert not f.closed
    arrow_file = pafs.LocalFileSystem().open_input_file(str(path))
    with RowFileReader(arrow_file, SCHEMA) as r:
        assert r.read_all().to_pylist() == want
    assert not arrow_file.closed
    with pytest.raises(InvalidArgumentError):
        RowFileReader(12, SCHEMA)
    with pytest.raises(InvalidArgumentError):
        RowFileReader(str(path), "not a schema")
