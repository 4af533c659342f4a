import struct

import pytest
from hypothesis import given, settings, strategies as st

from paimon_engine import types as T
from paimon_engine.expressions import col, parse
from paimon_engine.scan.evaluators import (FileStats, InclusiveMetricsEvaluator, StrictMetricsEvaluator,
                                           SummaryStats, evaluate_row, residual_for)
from paimon_engine.spec.conversions import from_bound_bytes
from paimon_engine.errors import CorruptFileError

SCHEMA = T.RowType([
    T.DataField(1, "id", T.BigIntType()),
    T.DataField(2, "s", T.STRING()),
    T.DataField(3, "f", T.DoubleType()),
    T.DataField(4, "d", T.DateType()),
    T.DataField(5, "n", T.IntType()),
])


def L(v):
    return struct.pack("<q", v)


def stats(**kw):
    base = dict(record_count=10,
                value_counts={1: 10, 2: 10, 3: 10, 4: 10, 5: 10},
                null_counts={1: 0, 2: 2, 3: 0, 4: 0, 5: 10},
                nan_counts={3: 1},
                lower_bounds={1: L(10), 2: b"apple", 3: struct.pack("<d", 1.5), 4: struct.pack("<i", 100)},
                upper_bounds={1: L(20), 2: b"banana", 3: struct.pack("<d", 9.5), 4: struct.pack("<i", 200)})
    base.update(kw)
    return FileStats(**base)


def inc(text, s=None):
    return InclusiveMetricsEvaluator(parse(text).bind(SCHEMA)).eval(s or stats())


def strict(text, s=None):
    return StrictMetricsEvaluator(parse(text).bind(SCHEMA)).eval(s or stats())


@pytest.mark.parametrize("text,expected", [
    ("id < 10", False), ("id < 11", True), ("id <= 10", True), ("id <= 9", False),
    ("id > 20", False), ("id > 19", True), ("id >= 20", True), ("id >= 21", False),
    ("id = 5", False), ("id = 15", True), ("id = 25", False), ("id != 15", True),
    ("id in (1, 2, 25)", False), ("id in (1, 12)", True), ("id not in (10, 20)", True),
    ("s = 'cherry'", False), ("s = 'avocado'", True), ("s like 'c%'", False), ("s like 'b%'", True),
    ("s like 'a%'", True), ("s is null", True), ("s is not null", True),
    ("n is null", True), ("n is not null", False), ("n = 3", False),
    ("id is null", False), ("f > 10.0", False), ("f < 2.0", True),
    ("d < '1970-04-12'", True), ("d < '1970-04-11'", False), ("d > '1970-07-20'", False), ("d > '1970-07-19'", True),
    ("id < 5 or s = 'avocado'", True), ("id < 5 and s = 'avocado'", False), ("not id < 5", True),
    ("not (id >= 10)", False),
])
def test_inclusive(text, expected):
    assert inc(text) is expected


def test_inclusive_nan_and_empty():
    e = InclusiveMetricsEvaluator(col("f").is_nan().bind(SCHEMA))
    assert e.eval(stats()) is True
    assert e.eval(stats(nan_counts={3: 0})) is False
    assert InclusiveMetricsEvaluator(col("f").not_nan().bind(SCHEMA)).eval(stats(nan_counts={3: 10})) is False
    assert inc("id = 15", stats(record_count=0)) is False
    # missing statistics never prune
    assert inc("id = 99", FileStats(10)) is True
    # a NaN lower bound is unusable
    s = stats(lower_bounds={3: struct.pack("<d", float("nan"))})
    assert inc("f < 0.0", s) is True


def test_not_starts_with_inclusive():
    s = stats(null_counts={2: 0}, lower_bounds={2: b"abc"}, upper_bounds={2: b"abz"})
    assert inc("s not like 'ab%'", s) is False
    assert inc("s not like 'abc%'", s) is True


@pytest.mark.parametrize("text,expected", [
    ("id >= 10", True), ("id > 10", False), ("id <= 20", True), ("id < 20", False),
    ("id != 25", True), ("id != 15", False), ("id not in (1, 30)", True), ("id not in (1, 15)", False),
    ("id is not null", True), ("n is null", True), ("s is not null", False),
    ("s >= 'a'", False),  # nulls present
    ("f > 0.0", False),   # a NaN present
    ("id > 0 and d >= '1970-04-10'", True), ("id > 15 or id >= 10", True),
])
def test_strict(text, expected):
    assert strict(text) is expected


def test_strict_eq_and_in():
    s = stats(lower_bounds={1: L(7)}, upper_bounds={1: L(7)})
    assert strict("id = 7", s) is True
    assert strict("id in (7, 8)", s) is True
    assert strict("id = 8", s) is False


def test_residuals():
    f = parse("id >= 10 and s = 'avocado'").bind(SCHEMA)
    r = residual_for(f, stats())
    assert repr(r) == "s = 'avocado'"
    assert repr(residual_for(parse("id >= 10").bind(SCHEMA), stats())) == "true"
    assert repr(residual_for(parse("id > 50 or s = 'avocado'").bind(SCHEMA), stats())) == "s = 'avocado'"


def test_summary_stats():
    ss = SummaryStats({1000: {"contains_null": False, "contains_nan": False,
                              "lower_bound": L(10), "upper_bound": L(20)}})
    from paimon_engine.expressions import Predicate
    p = Predicate("eq", "p", 30, field_id=1000, type=T.BigIntType())
    assert InclusiveMetricsEvaluator(p).eval(ss) is False
    p = Predicate("eq", "p", 15, field_id=1000, type=T.BigIntType())
    assert InclusiveMetricsEvaluator(p).eval(ss) is True
    p = Predicate("is_null", "p", field_id=1000, type=T.BigIntType())
    assert InclusiveMetricsEvaluator(p).eval(ss) is False
    allnull = SummaryStats({1000: {"contains_null": True, "contains_nan": None,
                                   "lower_bound": None, "upper_bound": None}})
    p = Predicate("eq", "p", 15, field_id=1000, type=T.BigIntType())
    assert InclusiveMetricsEvaluator(p).eval(allnull) is False


def test_evaluate_row():
    f = parse("id > 5 and s is null").bind(SCHEMA)
    assert evaluate_row(f, {1: 6, 2: None}) is True
    assert evaluate_row(f, {1: 5, 2: None}) is False
    assert evaluate_row(parse("id != 5").bind(SCHEMA), {1: None}) is False
    import datetime
    assert evaluate_row(parse("d = '1970-01-02'").bind(SCHEMA), {4: 1}) is True
    assert evaluate_row(parse("d = '1970-01-02'").bind(SCHEMA), {4: datetime.date(1970, 1, 2)}) is True


def test_bound_decoding():
    assert from_bound_bytes(T.BigIntType(), struct.pack("<i", -3)) == -3  # promoted int
    assert from_bound_bytes(T.DoubleType(), struct.pack("<f", 1.5)) == 1.5
    assert str(from_bound_bytes(T.DecimalType(9, 2), (-1065).to_bytes(2, "big", signed=True))) == "-10.65"
    assert from_bound_bytes(T.STRING(), "é".encode()) == "é"
    for t, raw in [(T.IntType(), b"\x01\x02"), (T.BooleanType(), b""), (T.UuidType(), b"\x00" * 3),
                   (T.DecimalType(9, 2), b""), (T.FloatType(), b"\x00" * 8)]:
        with pytest.raises(CorruptFileError):
            from_bound_bytes(t, raw)


def _stats_of(fid, t, values):
    from paimon_engine.spec.conversions import to_bytes
    present = [v for v in values if v is not None]
    lo = {fid: to_bytes(t, min(present))} if present else {}
    hi = {fid: to_bytes(t, max(present))} if present else {}
    return FileStats(len(values), {fid: len(values)}, {fid: len(values) - len(present)}, {}, lo, hi)



@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-20, 20)), min_size=1, max_size=8),
       st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "is_null", "not_null"]),
       st.integers(-22, 22), st.lists(st.integers(-22, 22), min_size=1, max_size=3))
def test_metrics_evaluators_are_sound_on_random_files(values, op, lit, lits):
    from paimon_engine.expressions import Predicate
    t = T.BigIntType()
    p = Predicate(op, "id", lit if op not in ("in", "not_in", "is_null", "not_null") else None,
                  lits if op in ("in", "not_in") else None, field_id=1, type=t)
    s = _stats_of(1, t, values)

    def holds(v):
        if op == "is_null":
            return v is None
        if op == "not_null":
            return v is not None
        if v is None:
            return False
        if op == "in":
            return v in lits
        if op == "not_in":
            return v not in lits
        return {"eq": v == lit, "ne": v != lit, "lt": v < lit, "le": v <= lit, "gt": v > lit, "ge": v >= lit}[op]
    matches = [holds(v) for v in values]
    if any(matches):
        assert InclusiveMetricsEvaluator(p).eval(s)
    if StrictMetricsEvaluator(p).eval(s):
        assert all(matches)
    r = residual_for(p, s)
    if repr(r) == "true":
        assert all(matches)
    if repr(r) == "false":
        assert not any(matches)


def test_undecodable_string_bounds_never_prune():
    s = stats(lower_bounds={2: b"\xff\xfe"}, upper_bounds={2: b"a\xe2\x82"})
    assert inc("s = 'zzz'", s) is True
    assert strict("s >= 'a'", stats(null_counts={2: 0}, lower_bounds={2: b"\xff"}, upper_bounds={2: b"b"})) is False
