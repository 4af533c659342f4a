"""Inclusive projection of a row filter onto a partition spec.

``project(expr, spec_fields, schema_types)`` turns a bound filter over table columns into a filter over partition
fields that is true for every partition that may hold a matching row (Iceberg's inclusive projection). Each
predicate is projected through every partition field whose source is its column (their projections are ANDed);
a predicate no partition field can express becomes ``AlwaysTrue``. Literals in the result are in the internal
form of :func:`paimon_engine.spec.conversions.to_internal` with ``exact=True`` (days, microseconds, Decimal, str,
bytes).

Transforms are used through their spec string (``identity``, ``bucket[N]``, ``truncate[W]``, ``year``,
``month``, ``day``, ``hour``, ``void``) and ``apply_value(source_type, internal_value)``.
"""

from __future__ import annotations

import decimal

from .. import types as T
from ..expressions import AlwaysFalse, AlwaysTrue, And, Or, Predicate, rewrite_not
from ..spec.conversions import to_internal

__all__ = ["project", "PartitionFieldInfo"]


class PartitionFieldInfo:
    """What projection needs of one partition field."""

    __slots__ = ("field_id", "source_id", "transform", "source_type", "result_type", "name")

    def __init__(self, field_id, source_id, transform, source_type, result_type, name=""):
        self.field_id = field_id
        self.source_id = source_id
        self.transform = transform
        self.source_type = source_type
        self.result_type = result_type
        self.name = name


def _kind(transform) -> str:
    s = str(transform)
    return s.split("[", 1)[0]


def _is_int(t):
    return isinstance(t, (T.TinyIntType, T.SmallIntType, T.IntType, T.BigIntType, T.DateType, T.TimeType,
                          T.TimestampType, T.LocalZonedTimestampType))


def _step(t, v, delta):
    """v +/- the smallest unit of type t (for turning < into <=)."""
    if isinstance(t, T.DecimalType):
        return v + decimal.Decimal(delta).scaleb(-t.scale)
    if _is_int(t):
        return v + delta
    return None


def _pred(op, pf: PartitionFieldInfo, literal=None, literals=None):
    if op in ("in", "not_in"):
        lits = tuple(dict.fromkeys(literals))
        if not lits:
            return AlwaysFalse() if op == "in" else AlwaysTrue()
        return Predicate(op, pf.name or str(pf.field_id), literals=lits, field_id=pf.field_id, type=pf.result_type)
    return Predicate(op, pf.name or str(pf.field_id), literal, None, pf.field_id, pf.result_type)


def _project_leaf(p: Predicate, pf: PartitionFieldInfo):
    kind = _kind(pf.transform)
    op = p.op
    st = pf.source_type
    if kind == "void":
        return AlwaysTrue()
    if op in ("is_null", "not_null"):
        return _pred(op, pf)
    if kind == "identity":
        if op in ("is_nan", "not_nan"):
            return _pred(op, pf)
        if op in ("in", "not_in"):
            return _pred(op, pf, literals=[to_internal(st, v, exact=True) for v in p.literals])
        return _pred(op, pf, to_internal(st, p.literal, exact=True))
    if op in ("is_nan", "not_nan", "ne", "not_in", "not_starts_with"):
        return AlwaysTrue()
    apply = pf.transform.apply_value
    if kind == "bucket":
        if op == "eq":
            return _pred("eq", pf, apply(st, to_internal(st, p.literal, exact=True)))
        if op == "in":
            return _pred("in", pf, literals=[apply(st, to_internal(st, v, exact=True)) for v in p.literals])
        return AlwaysTrue()
    # order-preserving transforms: truncate, year, month, day, hour
    if op == "in":
        return _pred("in", pf, literals=[apply(st, to_internal(st, v, exact=True)) for v in p.literals])
    if op == "starts_with":
        if kind != "truncate" or not isinstance(st, (T.CharType, T.VarCharType)):
            return AlwaysTrue()
        w = pf.transform.width
        prefix = p.literal
        if len(prefix) >= w:
            return _pred("eq", pf, prefix[:w])
        return _pred("starts_with", pf, prefix)
    v = to_internal(st, p.literal, exact=True)
    if op == "eq":
        return _pred("eq", pf, apply(st, v))
    if op in ("lt", "gt"):
        stepped = _step(st, v, -1 if op == "lt" else 1)
        if stepped is None:  # strings/binary: project to the closed bound
            return _pred("le" if op == "lt" else "ge", pf, apply(st, v))
        return _pred("le" if op == "lt" else "ge", pf, apply(st, stepped))
    if op in ("le", "ge"):
        return _pred(op, pf, apply(st, v))
    return AlwaysTrue()


def project(expr, fields) -> object:
    """Inclusive projection of bound ``expr`` onto partition ``fields`` (a list of :class:`PartitionFieldInfo`)."""
    by_source: dict = {}
    for f in fields:
        by_source.setdefault(f.source_id, []).append(f)
    return _simplify(_project(rewrite_not(expr), by_source))


def _project(e, by_source):
    if isinstance(e, (AlwaysTrue, AlwaysFalse)):
        return e
    if isinstance(e, And):
        return And(_project(e.left, by_source), _project(e.right, by_source))
    if isinstance(e, Or):
        return Or(_project(e.left, by_source), _project(e.right, by_source))
    pfs = by_source.get(e.field_id)
    if not pfs:
        return AlwaysTrue()
    out = None
    for pf in pfs:
        try:
            q = _project_leaf(e, pf)
        except Exception:  # a literal the transform cannot take: no pruning from this field
            q = AlwaysTrue()
        out = q if out is None else And(out, q)
    return out


def _simplify(e):
    from .evaluators import _simplify as s
    return s(e)
