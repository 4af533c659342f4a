"""The two value domains of ``spec.conversions.to_internal``: a value going into the table is made a value of
its type; a literal or file statistic compared with bounds while pruning keeps its exact value, so a comparison never
narrows the predicate. (Filter binding already refuses a literal its column cannot hold, e.g. 1.5 for an int
column; the pruning domain does not rely on it.)"""
import datetime as dt
import decimal
import uuid

import pytest

from paimon_engine import types as T
from paimon_engine.spec.conversions import from_bound_bytes, to_bytes, to_internal


def test_decimal_rounded_into_the_table_exact_for_pruning():
    t = T.DecimalType(9, 2)
    assert to_internal(t, decimal.Decimal("1.005")) == decimal.Decimal("1.00")   # half-even to the scale
    assert str(to_internal(t, 3)) == "3.00"
    assert to_internal(t, decimal.Decimal("1.005"), exact=True) == decimal.Decimal("1.005")
    assert str(to_internal(t, 3, exact=True)) == "3"


def test_integer_literal_keeps_its_fraction_for_pruning():
    assert to_internal(T.IntType(), 1.5) == 1
    assert to_internal(T.IntType(), 1.5, exact=True) == 1.5
    assert to_internal(T.BooleanType(), 1) is True
    assert to_internal(T.BooleanType(), 1, exact=True) == 1
    assert to_internal(T.VarBinaryType(), bytearray(b"ab")) == b"ab"


def test_date_from_a_datetime_only_when_writing():
    assert to_internal(T.DateType(), dt.datetime(1970, 1, 2, 13)) == 1
    with pytest.raises(TypeError):   # a datetime literal is not silently cut to its day while pruning
        to_internal(T.DateType(), dt.datetime(1970, 1, 2, 13), exact=True)


@pytest.mark.parametrize("exact", [False, True])
def test_shared_conversions_agree_in_both_domains(exact):
    u = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert to_internal(T.UuidType(), u, exact=exact) == u.bytes
    assert to_internal(T.UuidType(), str(u), exact=exact) == u.bytes
    assert to_internal(T.DateType(), dt.date(1970, 1, 11), exact=exact) == 10
    ts = T.TimestampType(6)
    assert to_internal(ts, dt.datetime(1970, 1, 1, 0, 0, 1), exact=exact) == 1_000_000
    assert to_internal(T.TimestampType(9), dt.datetime(1970, 1, 1, 0, 0, 1), exact=exact) == 1_000_000_000
    assert to_internal(T.DoubleType(), 2, exact=exact) == 2.0 and to_internal(T.IntType(), None, exact=exact) is None


def test_bound_written_then_decoded_compares_with_an_exact_literal():
    t = T.DecimalType(9, 2)
    bound = from_bound_bytes(t, to_bytes(t, to_internal(t, decimal.Decimal("1.00"))))
    assert bound < to_internal(t, decimal.Decimal("1.005"), exact=True)
