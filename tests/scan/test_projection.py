"""Inclusive projection is sound: whenever a value satisfies a predicate, its partition value satisfies the
projected predicate (so partition pruning never drops a matching row)."""
import datetime

from hypothesis import given, settings, strategies as st

from paimon_engine import types as T
from paimon_engine.expressions import Predicate
from paimon_engine.spec.conversions import to_internal
from paimon_engine.scan.evaluators import evaluate_row
from paimon_engine.scan.projection import PartitionFieldInfo, project
from paimon_engine.spec.transforms import parse_transform

CASES = [
    (T.BigIntType(), st.integers(-1000, 1000), ["identity", "bucket[7]", "truncate[10]"]),
    (T.IntType(), st.integers(-1000, 1000), ["identity", "bucket[3]", "truncate[4]"]),
    (T.STRING(), st.text(alphabet="abcé", max_size=5), ["identity", "bucket[5]", "truncate[2]"]),
    (T.DateType(), st.dates(datetime.date(1960, 1, 1), datetime.date(2030, 1, 1)),
     ["identity", "year", "month", "day", "bucket[4]"]),
    (T.TimestampType(6), st.datetimes(datetime.datetime(1960, 1, 1), datetime.datetime(2030, 1, 1)),
     ["identity", "year", "month", "day", "hour", "bucket[4]"]),
]
OPS = ["eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "is_null", "not_null"]


def _holds(op, v, lit, lits):
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
    if op == "starts_with":
        return v.startswith(lit)
    return {"eq": lambda: v == lit, "ne": lambda: v != lit, "lt": lambda: v < lit, "le": lambda: v <= lit,
            "gt": lambda: v > lit, "ge": lambda: v >= lit}[op]()


def _near(lit, d):
    if isinstance(lit, bool):
        return lit
    if isinstance(lit, int):
        return lit + d
    if isinstance(lit, datetime.datetime):
        return lit + datetime.timedelta(microseconds=d) if d % 2 else lit + datetime.timedelta(hours=d)
    if isinstance(lit, datetime.date):
        return lit + datetime.timedelta(days=d)
    if isinstance(lit, str):
        return lit + "abc"[: abs(d)] if d >= 0 else lit[:d]
    return lit


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(range(len(CASES))), st.data())
def test_inclusive_projection_is_sound(case, data):
    t, values, transforms = CASES[case]
    tr = parse_transform(data.draw(st.sampled_from(transforms)))
    ops = OPS + (["starts_with"] if isinstance(t, T.VarCharType) else [])
    op = data.draw(st.sampled_from(ops))
    v = data.draw(st.one_of(st.none(), values))
    lit = data.draw(values) if op not in ("is_null", "not_null", "in", "not_in") else None
    if op == "starts_with":
        lit = data.draw(st.text(alphabet="abcé", max_size=3))
    lits = tuple(data.draw(st.lists(values, min_size=1, max_size=3))) if op in ("in", "not_in") else None
    if lit is not None and v is not None and data.draw(st.booleans()):
        v = _near(lit, data.draw(st.integers(-3, 3)))   # values next to the literal: the boundaries
    if not _holds(op, v, lit, lits):
        return
    pred = Predicate(op, "c", lit, lits, field_id=1, type=t)
    info = PartitionFieldInfo(1000, 1, tr, t, tr.result_type(t), "p")
    projected = project(pred, [info])
    pv = None if v is None else tr.apply_value(t, to_internal(t, v, exact=True))
    assert evaluate_row(projected, {1000: pv}), (op, v, lit, lits, str(tr), projected, pv)


def _check_exhaustive(t, values, transform):
    tr = parse_transform(transform)
    info = PartitionFieldInfo(1000, 1, tr, t, tr.result_type(t), "p")
    parts = {v: tr.apply_value(t, to_internal(t, v, exact=True)) for v in values}
    for lit in values:
        for op in ("eq", "lt", "le", "gt", "ge"):
            projected = project(Predicate(op, "c", lit, None, field_id=1, type=t), [info])
            for v in values:
                if _holds(op, v, lit, None):
                    assert evaluate_row(projected, {1000: parts[v]}), (transform, op, lit, v, projected)


def test_projection_exhaustive_at_boundaries():
    _check_exhaustive(T.BigIntType(), list(range(-13, 14)), "truncate[4]")
    _check_exhaustive(T.IntType(), list(range(-6, 7)), "bucket[3]")
    days = [datetime.date(1969, 12, 25) + datetime.timedelta(days=i) for i in range(0, 45, 3)]
    for tr in ("day", "month", "year"):
        _check_exhaustive(T.DateType(), days, tr)
    base = datetime.datetime(1969, 12, 31, 23, 59, 59, 999998)
    stamps = [base + datetime.timedelta(microseconds=i) for i in range(5)] + \
        [base + datetime.timedelta(hours=h) for h in (1, 25)]
    for tr in ("hour", "day", "month", "year"):
        _check_exhaustive(T.TimestampType(6), stamps, tr)
    _check_exhaustive(T.STRING(), ["", "a", "ab", "abc", "abd", "b", "ba"], "truncate[2]")
