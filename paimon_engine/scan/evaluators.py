"""Evaluating bound filters against statistics instead of rows.

* :class:`InclusiveMetricsEvaluator` -- can ANY row of a file match? (``False`` = the file is skipped)
* :class:`StrictMetricsEvaluator`    -- do ALL rows of a file match? (``True`` = no residual filter needed)
* :class:`ManifestEvaluator`         -- can any file of a manifest match, from its partition summaries?
* :func:`evaluate_row`               -- exact evaluation on one tuple of Python values (partition tuples)

All work over a small statistics view (:class:`FileStats`, :class:`SummaryStats`), so the same rules serve data
files, delete files and manifest partition summaries. Unknown statistics always mean "might match" (inclusive)
and "might not match" (strict): pruning is never wrong, only sometimes less effective.
"""

from __future__ import annotations

import math

from .. import types as T
from ..expressions import AlwaysFalse, AlwaysTrue, And, Not, Or, Predicate, rewrite_not
from ..spec.conversions import from_bound_bytes, to_internal

__all__ = ["FileStats", "SummaryStats", "InclusiveMetricsEvaluator", "StrictMetricsEvaluator",
           "ManifestEvaluator", "evaluate_row", "residual_for"]


def _is_float(t):
    return isinstance(t, (T.FloatType, T.DoubleType))


def _is_nan(v):
    return isinstance(v, float) and math.isnan(v)


class FileStats:
    """Statistics of one data or delete file: counts and bounds keyed by field id."""

    __slots__ = ("record_count", "value_counts", "null_counts", "nan_counts", "lower", "upper", "_cache")

    def __init__(self, record_count, value_counts=None, null_counts=None, nan_counts=None,
                 lower_bounds=None, upper_bounds=None):
        self.record_count = record_count
        self.value_counts = value_counts or {}
        self.null_counts = null_counts or {}
        self.nan_counts = nan_counts or {}
        self.lower = lower_bounds or {}
        self.upper = upper_bounds or {}
        self._cache = {}

    @classmethod
    def of(cls, data_file):
        """Statistics of a manifest ``DataFile``-like object (attributes named as in the spec)."""
        return cls(getattr(data_file, "record_count", None), getattr(data_file, "value_counts", None),
                   getattr(data_file, "null_value_counts", None), getattr(data_file, "nan_value_counts", None),
                   getattr(data_file, "lower_bounds", None), getattr(data_file, "upper_bounds", None))

    def empty(self):
        return self.record_count == 0

    def _bound(self, which, fid, t):
        key = (which, fid)
        if key in self._cache:
            return self._cache[key]
        raw = (self.lower if which == "l" else self.upper).get(fid)
        v = None
        if raw is not None:
            v = raw if not isinstance(raw, (bytes, bytearray, memoryview)) else \
                from_bound_bytes(t, bytes(raw), field=str(fid))
        self._cache[key] = v
        return v

    def lower_bound(self, fid, t):
        return self._bound("l", fid, t)

    def upper_bound(self, fid, t):
        return self._bound("u", fid, t)

    def null_count(self, fid):
        return self.null_counts.get(fid)

    def nan_count(self, fid):
        return self.nan_counts.get(fid)

    def value_count(self, fid):
        return self.value_counts.get(fid)

    def all_null(self, fid):
        nc, vc = self.null_counts.get(fid), self.value_counts.get(fid)
        return nc is not None and vc is not None and nc == vc and vc > 0

    def all_nan(self, fid):
        nn, vc = self.nan_counts.get(fid), self.value_counts.get(fid)
        return nn is not None and vc is not None and nn == vc and vc > 0

    def no_nulls(self, fid):
        return self.null_counts.get(fid) == 0

    def no_nans(self, fid):
        return self.nan_counts.get(fid) == 0

    def may_have_nulls(self, fid):
        return self.null_counts.get(fid) != 0

    def may_have_nans(self, fid):
        return self.nan_counts.get(fid) != 0


class SummaryStats:
    """Partition summaries of one manifest (``contains_null``, ``contains_nan``, ``lower_bound``,
    ``upper_bound`` per partition field, in partition-field order), keyed by partition field id."""

    __slots__ = ("summaries", "_cache")

    def __init__(self, summaries_by_id: dict):
        self.summaries = summaries_by_id
        self._cache = {}

    def empty(self):
        return False

    def _get(self, fid, name, default=None):
        s = self.summaries.get(fid)
        if s is None:
            return default
        if isinstance(s, dict):
            return s.get(name, default)
        return getattr(s, name, default)

    def _bound(self, which, fid, t):
        key = (which, fid)
        if key not in self._cache:
            raw = self._get(fid, "lower_bound" if which == "l" else "upper_bound")
            self._cache[key] = None if raw is None else (
                raw if not isinstance(raw, (bytes, bytearray, memoryview))
                else from_bound_bytes(t, bytes(raw), field=str(fid)))
        return self._cache[key]

    def lower_bound(self, fid, t):
        return self._bound("l", fid, t)

    def upper_bound(self, fid, t):
        return self._bound("u", fid, t)

    def all_null(self, fid):
        # no bounds but nulls seen: every partition value is null
        return (self.summaries.get(fid) is not None and self._get(fid, "contains_null") is True
                and self._get(fid, "lower_bound") is None and self._get(fid, "contains_nan") is not True)

    def all_nan(self, fid):
        return False

    def no_nulls(self, fid):
        return self._get(fid, "contains_null") is False

    def no_nans(self, fid):
        return self._get(fid, "contains_nan") is False

    def may_have_nulls(self, fid):
        return self._get(fid, "contains_null") is not False

    def may_have_nans(self, fid):
        return self._get(fid, "contains_nan") is not False


def _literal(p):
    return to_internal(p.type, p.literal, exact=True)


def _literals(p):
    return [to_internal(p.type, v, exact=True) for v in p.literals]


def _prep(expr):
    return rewrite_not(expr)


class InclusiveMetricsEvaluator:
    """``eval(stats)``: False only when no row can match the bound ``expr``."""

    def __init__(self, expr):
        self.expr = _prep(expr)

    def eval(self, stats) -> bool:
        if stats.empty():
            return False
        return self._ev(self.expr, stats)

    def _ev(self, e, s):
        if isinstance(e, AlwaysTrue):
            return True
        if isinstance(e, AlwaysFalse):
            return False
        if isinstance(e, And):
            return self._ev(e.left, s) and self._ev(e.right, s)
        if isinstance(e, Or):
            return self._ev(e.left, s) or self._ev(e.right, s)
        if isinstance(e, Not):  # pragma: no cover - rewrite_not removed these
            return True
        return _inclusive_leaf(e, s)


def _inclusive_leaf(p: Predicate, s) -> bool:
    fid, t, op = p.field_id, p.type, p.op
    if fid is None:
        return True
    if op == "is_null":
        return s.may_have_nulls(fid)
    if op == "not_null":
        return not s.all_null(fid)
    if op == "is_nan":
        if not _is_float(t):
            return False
        return s.may_have_nans(fid) and not s.all_null(fid)
    if op == "not_nan":
        return not s.all_nan(fid)
    if s.all_null(fid) or (_is_float(t) and s.all_nan(fid)):
        return False
    if op in ("ne", "not_in"):
        return True
    lo = s.lower_bound(fid, t)
    hi = s.upper_bound(fid, t)
    if _is_nan(lo):
        lo = None  # a NaN lower bound says nothing usable
    if _is_nan(hi):
        hi = None
    try:
        if op in ("lt", "le", "gt", "ge", "eq"):
            v = _literal(p)
            if _is_nan(v):
                return True
            if op == "lt":
                return lo is None or lo < v
            if op == "le":
                return lo is None or lo <= v
            if op == "gt":
                return hi is None or hi > v
            if op == "ge":
                return hi is None or hi >= v
            if lo is not None and lo > v:
                return False
            if hi is not None and hi < v:
                return False
            return True
        if op == "in":
            vals = [v for v in _literals(p) if not _is_nan(v)]
            if len(vals) != len(p.literals):
                return True
            if lo is not None:
                vals = [v for v in vals if v >= lo]
            if hi is not None:
                vals = [v for v in vals if v <= hi]
            return bool(vals)
        if op == "starts_with":
            pre = p.literal
            if isinstance(lo, str) and lo[:len(pre)] > pre:
                return False
            if isinstance(hi, str) and hi[:len(pre)] < pre:
                return False
            return True
        if op == "not_starts_with":
            pre = p.literal
            if s.may_have_nulls(fid):
                return True
            if isinstance(lo, str) and isinstance(hi, str) and lo.startswith(pre) and hi.startswith(pre):
                return False
            return True
    except TypeError:  # incomparable bound (e.g. after an odd promotion): keep the file
        return True
    return True


class StrictMetricsEvaluator:
    """``eval(stats)``: True only when every row matches the bound ``expr``."""

    def __init__(self, expr):
        self.expr = _prep(expr)

    def eval(self, stats) -> bool:
        if stats.empty():
            return True
        return self._ev(self.expr, stats)

    def _ev(self, e, s):
        if isinstance(e, AlwaysTrue):
            return True
        if isinstance(e, AlwaysFalse):
            return False
        if isinstance(e, And):
            return self._ev(e.left, s) and self._ev(e.right, s)
        if isinstance(e, Or):
            return self._ev(e.left, s) or self._ev(e.right, s)
        if isinstance(e, Not):  # pragma: no cover
            return False
        return _strict_leaf(e, s)


def _strict_leaf(p: Predicate, s) -> bool:
    fid, t, op = p.field_id, p.type, p.op
    if fid is None:
        return False
    if op == "is_null":
        return s.all_null(fid)
    if op == "not_null":
        return s.no_nulls(fid)
    if op == "is_nan":
        return s.all_nan(fid)
    if op == "not_nan":
        return _is_float(t) and s.no_nans(fid) and s.no_nulls(fid)
    if not s.no_nulls(fid):
        return False
    if _is_float(t) and not s.no_nans(fid):
        return False
    lo = s.lower_bound(fid, t)
    hi = s.upper_bound(fid, t)
    if lo is None or hi is None or _is_nan(lo) or _is_nan(hi):
        return False
    try:
        if op in ("lt", "le", "gt", "ge", "eq", "ne"):
            v = _literal(p)
            if _is_nan(v):
                return False
            if op == "lt":
                return hi < v
            if op == "le":
                return hi <= v
            if op == "gt":
                return lo > v
            if op == "ge":
                return lo >= v
            if op == "eq":
                return lo == v and hi == v
            return v < lo or v > hi
        if op == "in":
            return lo == hi and lo in set(_literals(p))
        if op == "not_in":
            return all(v < lo or v > hi for v in _literals(p))
        if op == "starts_with":
            return isinstance(lo, str) and isinstance(hi, str) and lo.startswith(p.literal) and \
                hi.startswith(p.literal)
        if op == "not_starts_with":
            pre = p.literal
            return isinstance(lo, str) and isinstance(hi, str) and (hi[:len(pre)] < pre or lo[:len(pre)] > pre)
    except TypeError:
        return False
    return False


class ManifestEvaluator(InclusiveMetricsEvaluator):
    """Inclusive evaluation of a partition-level filter against a manifest's partition summaries."""


def evaluate_row(expr, values_by_id: dict, types_by_id: dict | None = None) -> bool:
    """Exact SQL-style evaluation of a bound ``expr`` on one row of Python values keyed by field id
    (a comparison with null is not true)."""
    e = _prep(expr)
    return _row(e, values_by_id)


def _row(e, vals):
    if isinstance(e, AlwaysTrue):
        return True
    if isinstance(e, AlwaysFalse):
        return False
    if isinstance(e, And):
        return _row(e.left, vals) and _row(e.right, vals)
    if isinstance(e, Or):
        return _row(e.left, vals) or _row(e.right, vals)
    p = e
    v = vals.get(p.field_id)
    op = p.op
    if op == "is_null":
        return v is None
    if op == "not_null":
        return v is not None
    if v is None:
        return False
    v = to_internal(p.type, v, exact=True) if not isinstance(v, (int, float, str, bytes)) or isinstance(v, bool) else v
    if op == "is_nan":
        return _is_nan(v)
    if op == "not_nan":
        return not _is_nan(v)
    try:
        if op in ("eq", "ne", "lt", "le", "gt", "ge"):
            x = _literal(p)
            return {"eq": v == x, "ne": v != x, "lt": v < x, "le": v <= x, "gt": v > x, "ge": v >= x}[op]
        if op == "in":
            return v in set(_literals(p))
        if op == "not_in":
            return v not in set(_literals(p))
        if op == "starts_with":
            return isinstance(v, str) and v.startswith(p.literal)
        if op == "not_starts_with":
            return isinstance(v, str) and not v.startswith(p.literal)
    except TypeError:
        return True
    return True


def residual_for(expr, stats):
    """The part of bound ``expr`` still to be checked row by row in a file with ``stats``: predicates that hold
    for every row become true, those that hold for none become false."""
    e = _prep(expr)
    return _simplify(_residual(e, stats))


def _residual(e, s):
    if isinstance(e, (AlwaysTrue, AlwaysFalse)):
        return e
    if isinstance(e, And):
        return And(_residual(e.left, s), _residual(e.right, s))
    if isinstance(e, Or):
        return Or(_residual(e.left, s), _residual(e.right, s))
    if _strict_leaf(e, s):
        return AlwaysTrue()
    if not _inclusive_leaf(e, s):
        return AlwaysFalse()
    return e


def _simplify(e):
    if isinstance(e, And):
        a, b = _simplify(e.left), _simplify(e.right)
        if isinstance(a, AlwaysFalse) or isinstance(b, AlwaysFalse):
            return AlwaysFalse()
        if isinstance(a, AlwaysTrue):
            return b
        if isinstance(b, AlwaysTrue):
            return a
        return And(a, b)
    if isinstance(e, Or):
        a, b = _simplify(e.left), _simplify(e.right)
        if isinstance(a, AlwaysTrue) or isinstance(b, AlwaysTrue):
            return AlwaysTrue()
        if isinstance(a, AlwaysFalse):
            return b
        if isinstance(b, AlwaysFalse):
            return a
        return Or(a, b)
    return e
