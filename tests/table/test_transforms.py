import datetime
import decimal
import uuid

import numpy as np
import pyarrow as pa
import pytest

from paimon_engine import types as T
from paimon_engine.errors import InvalidArgumentError, UnsupportedTypeError
from paimon_engine.spec.conversions import from_bytes, to_bytes, to_internal, truncate_upper
from paimon_engine.spec.transforms import (BucketTransform, DayTransform, HourTransform, IdentityTransform,
                                            MonthTransform, TruncateTransform, VoidTransform, YearTransform,
                                            bucket_hash, murmur3_int64, parse_transform)

VECTORS = [
    (T.IntType(), 34, 2017239379),
    (T.BigIntType(), 34, 2017239379),
    (T.DecimalType(4, 2), decimal.Decimal("14.20"), -500754589),
    (T.DateType(), datetime.date(2017, 11, 16), -653330422),
    (T.TimeType(6), datetime.time(22, 31, 8), -662762989),
    (T.TimestampType(6), datetime.datetime(2017, 11, 16, 22, 31, 8), -2047944441),
    (T.TimestampType(6), datetime.datetime(2017, 11, 16, 22, 31, 8, 1), -1207196810),
    (T.LocalZonedTimestampType(6), datetime.datetime(2017, 11, 16, 22, 31, 8, tzinfo=datetime.timezone.utc),
     -2047944441),
    (T.STRING(), "iceberg", 1210000089),
    (T.UuidType(), uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), 1488055340),
    (T.BYTES(), bytes([0, 1, 2, 3]), -188683207),
    (T.BooleanType(), True, 1392991556),
    (T.DoubleType(), 1.0, -142385009),
    (T.FloatType(), 1.0, -142385009),
]


@pytest.mark.parametrize("dtype,value,expected", VECTORS, ids=[f"{v[0].to_paimon_string()}-{i}"
                                                               for i, v in enumerate(VECTORS)])
def test_bucket_hash_vectors(dtype, value, expected):
    assert bucket_hash(dtype, to_internal(dtype, value)) == expected


def test_vectorized_murmur_matches_mmh3():
    import mmh3
    rng = np.random.default_rng(7)
    vals = np.concatenate([rng.integers(-2**63, 2**63 - 1, 2000, dtype=np.int64), [0, -1, 34, 2**63 - 1]])
    got = murmur3_int64(vals)
    want = [mmh3.hash(int(v).to_bytes(8, "little", signed=True), 0, signed=True) for v in vals]
    assert got.tolist() == want


def test_bucket_apply_matches_scalar_all_int_like_types():
    b = BucketTransform(7)
    arr = pa.array([34, None, -5, 2**40], pa.int64())
    assert b.apply(T.BigIntType(), arr).to_pylist() == [None if v is None else b.apply_value(T.BigIntType(), v)
                                                        for v in arr.to_pylist()]
    dates = pa.array([datetime.date(2017, 11, 16), None], pa.date32())
    assert b.apply(T.DateType(), dates).to_pylist() == [(-653330422 & 0x7FFFFFFF) % 7, None]
    strs = pa.array(["iceberg", None])
    assert b.apply(T.STRING(), strs).to_pylist() == [(1210000089 & 0x7FFFFFFF) % 7, None]


def test_truncate():
    t = TruncateTransform(10)
    assert t.apply(T.IntType(), pa.array([1, -1, None, 10, 19], pa.int32())).to_pylist() == [0, -10, None, 10, 10]
    assert t.apply_value(T.BigIntType(), -1) == -10
    assert TruncateTransform(50).apply_value(T.DecimalType(9, 2), decimal.Decimal("10.65")) == decimal.Decimal("10.50")
    assert TruncateTransform(3).apply(T.STRING(), pa.array(["ééé€x", "ab", None])).to_pylist() == ["ééé", "ab",
                                                                                                   None]
    assert TruncateTransform(2).apply(T.BYTES(), pa.array([b"\x01\x02\x03"])).to_pylist() == [b"\x01\x02"]


def test_time_transforms_negative_and_strings():
    src = T.TimestampType(6)
    ts = pa.array([datetime.datetime(1969, 12, 31, 23, 59), datetime.datetime(2017, 11, 16, 22, 31, 8), None],
                  pa.timestamp("us"))
    assert YearTransform().apply(src, ts).to_pylist() == [-1, 47, None]
    assert MonthTransform().apply(src, ts).to_pylist() == [-1, 574, None]
    assert DayTransform().apply(src, ts).to_pylist() == [-1, 17486, None]
    assert HourTransform().apply(src, ts).to_pylist() == [-1, 419686, None]
    assert MonthTransform().human_string(src, 574) == "2017-11"
    assert DayTransform().human_string(src, 17486) == "2017-11-16"
    assert HourTransform().human_string(src, 419686) == "2017-11-16-22"
    assert YearTransform().human_string(src, 47) == "2017"
    assert DayTransform().result_type(T.DateType()) == T.DateType()
    assert YearTransform().apply(T.DateType(), pa.array([datetime.date(1969, 12, 31)])).to_pylist() == [-1]
    # millisecond arrays are converted to microseconds first
    ms = pa.array([datetime.datetime(2017, 11, 16, 22, 31, 8)], pa.timestamp("ms"))
    assert HourTransform().apply(src, ms).to_pylist() == [419686]


def test_parse_and_errors():
    assert parse_transform("bucket[16]") == BucketTransform(16)
    assert str(parse_transform(" truncate[ 4 ] ")) == "truncate[4]"
    for s in ("identity", "void", "year", "month", "day", "hour"):
        assert str(parse_transform(s)) == s
    for bad in ("bucket[0]", "bucket", "zorder", "truncate[-1]", 5):
        with pytest.raises(InvalidArgumentError):
            parse_transform(bad)
    with pytest.raises(UnsupportedTypeError):
        BucketTransform(4).result_type(T.DoubleType())
    with pytest.raises(UnsupportedTypeError):
        HourTransform().result_type(T.DateType())
    assert VoidTransform().apply(T.IntType(), pa.array([1, 2])).to_pylist() == [None, None]
    assert IdentityTransform().apply(T.DateType(), pa.array([datetime.date(1970, 1, 2)])).to_pylist() == [1]


def test_single_value_serialization_round_trip():
    cases = [(T.IntType(), 5), (T.BigIntType(), -2**40), (T.DoubleType(), 1.5), (T.FloatType(), 0.5),
             (T.STRING(), "héllo"), (T.BooleanType(), True), (T.DateType(), 17486),
             (T.DecimalType(9, 2), decimal.Decimal("-14.20")), (T.BYTES(), b"\x00\xff"),
             (T.UuidType(), uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7").bytes)]
    for t, v in cases:
        assert from_bytes(t, to_bytes(t, v)) == v
    assert to_bytes(T.DecimalType(9, 2), decimal.Decimal("14.20")) == (1420).to_bytes(2, "big")
    assert to_bytes(T.IntType(), 1) == b"\x01\x00\x00\x00"
    # int -> long promotion: 4-byte bounds still read
    assert from_bytes(T.BigIntType(), to_bytes(T.IntType(), -7)) == -7
    assert truncate_upper(T.STRING(), "a" * 20) == "a" * 15 + "b"
    assert truncate_upper(T.BYTES(), b"\xff" * 20) is None

