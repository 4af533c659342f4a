"""A small predicate language for filters: scans, deletes, overwrites and file indexes.

Build expressions in Python or parse them from a string::

    from paimon_engine.expressions import col, parse
    e = (col("x") > 5) & col("y").isin(["a", "b"]) | ~col("z").is_null()
    e = parse("x > 5 and y in ('a', 'b') or z is not null")

Nodes are immutable: :class:`And`, :class:`Or`, :class:`Not`, :class:`AlwaysTrue`, :class:`AlwaysFalse` and
:class:`Predicate` (``op`` in :data:`OPS`, a column ``name``, ``literal`` for comparisons, ``literals`` for
set predicates). :meth:`Expression.bind` resolves names against a :class:`~paimon_engine.types.RowType`
(dotted names reach into structs), converts literals to the column's type and records the ``field_id``.

Row semantics are SQL's: a comparison with a null value is not true. :func:`evaluate_arrow` returns a
boolean array with no nulls that is True exactly where the row matches, so ``~mask`` is "every other row".
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import re
import sys as _sys

from .errors import InvalidArgumentError, SchemaError
from . import types as T

__all__ = [
    "Expression", "And", "Or", "Not", "AlwaysTrue", "AlwaysFalse", "Predicate", "Reference", "OPS",
    "col", "parse", "rewrite_not", "referenced_names", "evaluate_arrow", "to_arrow_expression",
    "and_all", "or_all",
    # pyiceberg's names
    "EqualTo", "NotEqualTo", "GreaterThan", "GreaterThanOrEqual", "LessThan", "LessThanOrEqual", "In", "NotIn",
    "IsNull", "NotNull", "IsNaN", "NotNaN", "StartsWith", "NotStartsWith",
]

UNARY_OPS = ("is_null", "not_null", "is_nan", "not_nan")
LITERAL_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "starts_with", "not_starts_with")
SET_OPS = ("in", "not_in")
OPS = UNARY_OPS + LITERAL_OPS + SET_OPS

NEGATE = {
    "is_null": "not_null", "not_null": "is_null", "is_nan": "not_nan", "not_nan": "is_nan",
    "eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "gt": "le", "le": "gt",
    "starts_with": "not_starts_with", "not_starts_with": "starts_with", "in": "not_in", "not_in": "in",
}
FLIP = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}
SYMBOLS = {"eq": "=", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


class Expression:
    """Base of every node."""

    __slots__ = ()

    def __and__(self, other):
        return And(self, _expr(other))

    def __rand__(self, other):
        return And(_expr(other), self)

    def __or__(self, other):
        return Or(self, _expr(other))

    def __ror__(self, other):
        return Or(_expr(other), self)

    def __invert__(self):
        return Not(self)

    def bind(self, schema: "T.RowType", case_sensitive: bool = True) -> "Expression":
        """Resolve column names to fields of ``schema`` and convert literals; raises SchemaError."""
        raise NotImplementedError

    def negate(self) -> "Expression":
        raise NotImplementedError

    def __bool__(self):
        raise TypeError("an expression has no truth value; use & | ~ instead of and/or/not")


def _expr(obj):
    if isinstance(obj, Expression):
        return obj
    if obj is True:
        return AlwaysTrue()
    if obj is False:
        return AlwaysFalse()
    raise InvalidArgumentError(f"not an expression: {obj!r}")


class AlwaysTrue(Expression):
    __slots__ = ()

    def bind(self, schema, case_sensitive=True):
        return self

    def negate(self):
        return AlwaysFalse()

    def __eq__(self, other):
        return isinstance(other, AlwaysTrue)

    def __hash__(self):
        return hash("AlwaysTrue")

    def __repr__(self):
        return "true"


class AlwaysFalse(Expression):
    __slots__ = ()

    def bind(self, schema, case_sensitive=True):
        return self

    def negate(self):
        return AlwaysTrue()

    def __eq__(self, other):
        return isinstance(other, AlwaysFalse)

    def __hash__(self):
        return hash("AlwaysFalse")

    def __repr__(self):
        return "false"


class _Binary(Expression):
    __slots__ = ("left", "right")
    word = "?"

    def __init__(self, left, right, *rest):
        if rest:   # pyiceberg's And(a, b, c, ...): folded to the left
            left, right = type(self)(left, right, *rest[:-1]), rest[-1]
        self.left = _expr(left)
        self.right = _expr(right)

    def __eq__(self, other):
        return type(self) is type(other) and self.left == other.left and self.right == other.right

    def __hash__(self):
        return hash((type(self).__name__, self.left, self.right))

    def __repr__(self):
        return f"({self.left!r} {self.word} {self.right!r})"

    def bind(self, schema, case_sensitive=True):
        return type(self)(self.left.bind(schema, case_sensitive), self.right.bind(schema, case_sensitive))


class And(_Binary):
    __slots__ = ()
    word = "and"

    def negate(self):
        return Or(self.left.negate(), self.right.negate())


class Or(_Binary):
    __slots__ = ()
    word = "or"

    def negate(self):
        return And(self.left.negate(), self.right.negate())


class Not(Expression):
    __slots__ = ("child",)

    def __init__(self, child):
        self.child = _expr(child)

    def __eq__(self, other):
        return isinstance(other, Not) and self.child == other.child

    def __hash__(self):
        return hash(("Not", self.child))

    def __repr__(self):
        return f"not {self.child!r}"

    def bind(self, schema, case_sensitive=True):
        return Not(self.child.bind(schema, case_sensitive))

    def negate(self):
        return self.child


class Predicate(Expression):
    """``op`` applied to column ``name``; bound predicates also carry ``field_id`` and ``type``."""

    __slots__ = ("op", "name", "literal", "literals", "field_id", "type", "source")

    def __init__(self, op, name, literal=None, literals=None, field_id=None, type=None):
        self.source = None       # (filter text, position of the column name) when parsed from a string
        if op not in OPS:
            raise InvalidArgumentError(f"unknown predicate operation {op!r}")
        if op in LITERAL_OPS and literal is None:
            raise InvalidArgumentError(f"{op} needs a non-null literal; use is_null/not_null for nulls")
        if op in SET_OPS:
            if literals is None:
                raise InvalidArgumentError(f"{op} needs a collection of literals")
            literals = tuple(dict.fromkeys(v for v in literals if v is not None))
        self.op = op
        self.name = name
        self.literal = literal
        self.literals = literals
        self.field_id = field_id
        self.type = type

    @property
    def bound(self) -> bool:
        return self.field_id is not None

    def _key(self):
        return (self.op, self.name, self.literal, self.literals, self.field_id)

    def __eq__(self, other):
        return isinstance(other, Predicate) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        n = self.name
        if self.op in UNARY_OPS:
            return {"is_null": f"{n} is null", "not_null": f"{n} is not null",
                    "is_nan": f"is_nan({n})", "not_nan": f"not is_nan({n})"}[self.op]
        if self.op in SET_OPS:
            vals = ", ".join(_literal_repr(v) for v in self.literals)
            return f"{n} {'in' if self.op == 'in' else 'not in'} ({vals})"
        if self.op in ("starts_with", "not_starts_with"):
            word = "like" if self.op == "starts_with" else "not like"
            return f"{n} {word} {_literal_repr(str(self.literal) + '%')}"
        return f"{n} {SYMBOLS[self.op]} {_literal_repr(self.literal)}"

    def negate(self):
        return Predicate(NEGATE[self.op], self.name, self.literal, self.literals, self.field_id, self.type)

    def bind(self, schema, case_sensitive=True):
        source = getattr(self, "source", None)
        if source is None:
            return self._bind(schema, case_sensitive)
        try:
            return self._bind(schema, case_sensitive)
        except (SchemaError, InvalidArgumentError) as exc:
            text, pos = source
            raise type(exc)(f"{exc} (column {self.name!r} at position {pos} of filter {text!r})") from None

    def _bind(self, schema, case_sensitive):
        field, path = _resolve(schema, self.name, case_sensitive)
        t = field.type
        if self.op in ("is_nan", "not_nan") and not isinstance(t, (T.FloatType, T.DoubleType)):
            raise SchemaError(f"{self.op} needs a float or double column, {path} is {t.to_paimon_string()}")
        if self.op in ("starts_with", "not_starts_with") and not isinstance(t, (T.CharType, T.VarCharType)):
            raise SchemaError(f"{self.op} needs a string column, {path} is {t.to_paimon_string()}")
        if t.is_nested and self.op not in ("is_null", "not_null"):
            raise SchemaError(f"cannot compare the nested column {path}")
        literal = None if self.literal is None else convert_literal(self.literal, t, path)
        literals = None
        if self.literals is not None:
            literals = tuple(convert_literal(v, t, path) for v in self.literals)
        op = self.op
        if op in SET_OPS and literals is not None and len(literals) == 0:
            # x IN () matches nothing; x NOT IN () matches every row, null or not (as in SQL)
            return AlwaysFalse() if op == "in" else AlwaysTrue()
        return Predicate(op, path, literal, literals, field.id, t)


def _literal_repr(v):
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, bytes):
        return "X'" + v.hex() + "'"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, _dt.datetime):
        return f"timestamp '{v.isoformat()}'"
    if isinstance(v, _dt.date):
        return f"date '{v.isoformat()}'"
    return repr(v) if not isinstance(v, (_decimal.Decimal, int, float)) else str(v)


class Reference:
    """A column, by (dotted) name: the left side of comparisons."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise InvalidArgumentError(f"column name must be a non-empty string, got {name!r}")
        self.name = name

    def _cmp(self, op, other):
        if other is None:
            if op == "eq":
                return Predicate("is_null", self.name)
            if op == "ne":
                return Predicate("not_null", self.name)
            raise InvalidArgumentError(f"cannot compare {self.name} with null using {SYMBOLS[op]}")
        return Predicate(op, self.name, other)

    def __eq__(self, other):  # type: ignore[override]
        return self._cmp("eq", other)

    def __ne__(self, other):  # type: ignore[override]
        return self._cmp("ne", other)

    def __lt__(self, other):
        return self._cmp("lt", other)

    def __le__(self, other):
        return self._cmp("le", other)

    def __gt__(self, other):
        return self._cmp("gt", other)

    def __ge__(self, other):
        return self._cmp("ge", other)

    __hash__ = None

    def isin(self, values):
        return Predicate("in", self.name, literals=list(values))

    def not_in(self, values):
        return Predicate("not_in", self.name, literals=list(values))

    def is_null(self):
        return Predicate("is_null", self.name)

    def not_null(self):
        return Predicate("not_null", self.name)

    def is_nan(self):
        return Predicate("is_nan", self.name)

    def not_nan(self):
        return Predicate("not_nan", self.name)

    def starts_with(self, prefix: str):
        return Predicate("starts_with", self.name, prefix)

    def not_starts_with(self, prefix: str):
        return Predicate("not_starts_with", self.name, prefix)

    def between(self, low, high):
        return And(Predicate("ge", self.name, low), Predicate("le", self.name, high))

    def __repr__(self):
        return f"col({self.name!r})"


def col(name: str) -> Reference:
    """A column reference: ``col("x") > 5``."""
    return Reference(name)


def and_all(exprs) -> Expression:
    out = AlwaysTrue()
    for e in exprs:
        out = e if isinstance(out, AlwaysTrue) else And(out, e)
    return out


def or_all(exprs) -> Expression:
    out = AlwaysFalse()
    for e in exprs:
        out = e if isinstance(out, AlwaysFalse) else Or(out, e)
    return out


# ---------------------------------------------------------------------------
# binding
# ---------------------------------------------------------------------------

def _resolve(schema, name, case_sensitive):
    parts = name.split(".")
    current = schema
    field = None
    resolved = []
    for i, part in enumerate(parts):
        if not isinstance(current, T.RowType):
            raise SchemaError(f"cannot resolve {name!r}: {'.'.join(parts[:i])} is not a struct")
        field = None
        for f in current.fields:
            if f.name == part or (not case_sensitive and f.name.lower() == part.lower()):
                field = f
                break
        if field is None:
            raise SchemaError(f"no column named {name!r}; columns are {schema.names}")
        resolved.append(field.name)
        current = field.type
    # the schema's own spelling, so a case-insensitive match finds the column in the data too
    return field, ".".join(resolved)


_INT_RANGES = {T.TinyIntType: 8, T.SmallIntType: 16, T.IntType: 32, T.BigIntType: 64}


def convert_literal(value, t, path="?"):
    """Convert a Python literal to the value domain of type ``t`` (raises InvalidArgumentError)."""
    def bad(why=""):
        return InvalidArgumentError(f"literal {value!r} does not fit column {path} of type "
                                    f"{t.to_paimon_string()}{': ' + why if why else ''}")

    if isinstance(t, T.BooleanType):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise bad()
    bits = _INT_RANGES.get(type(t))
    if bits is not None:
        if isinstance(value, bool):
            raise bad()
        if isinstance(value, float):
            if not value.is_integer():
                raise bad("not an integer")
            value = int(value)
        if isinstance(value, str):
            try:
                value = int(value)
            except ValueError:
                raise bad() from None
        if not isinstance(value, int):
            raise bad()
        if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            raise bad("out of range")
        return value
    if isinstance(t, (T.FloatType, T.DoubleType)):
        if isinstance(value, bool) or not isinstance(value, (int, float, str, _decimal.Decimal)):
            raise bad()
        try:
            return float(value)
        except (ValueError, OverflowError):
            raise bad() from None
    if isinstance(t, T.DecimalType):
        try:
            d = _decimal.Decimal(str(value)) if not isinstance(value, _decimal.Decimal) else value
        except _decimal.InvalidOperation:
            raise bad() from None
        if isinstance(value, bool):
            raise bad()
        if not d.is_finite():
            raise bad("not a finite number")
        try:
            q = d.quantize(_decimal.Decimal(1).scaleb(-t.scale))
        except _decimal.InvalidOperation:
            raise bad("too many digits") from None
        if q != d:
            raise bad(f"more than {t.scale} decimal places")
        if len(q.as_tuple().digits) > t.precision and q != 0:
            raise bad("too many digits")
        return q
    if isinstance(t, (T.CharType, T.VarCharType)):
        if not isinstance(value, str):
            raise bad()
        return value
    if isinstance(t, (T.BinaryType, T.VarBinaryType)):
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        raise bad()
    if isinstance(t, T.UuidType):
        import uuid
        try:
            return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
        except ValueError:
            raise bad() from None
    if isinstance(t, T.DateType):
        if isinstance(value, _dt.datetime):
            raise bad("a datetime for a date column")
        if isinstance(value, _dt.date):
            return value
        if isinstance(value, str):
            try:
                return _dt.date.fromisoformat(value)
            except ValueError:
                raise bad() from None
        if isinstance(value, int) and not isinstance(value, bool):
            try:
                return _dt.date(1970, 1, 1) + _dt.timedelta(days=value)
            except OverflowError:
                raise bad("out of range") from None
        raise bad()
    if isinstance(t, T.TimeType):
        if isinstance(value, _dt.time):
            return value
        if isinstance(value, str):
            try:
                return _dt.time.fromisoformat(value)
            except ValueError:
                raise bad() from None
        raise bad()
    if isinstance(t, (T.TimestampType, T.LocalZonedTimestampType)):
        if isinstance(value, str):
            try:
                value = _dt.datetime.fromisoformat(value)
            except ValueError:
                raise bad() from None
        elif isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
            value = _dt.datetime(value.year, value.month, value.day)
        if not isinstance(value, _dt.datetime):
            raise bad()
        try:
            if isinstance(t, T.LocalZonedTimestampType):
                if value.tzinfo is None:
                    value = value.replace(tzinfo=_dt.timezone.utc)
                return value.astimezone(_dt.timezone.utc)
            if value.tzinfo is not None:
                value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        except OverflowError:   # the offset moves it out of year 1..9999
            raise bad("out of range") from None
        return value
    raise bad("unsupported column type for literals")


# ---------------------------------------------------------------------------
# rewriting and inspection
# ---------------------------------------------------------------------------

def rewrite_not(expr: Expression) -> Expression:
    """Push every ``Not`` down to the predicates (``not (a and b)`` -> ``not a or not b``)."""
    if isinstance(expr, Not):
        return rewrite_not(expr.child.negate() if not isinstance(expr.child, Not) else expr.child.child)
    if isinstance(expr, And):
        return And(rewrite_not(expr.left), rewrite_not(expr.right))
    if isinstance(expr, Or):
        return Or(rewrite_not(expr.left), rewrite_not(expr.right))
    return expr


def referenced_names(expr: Expression) -> set:
    """Column names the expression reads."""
    if isinstance(expr, Predicate):
        return {expr.name}
    if isinstance(expr, _Binary):
        return referenced_names(expr.left) | referenced_names(expr.right)
    if isinstance(expr, Not):
        return referenced_names(expr.child)
    return set()


def simplify(expr: Expression) -> Expression:
    """Fold AlwaysTrue/AlwaysFalse out of And/Or/Not."""
    if isinstance(expr, And):
        left, right = simplify(expr.left), simplify(expr.right)
        if isinstance(left, AlwaysFalse) or isinstance(right, AlwaysFalse):
            return AlwaysFalse()
        if isinstance(left, AlwaysTrue):
            return right
        if isinstance(right, AlwaysTrue):
            return left
        return And(left, right)
    if isinstance(expr, Or):
        left, right = simplify(expr.left), simplify(expr.right)
        if isinstance(left, AlwaysTrue) or isinstance(right, AlwaysTrue):
            return AlwaysTrue()
        if isinstance(left, AlwaysFalse):
            return right
        if isinstance(right, AlwaysFalse):
            return left
        return Or(left, right)
    if isinstance(expr, Not):
        child = simplify(expr.child)
        if isinstance(child, (AlwaysTrue, AlwaysFalse)):
            return child.negate()
        return Not(child)
    return expr


# ---------------------------------------------------------------------------
# evaluation on Arrow data
# ---------------------------------------------------------------------------

def _column(data, name):
    import pyarrow as pa
    parts = name.split(".")
    try:
        arr = data.column(parts[0])
    except KeyError:
        raise SchemaError(f"no column named {parts[0]!r} in the data") from None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if len(parts) > 1:
        import pyarrow.compute as pc
        for p in parts[1:]:
            arr = pc.struct_field(arr, [arr.type.get_field_index(p)])
    return arr


def _uuid_bytes(value, arrow_type):
    """A UUID literal as the 16 bytes Arrow stores a uuid column in (other values unchanged)."""
    import uuid
    import pyarrow as pa
    if isinstance(value, uuid.UUID) and pa.types.is_fixed_size_binary(arrow_type):
        return value.bytes
    return value


def _literal_numbers(value, arrow_type):
    """A one-element NumPy array holding an int or float literal as a column of ``arrow_type`` (an integer or
    float32/float64 type) stores it, exactly as ``pa.scalar`` converts it, or None for any other literal or one
    ``pa.scalar`` would refuse (that path then says why)."""
    import numpy as np
    import pyarrow as pa
    kind = type(value)
    if kind is int and pa.types.is_integer(arrow_type):
        dtype = np.dtype(("i" if pa.types.is_signed_integer(arrow_type) else "u") + str(arrow_type.bit_width // 8))
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            return None
        return np.array([value], dtype=dtype)
    if kind in (int, float) and (pa.types.is_float32(arrow_type) or pa.types.is_float64(arrow_type)):
        wide = pa.types.is_float64(arrow_type)
        if kind is int and abs(value) > (1 << (53 if wide else 24)):
            return None     # (not exactly a float: pa.scalar refuses it)
        if not wide and kind is float and abs(value) > 3.4028234663852886e38 and value == value:
            return None     # (past float32: left to pa.scalar)
        return np.array([value], dtype=np.float64 if wide else np.float32)
    return None


def _bytes_scalar(value, arrow_type):
    """The Arrow scalar of an int, float or str literal for a column of that kind, built from its bytes (exactly
    what ``pa.scalar`` gives, without the conversion through pyarrow's pandas shim that imports pandas on its first
    use), or None for any other literal or one ``pa.scalar`` would refuse (that path then says why)."""
    import numpy as np
    import pyarrow as pa
    if type(value) is str and (pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)):
        try:
            raw = value.encode("utf-8")
        except UnicodeEncodeError:
            return None
        offsets = np.array([0, len(raw)], dtype=np.int64 if pa.types.is_large_string(arrow_type) else np.int32)
        return pa.Array.from_buffers(arrow_type, 1, [None, pa.py_buffer(offsets), pa.py_buffer(raw)])[0]
    data = _literal_numbers(value, arrow_type)
    if data is None:
        return None
    return pa.Array.from_buffers(arrow_type, 1, [None, pa.py_buffer(data)])[0]


def _bool_scalar(value):
    """An Arrow bool scalar (True, False or None) built without a Python-value conversion (see _bytes_scalar)."""
    import numpy as np
    import pyarrow as pa
    if value is None:
        return pa.nulls(1, pa.bool_())[0]
    return pa.Array.from_buffers(pa.bool_(), 1, [None, pa.py_buffer(np.array([1 if value else 0], np.uint8))])[0]


def _scalar(value, arrow_type):
    import pyarrow as pa
    value = _uuid_bytes(value, arrow_type)
    fast = _bytes_scalar(value, arrow_type)
    if fast is not None:
        return fast
    try:
        return pa.scalar(value, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
        raise InvalidArgumentError(f"literal {value!r} cannot be compared with {arrow_type}: {exc}") from None


def evaluate_arrow(expr: Expression, data):
    """Evaluate over a pyarrow Table/RecordBatch (or a ColumnBatch): a BooleanArray, True where the row matches
    (comparisons with null are not true), with no nulls. Comparisons of number columns with number literals and
    null tests of number columns are computed with NumPy from the columns' buffers, everything else with Arrow's
    compute functions (so a filter on numbers does not import pyarrow.compute, about 40 ms in a fresh process);
    the masks are combined as NumPy bools."""
    from .batch import numbers_to_arrow
    return numbers_to_arrow(evaluate_numpy(expr, data))


def evaluate_numpy(expr: Expression, data):
    """:func:`evaluate_arrow` as a NumPy bool array, one per row (what a caller that indexes or counts rows with
    the mask wants: ``np.asarray`` of the Arrow mask converts through pyarrow's pandas shim, which imports
    pandas on its first use)."""
    import numpy as np
    import pyarrow as pa

    if hasattr(data, "to_arrow") and not isinstance(data, (pa.Table, pa.RecordBatch)):
        data = data.to_arrow()
    return _numpy_mask(rewrite_not(expr), data, np)


def _numpy_mask(e, data, np):
    """The mask of ``e`` (NOT already pushed to the leaves) over ``data``. A module-level function, not a closure
    that calls itself: such a closure is a reference cycle, which would keep ``data`` alive until the cycle
    collector runs."""
    if isinstance(e, (AlwaysTrue, AlwaysFalse)):
        return np.full(data.num_rows, isinstance(e, AlwaysTrue), dtype=np.bool_)
    if isinstance(e, And):
        return _numpy_mask(e.left, data, np) & _numpy_mask(e.right, data, np)
    if isinstance(e, Or):
        return _numpy_mask(e.left, data, np) | _numpy_mask(e.right, data, np)
    if isinstance(e, Not):
        return ~_numpy_mask(e.child, data, np)
    if isinstance(e, Predicate):
        arr = _column(data, e.name)
        m = _numpy_leaf(e, arr)
        if m is None:
            m = _mask_bools(_leaf(e, arr).fill_null(_bool_scalar(False)))
        return m
    raise InvalidArgumentError(f"cannot evaluate {e!r}")


#: comparisons NumPy computes for number columns (the same results as Arrow's: NaN is not equal to, less or
#: greater than anything, -0.0 equals 0.0)
_NUMPY_OPS = {"eq": "__eq__", "ne": "__ne__", "lt": "__lt__", "le": "__le__", "gt": "__gt__", "ge": "__ge__"}


def _numpy_leaf(p, arr):
    """The mask of predicate ``p`` on ``arr`` computed with NumPy (null rows False), when ``arr`` is an integer or
    float32/float64 column and ``p`` a null test or a comparison with a literal ``pa.scalar`` takes exactly; else
    None."""
    import numpy as np
    import pyarrow as pa

    from .batch import valid_bools
    t = arr.type
    if isinstance(arr, pa.ChunkedArray) or not (pa.types.is_integer(t) or pa.types.is_float32(t)
                                                or pa.types.is_float64(t)):
        return None
    if p.op in ("is_null", "not_null"):
        valid = valid_bools(arr)
        return valid.copy() if p.op == "not_null" else ~valid
    method = _NUMPY_OPS.get(p.op)
    lit = _literal_numbers(p.literal, t) if method else None
    if lit is None:
        return None
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.bool_)
    values = np.frombuffer(arr.buffers()[1], dtype=lit.dtype, count=arr.offset + n)[arr.offset:]
    out = getattr(values, method)(lit[0])
    if arr.null_count:
        out &= valid_bools(arr)
    return out


def _mask_bools(mask):
    """A BooleanArray without nulls as one NumPy bool per row."""
    import pyarrow as pa

    from .batch import bitmap_bools
    if isinstance(mask, pa.ChunkedArray):
        mask = mask.combine_chunks()
    return bitmap_bools(mask.buffers()[1], mask.offset, len(mask))


def _leaf(p, arr):
    import pyarrow as pa
    import pyarrow.compute as pc
    op = p.op
    if op == "is_null":
        return pc.is_null(arr)
    if op == "not_null":
        return pc.is_valid(arr)
    if op in ("is_nan", "not_nan"):
        if not pa.types.is_floating(arr.type):
            raise SchemaError(f"{op} needs a float column, {p.name} is {arr.type}")
        nan = pc.is_nan(arr)
        return nan if op == "is_nan" else pc.invert(nan)
    if op in ("starts_with", "not_starts_with"):
        m = pc.starts_with(arr, pattern=str(p.literal))
        return m if op == "starts_with" else pc.invert(m)
    if op in SET_OPS:
        try:
            values = pa.array([_uuid_bytes(v, arr.type) for v in p.literals], type=arr.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
            raise InvalidArgumentError(f"literals {p.literals!r} cannot be compared with {arr.type}: {exc}") from None
        m = pc.is_in(arr, value_set=values)
        m = pc.if_else(pc.is_valid(arr), m, _bool_scalar(None))
        return m if op == "in" else pc.invert(m)
    s = _scalar(p.literal, arr.type)
    fn = {"eq": pc.equal, "ne": pc.not_equal, "lt": pc.less, "le": pc.less_equal,
          "gt": pc.greater, "ge": pc.greater_equal}[op]
    return fn(arr, s)


def _plain_literals(values):
    """Literals as Arrow infers them (a UUID as its 16 bytes)."""
    import uuid
    return [v.bytes if isinstance(v, uuid.UUID) else v for v in values]


def _plain_scalar(value):
    import pyarrow as pa
    try:
        return pa.scalar(_plain_literals([value])[0])
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
        raise InvalidArgumentError(f"literal {value!r} has no Arrow scalar: {exc}") from None


def to_arrow_expression(expr: Expression):
    """A ``pyarrow.compute.Expression`` for dataset/Parquet filters (same null semantics)."""
    import pyarrow.compute as pc

    return _arrow_expression(rewrite_not(expr), pc)


def _arrow_expression(e, pc):
    """The ``pyarrow.compute.Expression`` of ``e`` (NOT already pushed to the leaves; a module-level function
    for the reason :func:`_numpy_mask` gives)."""
    if isinstance(e, AlwaysTrue):
        return pc.scalar(True)
    if isinstance(e, AlwaysFalse):
        return pc.scalar(False)
    if isinstance(e, And):
        return _arrow_expression(e.left, pc) & _arrow_expression(e.right, pc)
    if isinstance(e, Or):
        return _arrow_expression(e.left, pc) | _arrow_expression(e.right, pc)
    if isinstance(e, Not):
        return ~_arrow_expression(e.child, pc)
    f = pc.field(*e.name.split("."))
    op = e.op
    if op == "is_null":
        return f.is_null()
    if op == "not_null":
        return f.is_valid()
    if op == "is_nan":
        return f.is_nan()
    if op == "not_nan":
        return ~f.is_nan()
    if op == "starts_with":
        return pc.starts_with(f, pattern=e.literal)
    if op == "not_starts_with":
        return ~pc.starts_with(f, pattern=e.literal)
    if op == "in":
        return f.isin(_plain_literals(e.literals))
    if op == "not_in":
        return ~f.isin(_plain_literals(e.literals)) & f.is_valid()
    lit = _plain_scalar(e.literal)
    return {"eq": f == lit, "ne": f != lit, "lt": f < lit, "le": f <= lit, "gt": f > lit,
            "ge": f >= lit}[op]


# ---------------------------------------------------------------------------
# parsing
# ---------------------------------------------------------------------------

#: the tokens of a filter string (compiled on the first parse: a process that never parses one does not pay it)
_TOKEN_PATTERN = r"""\s*(?:
    (?P<num>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)
  | (?P<str>'(?:[^']|'')*')
  | (?P<hex>[xX]'[0-9a-fA-F]*')
  | (?P<qid>`(?:[^`]|``)*`|"(?:[^"]|"")*")
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<op><=|>=|!=|<>|==|=|<|>|\(|\)|,)
)"""
_token = None

#: how deep parentheses and NOT may nest in a filter string (deeper input is refused, not recursed into)
MAX_FILTER_DEPTH = 100
#: AND/OR chains up to this many terms fold to the left, ``((a and b) and c)``; longer chains are grouped as a
#: balanced tree of such runs so that the expression's depth grows with the logarithm of the chain length
_LEFT_FOLD = 8

_KEYWORDS = {"and", "or", "not", "in", "is", "null", "true", "false", "like", "between", "date", "timestamp",
             "is_nan", "isnan"}


def _tokenize(text):
    global _token
    if _token is None:
        _token = re.compile(_TOKEN_PATTERN, re.X)
    pos = 0
    out = []
    text = text.rstrip()
    while pos < len(text):
        m = _token.match(text, pos)
        if not m or m.end() == pos:
            raise InvalidArgumentError(f"cannot parse filter {text!r} at position {pos}")
        kind = m.lastgroup
        val = m.group(kind)
        start = m.start(kind)
        if kind == "id" and val.lower() in _KEYWORDS:
            kind, val = "kw", val.lower()
        out.append((kind, val, start))
        pos = m.end()
    return out


class _FilterParser:
    def __init__(self, text):
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0
        self.depth = 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None, len(self.text))

    def fail(self, what):
        raise InvalidArgumentError(f"cannot parse filter {self.text!r}: expected {what} at position "
                                   f"{self.peek()[2]}")

    def take(self):
        t = self.peek()
        if t[0] is None:
            self.fail("more input")
        self.i += 1
        return t

    def accept(self, kind, val=None):
        k, v, _ = self.peek()
        if k == kind and (val is None or v == val):
            self.i += 1
            return True
        return False

    def expect(self, kind, val=None):
        if not self.accept(kind, val):
            self.fail(val or kind)

    def parse(self):
        e = self.or_expr()
        if self.peek()[0] is not None:
            self.fail("end of filter")
        return e

    def or_expr(self):
        terms = [self.and_expr()]
        while self.accept("kw", "or"):
            terms.append(self.and_expr())
        return _fold(Or, terms)

    def and_expr(self):
        terms = [self.not_expr()]
        while self.accept("kw", "and"):
            terms.append(self.not_expr())
        return _fold(And, terms)

    def nest(self, kind, val):
        """Enter one level of parentheses or NOT (when the next token is one); refuses input nested deeper than
        MAX_FILTER_DEPTH, naming the position of the token that goes one level too deep."""
        pos = self.peek()[2]
        if not self.accept(kind, val):
            return False
        self.depth += 1
        if self.depth > MAX_FILTER_DEPTH:
            raise InvalidArgumentError(f"cannot parse filter {self.text!r}: parentheses and NOT nest deeper than "
                                       f"{MAX_FILTER_DEPTH} levels at position {pos}")
        return True

    def not_expr(self):
        negations = 0
        while self.nest("kw", "not"):
            negations += 1
        e = self.primary()
        for _ in range(negations):
            e = Not(e)
        self.depth -= negations
        return e

    def literal(self):
        kind, val, _ = self.take()
        if kind == "num":
            try:
                return float(val) if any(c in val for c in ".eE") else int(val)
            except ValueError:   # an integer longer than Python converts from a string
                self.i -= 1
                self.fail(f"a number of at most {_sys.get_int_max_str_digits()} digits")
        if kind == "str":
            return val[1:-1].replace("''", "'")
        if kind == "hex":
            if (len(val) - 3) % 2:   # X'...': the digits come in pairs
                self.i -= 1
                self.fail("an even number of hex digits")
            return bytes.fromhex(val[2:-1])
        if kind == "kw" and val in ("true", "false"):
            return val == "true"
        if kind == "kw" and val == "date":
            k, v, _ = self.take()
            if k != "str":
                self.fail("a date string")
            try:
                return _dt.date.fromisoformat(v[1:-1])
            except ValueError:
                self.i -= 1
                self.fail("an ISO date")
        if kind == "kw" and val == "timestamp":
            k, v, _ = self.take()
            if k != "str":
                self.fail("a timestamp string")
            try:
                return _dt.datetime.fromisoformat(v[1:-1])
            except ValueError:
                self.i -= 1
                self.fail("an ISO timestamp")
        self.i -= 1
        self.fail("a literal")

    def name(self):
        kind, val, pos = self.take()
        self.name_pos = pos
        if kind == "id":
            return val
        if kind == "qid":
            q = val[0]
            return val[1:-1].replace(q + q, q)
        self.i -= 1
        self.fail("a column name")

    def primary(self):
        """A predicate (its Predicate objects remember the column's position for bind errors) or a group."""
        e = self._primary()
        self._mark(e)
        return e

    def _mark(self, e):
        if isinstance(e, Predicate):
            if e.source is None:
                e.source = (self.text, self.name_pos)
        elif isinstance(e, (And, Or)):
            self._mark(e.left)
            self._mark(e.right)
        elif isinstance(e, Not):
            self._mark(e.child)

    def _primary(self):
        if self.nest("op", "("):
            e = self.or_expr()
            self.expect("op", ")")
            self.depth -= 1
            return e
        if self.accept("kw", "true"):
            return AlwaysTrue()
        if self.accept("kw", "false"):
            return AlwaysFalse()
        if self.peek()[0] == "kw" and self.peek()[1] in ("is_nan", "isnan"):
            self.take()
            self.expect("op", "(")
            n = self.name()
            self.expect("op", ")")
            return Predicate("is_nan", n)
        if self.peek()[0] in ("num", "str", "hex") or (self.peek()[0] == "kw" and self.peek()[1] in ("date",
                                                                                                     "timestamp")):
            lit = self.literal()
            kind, op, _ = self.take()
            sym = {"=": "eq", "==": "eq", "!=": "ne", "<>": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
            if kind != "op" or op not in sym:
                self.i -= 1
                self.fail("a comparison")
            return Predicate(FLIP[sym[op]], self.name(), lit)
        n = self.name()
        kind, val, _ = self.peek()
        if kind == "op" and val in ("=", "==", "!=", "<>", "<", "<=", ">", ">="):
            self.take()
            sym = {"=": "eq", "==": "eq", "!=": "ne", "<>": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
            if self.peek()[:2] == ("kw", "null"):
                self.fail("a literal (use IS NULL for nulls)")
            return Predicate(sym[val], n, self.literal())
        if self.accept("kw", "is"):
            negated = self.accept("kw", "not")
            self.expect("kw", "null")
            return Predicate("not_null" if negated else "is_null", n)
        negated = self.accept("kw", "not")
        if self.accept("kw", "in"):
            self.expect("op", "(")
            values = [self.literal()]
            while self.accept("op", ","):
                values.append(self.literal())
            self.expect("op", ")")
            return Predicate("not_in" if negated else "in", n, literals=values)
        if self.accept("kw", "like"):
            pattern = self.literal()
            if not isinstance(pattern, str) or not pattern.endswith("%") or any(
                    c in pattern[:-1] for c in "%_"):
                raise InvalidArgumentError(f"only prefix patterns ('abc%') are supported in LIKE, got {pattern!r}")
            return Predicate("not_starts_with" if negated else "starts_with", n, pattern[:-1])
        if self.accept("kw", "between"):
            low = self.literal()
            self.expect("kw", "and")
            high = self.literal()
            e = And(Predicate("ge", n, low), Predicate("le", n, high))
            return Not(e) if negated else e
        self.fail("an operator")


def _fold(cls, terms):
    """``terms`` joined by ``cls`` (And/Or): folded to the left, long chains as a balanced tree of such runs."""
    if len(terms) <= _LEFT_FOLD:
        e = terms[0]
        for t in terms[1:]:
            e = cls(e, t)
        return e
    mid = len(terms) // 2
    return cls(_fold(cls, terms[:mid]), _fold(cls, terms[mid:]))


def parse(text: str) -> Expression:
    """Parse a filter such as ``"x > 5 and (y = 'a' or z is null)"``.

    Supports ``= == != <> < <= > >=``, ``IS [NOT] NULL``, ``[NOT] IN (...)``, ``[NOT] LIKE 'prefix%'``,
    ``[NOT] BETWEEN a AND b``, ``is_nan(x)``, ``AND``/``OR``/``NOT``, parentheses, ``true``/``false``;
    literals: numbers, 'strings', X'hex', ``DATE '2024-01-31'``, ``TIMESTAMP '2024-01-31T10:00:00'``;
    names: bare, dotted (nested), or quoted with backticks or double quotes.

    Errors are :class:`~paimon_engine.errors.InvalidArgumentError` naming the position in ``text``. Parentheses
    and ``NOT`` nest at most :data:`MAX_FILTER_DEPTH` levels; long ``AND``/``OR`` chains are grouped as a
    balanced tree, so any chain length binds and evaluates without deep recursion.
    """
    if not isinstance(text, str):
        raise InvalidArgumentError(f"filter must be a string, got {type(text).__name__}")
    if not text.strip():
        return AlwaysTrue()
    return _FilterParser(text).parse()


# -- pyiceberg's predicate class names --------------------------------------------------------------------------
def _term(term) -> str:
    name = getattr(term, "name", term)
    if not isinstance(name, str) or not name:
        raise InvalidArgumentError(f"a predicate needs a column name or reference, got {term!r}")
    return name


class _Unary(Predicate):
    __slots__ = ()
    _op = ""

    def __init__(self, term):
        super().__init__(self._op, _term(term))


class _WithLiteral(Predicate):
    __slots__ = ()
    _op = ""

    def __init__(self, term, literal):
        super().__init__(self._op, _term(term), getattr(literal, "value", literal))


class _WithSet(Predicate):
    __slots__ = ()
    _op = ""

    def __init__(self, term, literals):
        if isinstance(literals, (str, bytes)):
            raise InvalidArgumentError(f"{type(self).__name__} needs a collection of literals, got {literals!r}")
        super().__init__(self._op, _term(term), literals=[getattr(v, "value", v) for v in literals])


def _named(base, name, op):
    cls = type(name, (base,), {"__slots__": (), "_op": op, "__doc__": f"pyiceberg's ``{name}`` (``{op}``)."})
    cls.__module__ = __name__
    return cls


EqualTo = _named(_WithLiteral, "EqualTo", "eq")
NotEqualTo = _named(_WithLiteral, "NotEqualTo", "ne")
GreaterThan = _named(_WithLiteral, "GreaterThan", "gt")
GreaterThanOrEqual = _named(_WithLiteral, "GreaterThanOrEqual", "ge")
LessThan = _named(_WithLiteral, "LessThan", "lt")
LessThanOrEqual = _named(_WithLiteral, "LessThanOrEqual", "le")
StartsWith = _named(_WithLiteral, "StartsWith", "starts_with")
NotStartsWith = _named(_WithLiteral, "NotStartsWith", "not_starts_with")
In = _named(_WithSet, "In", "in")
NotIn = _named(_WithSet, "NotIn", "not_in")
IsNull = _named(_Unary, "IsNull", "is_null")
NotNull = _named(_Unary, "NotNull", "not_null")
IsNaN = _named(_Unary, "IsNaN", "is_nan")
NotNaN = _named(_Unary, "NotNaN", "not_nan")
