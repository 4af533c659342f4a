"""Answering a filter expression from a data file's indexes."""
from __future__ import annotations

from ..expressions import AlwaysFalse, AlwaysTrue, And, Not, Or, Predicate, rewrite_not
from .result import REMAIN, SKIP, BitmapResult

__all__ = ["evaluate_file_index"]

_METHODS = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "in": "isin",
            "not_in": "not_in", "is_null": "is_null", "not_null": "is_not_null"}


def evaluate_file_index(expr, reader, schema=None):
    """SKIP, REMAIN or a BitmapResult of candidate rows for ``expr`` over the indexes of a
    :class:`~paimon_engine.index.FileIndexReader`. Unbound predicates are bound with
    ``schema`` (or the reader's schema). Every index of a column answers and the answers
    are intersected; index types the reader does not know are ignored."""
    schema = schema if schema is not None else getattr(reader, "schema", None)
    if schema is not None and _has_unbound(expr):
        expr = expr.bind(schema)
    return _norm(_walk(rewrite_not(expr), reader))


def _norm(r):
    """An empty candidate bitmap means no row can match."""
    return SKIP if isinstance(r, BitmapResult) and not len(r.bitmap) else r


def _has_unbound(e):
    if isinstance(e, Predicate):
        return not e.bound
    if isinstance(e, (And, Or)):
        return _has_unbound(e.left) or _has_unbound(e.right)
    if isinstance(e, Not):
        return _has_unbound(e.child)
    return False


def _walk(e, reader):
    if isinstance(e, AlwaysTrue):
        return REMAIN
    if isinstance(e, AlwaysFalse):
        return SKIP
    if isinstance(e, And):
        left = _walk(e.left, reader)
        if left is SKIP:
            return SKIP
        return left & _walk(e.right, reader)
    if isinstance(e, Or):
        left = _walk(e.left, reader)
        if left is REMAIN:
            return REMAIN
        return left | _walk(e.right, reader)
    if isinstance(e, Not):  # only left by rewrite_not around exotic nodes
        return REMAIN
    if isinstance(e, Predicate):
        return _leaf(e, reader)
    return REMAIN


def _leaf(p, reader):
    method = _METHODS.get(p.op)
    if method is None or p.type is None:
        return REMAIN
    result = REMAIN
    for index in reader.indexes_for(p.name, p.type):
        fn = getattr(index, method, None)
        if fn is None:
            continue
        if p.op in ("in", "not_in"):
            r = fn(p.literals)
        elif p.op in ("is_null", "not_null"):
            r = fn()
        else:
            r = fn(p.literal)
        result = _norm(result & r)
        if result is SKIP:
            break
    return result
