"""Our partition values equal pyiceberg's transforms of the same values, for every transform and source type."""
import datetime
import decimal
import uuid

import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.spec.transforms import parse_transform

pyi_transforms = pytest.importorskip("pyiceberg.transforms")
pyi_types = pytest.importorskip("pyiceberg.types")

VALUES = {
    "int": (T.IntType(), pa.int32(), [0, 1, -1, 34, 2**31 - 1, -2**31, None], pyi_types.IntegerType()),
    "long": (T.BigIntType(), pa.int64(), [0, -7, 2**40, -2**63, None], pyi_types.LongType()),
    "string": (T.STRING(), pa.string(), ["", "iceberg", "ß€😀x", None], pyi_types.StringType()),
    "binary": (T.BYTES(), pa.binary(), [b"", b"\x00\x01\x02\x03", None], pyi_types.BinaryType()),
    "decimal": (T.DecimalType(9, 2), pa.decimal128(9, 2),
                [decimal.Decimal("14.20"), decimal.Decimal("-0.01"), decimal.Decimal("1234567.89"), None],
                pyi_types.DecimalType(9, 2)),
    "date": (T.DateType(), pa.date32(), [datetime.date(2017, 11, 16), datetime.date(1969, 12, 31),
                                          datetime.date(1900, 2, 28), None], pyi_types.DateType()),
    "timestamp": (T.TimestampType(6), pa.timestamp("us"),
                  [datetime.datetime(2017, 11, 16, 22, 31, 8, 1), datetime.datetime(1969, 12, 31, 23, 59, 59),
                   datetime.datetime(1960, 1, 1, 0, 0, 0, 999999), None], pyi_types.TimestampType()),
    "timestamptz": (T.LocalZonedTimestampType(6), pa.timestamp("us", tz="UTC"),
                    [datetime.datetime(2017, 11, 16, 22, 31, 8, tzinfo=datetime.timezone.utc), None],
                    pyi_types.TimestamptzType()),
}

TRANSFORMS = {
    "identity": ["int", "long", "string", "binary", "decimal", "date", "timestamp", "timestamptz"],
    "bucket[16]": ["int", "long", "string", "binary", "decimal", "date", "timestamp", "timestamptz"],
    "truncate[10]": ["int", "long", "string", "binary", "decimal"],
    "year": ["date", "timestamp", "timestamptz"],
    "month": ["date", "timestamp", "timestamptz"],
    "day": ["date", "timestamp", "timestamptz"],
    "hour": ["timestamp", "timestamptz"],
    "void": ["int", "string"],
}

CASES = [(t, v) for t, vs in TRANSFORMS.items() for v in vs]


def _pyi_internal(ptype, v):
    """pyiceberg transforms take its internal representation (days, micros, unscaled...)."""
    from pyiceberg.utils.datetime import date_to_days, datetime_to_micros
    if v is None:
        return None
    if isinstance(v, datetime.datetime):
        return datetime_to_micros(v)
    if isinstance(v, datetime.date):
        return date_to_days(v)
    return v


@pytest.mark.parametrize("transform,kind", CASES, ids=[f"{t}-{k}" for t, k in CASES])
def test_partition_values_match_pyiceberg(transform, kind):
    dtype, atype, values, ptype = VALUES[kind]
    if transform.startswith("truncate") and kind in ("int", "long"):
        # pyiceberg leaves the int range there (Python ints); Java wraps around, as we do (checked below)
        values = [v for v in values if v not in (-2**31, -2**63)]
    ours = parse_transform(transform).apply(dtype, pa.array(values, atype)).to_pylist()
    pt = pyi_transforms.parse_transform(transform)
    fn = pt.transform(ptype)
    theirs = [fn(_pyi_internal(ptype, v)) for v in values]
    if transform == "identity":
        theirs = [_pyi_internal(ptype, v) for v in values]
    assert ours == theirs
    # scalar path agrees with the vectorized one
    from paimon_engine.spec.conversions import to_internal
    tr = parse_transform(transform)
    assert [None if v is None else tr.apply_value(dtype, to_internal(dtype, v)) for v in values] == ours


def test_truncate_of_minimum_wraps_like_java():
    tr = parse_transform("truncate[10]")
    assert tr.apply(T.IntType(), pa.array([-2**31], pa.int32())).to_pylist() == [2147483646]
    assert tr.apply_value(T.IntType(), -2**31) == 2147483646
    assert tr.apply(T.BigIntType(), pa.array([-2**63], pa.int64())).to_pylist() == [2**63 - 2]
    assert tr.apply_value(T.BigIntType(), -2**63) == 2**63 - 2
