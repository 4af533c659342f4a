"""Valid .row dates and timestamps outside datetime's years 1..9999: Arrow reads return them as stored, the
Python-object read (get_row) raises ValueOutOfRangeError naming the field and the stored value."""
import io

import pyarrow as pa
import pytest

from paimon_engine.errors import CorruptFileError, ValueOutOfRangeError
from paimon_engine.formats.row import RowFileReader, RowFileWriter

from .util import schema_of

YEAR_10000_US = 253402300800 * 1_000_000          # 10000-01-01T00:00:00
YEAR_0_US = -62135596800 * 1_000_000 - 86400 * 1_000_000 * 366   # a day inside year 0
YEAR_10000_DAYS = 2932897                          # 10000-01-01
BEFORE_YEAR_1_DAYS = -719163                       # 0000-12-31


def _file(schema, table):
    buf = io.BytesIO()
    with RowFileWriter(buf, schema) as w:
        w.write(table)
    return buf.getvalue()


@pytest.mark.parametrize("paimon_type, arrow_type, raw", [
    ("TIMESTAMP(6)", pa.timestamp("us"), YEAR_10000_US),
    ("TIMESTAMP(6)", pa.timestamp("us"), YEAR_0_US),
    ("TIMESTAMP(3)", pa.timestamp("ms"), YEAR_10000_US // 1000),
    ("TIMESTAMP_LTZ(6)", pa.timestamp("us", tz="UTC"), YEAR_10000_US),
    ("DATE", pa.date32(), YEAR_10000_DAYS),
    ("DATE", pa.date32(), BEFORE_YEAR_1_DAYS),
])
def test_arrow_reads_return_the_value_get_row_raises(paimon_type, arrow_type, raw):
    schema = schema_of([("id", "INT"), ("v", paimon_type)])
    stored = pa.array([0, raw], pa.int64()).cast(pa.int32() if arrow_type == pa.date32() else pa.int64())
    table = pa.table({"id": pa.array([1, 2], pa.int32()), "v": stored.view(arrow_type)})
    data = _file(schema, table)
    r = RowFileReader(io.BytesIO(data), schema)
    got = r.to_arrow()
    got.validate(full=True)
    storage = got.column("v").combine_chunks().view(pa.int32() if arrow_type == pa.date32() else pa.int64())
    assert storage.to_pylist() == [0, raw]
    assert r.get_row(0)["v"] is not None          # the epoch converts
    with pytest.raises(ValueOutOfRangeError) as ei:
        r.get_row(1)
    err = ei.value
    assert isinstance(err, ValueError) and not isinstance(err, CorruptFileError)
    assert err.field == "v" and err.value == raw and err.path == r.path
    assert "v" in str(err) and str(raw) in str(err)
