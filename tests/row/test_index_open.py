"""Opening a .row file decodes and checks its block index in one kernel call: every byte of a real index
changed to other values opens the same way with the compiled kernel and its twin (the same arrays, or the same
CorruptFileError), and nothing else is ever raised."""
import io

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine import _speedups
from paimon_engine import types as T
from paimon_engine.errors import CorruptFileError
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
