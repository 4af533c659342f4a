"""The Fory Java golden row: decoded by us, and reproduced byte for byte by our encoder."""

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine.formats import fory

SCHEMA = pa.schema([("f1", pa.int32()), ("f2", pa.string()), ("f3", pa.list_(pa.string())),
                    ("f4", pa.map_(pa.string(), pa.int32())),
                    ("f5", pa.struct([("f1", pa.int32()), ("f2", pa.string())]))])
EXPECTED = {"f1": 1, "f2": "str", "f3": ["str1", None, "str2"],
            "f4": [("k%d" % i, i) for i in range(1, 7)], "f5": {"f1": 1, "f2": "str"}}


@pytest.fixture(scope="module")
def golden(golden_dir):
    return (golden_dir / "java_foo_row.bin").read_bytes()


def test_decode_golden(golden):
    assert len(golden) == 304
    rb = fory.decode_rows(golden, np.array([0, len(golden)]), SCHEMA)
    assert rb.to_pylist() == [EXPECTED]
    assert fory.decode_row(golden, SCHEMA) == EXPECTED


def test_encode_reproduces_golden(golden):
    assert fory.encode_row(EXPECTED, SCHEMA) == golden
    buf, offsets = fory.encode_rows(pa.RecordBatch.from_pylist([EXPECTED, EXPECTED], schema=SCHEMA))
    assert offsets.tolist() == [0, 304, 608]
    assert bytes(buf) == golden * 2


def test_rowview_golden(golden):
    v = fory.RowView(golden, fory.ForySchema(SCHEMA))
    assert v.get_int32(0) == 1
    assert v["f2"] == "str" and v.get_string(1) == "str"
    arr = v.get_array(2)
    assert len(arr) == 3 and arr.is_null(1) and arr.get_string(2) == "str2"
    m = v.get_map("f4")
    assert m.to_dict() == {"k%d" % i: i for i in range(1, 7)}
    assert m.keys().get_string(5) == "k6" and m.values().get_int32(5) == 6
    st = v.get_struct(4)
    assert st.get_int32(0) == 1 and st["f2"] == "str"
    assert v.to_dict() == EXPECTED


def test_projection_golden(golden):
    rb = fory.decode_rows(golden, [0, len(golden)], SCHEMA, columns=["f4", "f1"])
    assert rb.schema.names == ["f4", "f1"]
    assert rb.to_pylist() == [{"f4": EXPECTED["f4"], "f1": 1}]
