"""One logical type model for Paimon and Iceberg types.

Types are immutable values. ``nullable`` is part of the type (Paimon style);
Iceberg's ``required`` is ``not nullable`` on the field. Nested fields carry
ids (Iceberg field ids, Paimon field ids).

* Paimon type strings: :func:`parse_paimon_type` / ``DataType.to_paimon_string()``
  (``DECIMAL(38, 10)``, ``MAP<STRING NOT NULL, INT>``, ``ROW<x INT, y STRING>``).
* Iceberg JSON types: :func:`from_iceberg` / ``DataType.to_iceberg()``.
* Arrow: :func:`from_arrow` / ``DataType.to_arrow()``.

Mapping notes: Iceberg ``long`` is BIGINT, ``string`` is STRING (VARCHAR of
max length), ``binary`` is BYTES, ``fixed[L]`` is BINARY(L), ``time`` is TIME(6),
``timestamp``/``timestamptz`` are TIMESTAMP(6)/TIMESTAMP(6) WITH LOCAL TIME ZONE
(``timestamp_ns``/``timestamptz_ns`` precision 9), ``uuid`` is UUID.
"""

from __future__ import annotations

import re

from .errors import SchemaError, UnsupportedTypeError

__all__ = [
    "DataType", "BooleanType", "TinyIntType", "SmallIntType", "IntType", "BigIntType",
    "FloatType", "DoubleType", "CharType", "VarCharType", "BinaryType", "VarBinaryType",
    "DecimalType", "DateType", "TimeType", "TimestampType", "LocalZonedTimestampType",
    "VariantType", "variant_paths", "refuse_variant", "UnknownType", "UuidType", "ArrayType", "MapType", "MultisetType", "RowType", "DataField",
    "STRING", "BYTES", "MAX_LENGTH", "parse_paimon_type", "from_iceberg", "from_arrow",
    "schema_from_arrow",
]

MAX_LENGTH = 2147483647


class DataType:
    """Base of every logical type. Subclasses define ``_params`` and a root name."""

    __slots__ = ("nullable",)
    root = "?"

    def __init__(self, nullable: bool = True):
        self.nullable = bool(nullable)

    # -- identity -----------------------------------------------------------
    def _params(self) -> tuple:
        return ()

    def __eq__(self, other):
        return type(self) is type(other) and self.nullable == other.nullable and self._params() == other._params()

    def __hash__(self):
        return hash((type(self).__name__, self.nullable, self._params()))

    def __repr__(self):
        return self.to_paimon_string()

    def copy(self, nullable: bool | None = None) -> "DataType":
        """The same type with another nullability."""
        new = object.__new__(type(self))
        for cls in type(self).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                object.__setattr__(new, slot, getattr(self, slot))
        new.nullable = self.nullable if nullable is None else bool(nullable)
        return new

    def equals_ignore_nullable(self, other) -> bool:
        return type(self) is type(other) and self._params_ignore_nullable() == other._params_ignore_nullable()

    def _params_ignore_nullable(self):
        return self._params()

    # -- properties ----------------------------------------------------------
    @property
    def is_nested(self) -> bool:
        return False

    @property
    def fixed_width(self) -> int | None:
        """Bytes of the value in Arrow's fixed-width layout, or None."""
        return None

    # -- Paimon strings ------------------------------------------------------
    def _paimon_body(self) -> str:
        return self.root

    def to_paimon_string(self) -> str:
        return self._paimon_body() + ("" if self.nullable else " NOT NULL")

    # -- Iceberg -------------------------------------------------------------
    def to_iceberg(self):
        raise UnsupportedTypeError(f"{self.to_paimon_string()} has no Iceberg equivalent")

    # -- Arrow ---------------------------------------------------------------
    def to_arrow(self):
        raise UnsupportedTypeError(f"{self.to_paimon_string()} has no Arrow mapping")


class _Simple(DataType):
    __slots__ = ()
    iceberg_name: str | None = None
    width: int | None = None

    def to_iceberg(self):
        if self.iceberg_name is None:
            return super().to_iceberg()
        return self.iceberg_name

    @property
    def fixed_width(self):
        return self.width


class BooleanType(_Simple):
    __slots__ = ()
    root = "BOOLEAN"
    iceberg_name = "boolean"

    def to_arrow(self):
        import pyarrow as pa
        return pa.bool_()


class TinyIntType(_Simple):
    __slots__ = ()
    root = "TINYINT"
    width = 1

    def to_iceberg(self):
        return "int"

    def to_arrow(self):
        import pyarrow as pa
        return pa.int8()


class SmallIntType(_Simple):
    __slots__ = ()
    root = "SMALLINT"
    width = 2

    def to_iceberg(self):
        return "int"

    def to_arrow(self):
        import pyarrow as pa
        return pa.int16()


class IntType(_Simple):
    __slots__ = ()
    root = "INT"
    iceberg_name = "int"
    width = 4

    def to_arrow(self):
        import pyarrow as pa
        return pa.int32()


class BigIntType(_Simple):
    __slots__ = ()
    root = "BIGINT"
    iceberg_name = "long"
    width = 8

    def to_arrow(self):
        import pyarrow as pa
        return pa.int64()


class FloatType(_Simple):
    __slots__ = ()
    root = "FLOAT"
    iceberg_name = "float"
    width = 4

    def to_arrow(self):
        import pyarrow as pa
        return pa.float32()


class DoubleType(_Simple):
    __slots__ = ()
    root = "DOUBLE"
    iceberg_name = "double"
    width = 8

    def to_arrow(self):
        import pyarrow as pa
        return pa.float64()


class DateType(_Simple):
    __slots__ = ()
    root = "DATE"
    iceberg_name = "date"
    width = 4

    def to_arrow(self):
        import pyarrow as pa
        return pa.date32()


class VariantType(_Simple):
    """Semi-structured value: in Arrow (and unshredded in Parquet) a struct of the binaries ``metadata`` and
    ``value`` of the Parquet Variant encoding (:mod:`paimon_engine.formats.variant` decodes them)."""
    __slots__ = ()
    root = "VARIANT"

    def to_iceberg(self):
        return "variant"

    def to_arrow(self):
        import pyarrow as pa
        return pa.struct([pa.field("metadata", pa.binary(), nullable=False),
                          pa.field("value", pa.binary(), nullable=False)])


def variant_paths(dtype: DataType, prefix: str = "") -> list:
    """Dotted names of the ``variant`` values inside ``dtype`` (a RowType's fields, list elements, map keys and
    values); empty when there are none."""
    if isinstance(dtype, VariantType):
        return [prefix]
    out = []
    if isinstance(dtype, RowType):
        for f in dtype.fields:
            out += variant_paths(f.type, f"{prefix}.{f.name}" if prefix else f.name)
    elif isinstance(dtype, ArrayType):
        out += variant_paths(dtype.element, prefix + ".element")
    elif isinstance(dtype, MapType):
        out += variant_paths(dtype.key, prefix + ".key") + variant_paths(dtype.value, prefix + ".value")
    return out


def refuse_variant(dtype: DataType, what: str):
    """:class:`UnsupportedTypeError` naming the first ``variant`` column of ``dtype`` (``what``: ``"filter"`` or
    ``"write"``): variant values (format version 3) are read, but neither compared in filters nor encoded yet."""
    paths = variant_paths(dtype)
    if paths:
        why = "variant values are not compared in filters" if what in ("filter", "read") else \
            "variant values are not encoded yet"
        raise UnsupportedTypeError(f"cannot {what} column {paths[0]!r}: its type variant is not supported here "
                                   f"({why})")


class UnknownType(_Simple):
    """Iceberg v3 ``unknown``: a column whose type is not known yet; every value is null (Arrow ``null``).
    Always optional; it can later be promoted to any type."""
    __slots__ = ()
    root = "UNKNOWN"
    iceberg_name = "unknown"

    def __init__(self, nullable: bool = True):
        if not nullable:
            raise SchemaError("an unknown-type column must be optional (its values are always null)")
        super().__init__(True)

    def copy(self, nullable: bool | None = None):
        if nullable is False:
            raise SchemaError("an unknown-type column must be optional (its values are always null)")
        return UnknownType()

    def to_arrow(self):
        import pyarrow as pa
        return pa.null()


class UuidType(_Simple):
    __slots__ = ()
    root = "UUID"
    iceberg_name = "uuid"
    width = 16

    def to_arrow(self):
        import pyarrow as pa
        return pa.binary(16)


class _Length(DataType):
    __slots__ = ("length",)
    default_length = 1

    def __init__(self, length: int | None = None, nullable: bool = True):
        super().__init__(nullable)
        length = self.default_length if length is None else int(length)
        if length < 1 or length > MAX_LENGTH:
            raise SchemaError(f"{self.root} length must be within 1..{MAX_LENGTH}, got {length}")
        self.length = length

    def _params(self):
        return (self.length,)

    def _paimon_body(self):
        return f"{self.root}({self.length})"


class CharType(_Length):
    __slots__ = ()
    root = "CHAR"

    def to_iceberg(self):
        return "string"

    def to_arrow(self):
        import pyarrow as pa
        return pa.string()


class VarCharType(_Length):
    __slots__ = ()
    root = "VARCHAR"

    def _paimon_body(self):
        return "STRING" if self.length == MAX_LENGTH else f"VARCHAR({self.length})"

    def to_iceberg(self):
        return "string"

    def to_arrow(self):
        import pyarrow as pa
        return pa.string()


class BinaryType(_Length):
    """Fixed-length binary (Iceberg ``fixed[L]``)."""
    __slots__ = ()
    root = "BINARY"

    def to_iceberg(self):
        return f"fixed[{self.length}]"

    def to_arrow(self):
        import pyarrow as pa
        return pa.binary()


class VarBinaryType(_Length):
    __slots__ = ()
    root = "VARBINARY"

    def _paimon_body(self):
        return "BYTES" if self.length == MAX_LENGTH else f"VARBINARY({self.length})"

    def to_iceberg(self):
        return "binary"

    def to_arrow(self):
        import pyarrow as pa
        return pa.binary()


def STRING(nullable: bool = True) -> VarCharType:
    return VarCharType(MAX_LENGTH, nullable)


def BYTES(nullable: bool = True) -> VarBinaryType:
    return VarBinaryType(MAX_LENGTH, nullable)


class DecimalType(DataType):
    __slots__ = ("precision", "scale")
    root = "DECIMAL"

    def __init__(self, precision: int = 10, scale: int = 0, nullable: bool = True):
        super().__init__(nullable)
        precision, scale = int(precision), int(scale)
        if not 1 <= precision <= 38:
            raise SchemaError(f"DECIMAL precision must be within 1..38, got {precision}")
        if not 0 <= scale <= precision:
            raise SchemaError(f"DECIMAL scale must be within 0..{precision}, got {scale}")
        self.precision = precision
        self.scale = scale

    def _params(self):
        return (self.precision, self.scale)

    def _paimon_body(self):
        return f"DECIMAL({self.precision}, {self.scale})"

    @property
    def is_compact(self) -> bool:
        """Stored as an unscaled int64 (precision <= 18)."""
        return self.precision <= 18

    def to_iceberg(self):
        return f"decimal({self.precision}, {self.scale})"

    def to_arrow(self):
        import pyarrow as pa
        return pa.decimal128(self.precision, self.scale)


class _Precision(DataType):
    __slots__ = ("precision",)
    default_precision = 6
    max_precision = 9

    def __init__(self, precision: int | None = None, nullable: bool = True):
        super().__init__(nullable)
        precision = self.default_precision if precision is None else int(precision)
        if not 0 <= precision <= self.max_precision:
            raise SchemaError(f"{self.root} precision must be within 0..{self.max_precision}, got {precision}")
        self.precision = precision

    def _params(self):
        return (self.precision,)

    @property
    def arrow_unit(self) -> str:
        p = self.precision
        return "ms" if p <= 3 else ("us" if p <= 6 else "ns")


class TimeType(_Precision):
    """Time of day. Paimon stores int32 milliseconds whatever the precision."""
    __slots__ = ()
    root = "TIME"
    default_precision = 0

    def _paimon_body(self):
        return f"TIME({self.precision})"

    def to_iceberg(self):
        return "time"

    def to_arrow(self):
        import pyarrow as pa
        unit = self.arrow_unit
        return pa.time32("ms") if unit == "ms" else pa.time64(unit)


class TimestampType(_Precision):
    __slots__ = ()
    root = "TIMESTAMP"

    def _paimon_body(self):
        return f"TIMESTAMP({self.precision})"

    def to_iceberg(self):
        return "timestamp_ns" if self.precision > 6 else "timestamp"

    def to_arrow(self):
        import pyarrow as pa
        return pa.timestamp(self.arrow_unit)


class LocalZonedTimestampType(_Precision):
    """TIMESTAMP WITH LOCAL TIME ZONE: an instant, stored as UTC."""
    __slots__ = ()
    root = "TIMESTAMP_LTZ"

    def _paimon_body(self):
        return f"TIMESTAMP({self.precision}) WITH LOCAL TIME ZONE"

    def to_iceberg(self):
        return "timestamptz_ns" if self.precision > 6 else "timestamptz"

    def to_arrow(self):
        import pyarrow as pa
        return pa.timestamp(self.arrow_unit, tz="UTC")


class DataField:
    """A named, id-carrying field of a ROW (an Iceberg struct field)."""

    __slots__ = ("id", "name", "type", "description", "initial_default", "write_default")

    def __init__(self, id: int, name: str, type: DataType, description: str | None = None,
                 initial_default=None, write_default=None):
        if not isinstance(type, DataType):
            raise SchemaError(f"field {name!r}: {type!r} is not a DataType")
        self.id = int(id)
        self.name = str(name)
        self.type = type
        self.description = description
        self.initial_default = initial_default
        self.write_default = write_default

    @property
    def nullable(self) -> bool:
        return self.type.nullable

    @property
    def required(self) -> bool:
        return not self.type.nullable

    # pyiceberg's NestedField attribute names
    @property
    def field_id(self) -> int:
        return self.id

    @property
    def field_type(self) -> DataType:
        return self.type

    @property
    def doc(self) -> str | None:
        return self.description

    def _key(self):
        return (self.id, self.name, self.type, self.description)

    def __eq__(self, other):
        return isinstance(other, DataField) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"DataField({self.id}, {self.name!r}, {self.type.to_paimon_string()})"

    def with_type(self, type: DataType) -> "DataField":
        return DataField(self.id, self.name, type, self.description, self.initial_default, self.write_default)

    def to_paimon_string(self):
        desc = "" if not self.description else " '" + self.description.replace("'", "''") + "'"
        return f"`{self.name.replace('`', '``')}` {self.type.to_paimon_string()}{desc}"


class ArrayType(DataType):
    __slots__ = ("element", "element_id")
    root = "ARRAY"

    def __init__(self, element: DataType, nullable: bool = True, element_id: int | None = None):
        super().__init__(nullable)
        if not isinstance(element, DataType):
            raise SchemaError(f"ARRAY element {element!r} is not a DataType")
        self.element = element
        self.element_id = element_id

    def _params(self):
        return (self.element,)

    def _params_ignore_nullable(self):
        return (self.element.copy(True),)

    @property
    def is_nested(self):
        return True

    def _paimon_body(self):
        return f"ARRAY<{self.element.to_paimon_string()}>"

    def to_iceberg(self):
        return {"type": "list", "element-id": self.element_id if self.element_id is not None else 0,
                "element-required": not self.element.nullable, "element": self.element.to_iceberg()}

    def to_arrow(self):
        import pyarrow as pa
        return pa.list_(_arrow_field("element", self.element, self.element_id))


class MapType(DataType):
    __slots__ = ("key", "value", "key_id", "value_id")
    root = "MAP"

    def __init__(self, key: DataType, value: DataType, nullable: bool = True,
                 key_id: int | None = None, value_id: int | None = None):
        super().__init__(nullable)
        if not isinstance(key, DataType) or not isinstance(value, DataType):
            raise SchemaError("MAP key and value must be DataTypes")
        self.key = key
        self.value = value
        self.key_id = key_id
        self.value_id = value_id

    def _params(self):
        return (self.key, self.value)

    def _params_ignore_nullable(self):
        return (self.key.copy(True), self.value.copy(True))

    @property
    def is_nested(self):
        return True

    def _paimon_body(self):
        return f"MAP<{self.key.to_paimon_string()}, {self.value.to_paimon_string()}>"

    def to_iceberg(self):
        return {"type": "map", "key-id": self.key_id if self.key_id is not None else 0,
                "key": self.key.to_iceberg(),
                "value-id": self.value_id if self.value_id is not None else 0,
                "value-required": not self.value.nullable, "value": self.value.to_iceberg()}

    def to_arrow(self):
        import pyarrow as pa
        return pa.map_(_arrow_field("key", self.key.copy(False), self.key_id),
                       _arrow_field("value", self.value, self.value_id))


class MultisetType(DataType):
    """MULTISET<T>: stored and exchanged as MAP<T, INT NOT NULL> (element -> count)."""
    __slots__ = ("element",)
    root = "MULTISET"

    def __init__(self, element: DataType, nullable: bool = True):
        super().__init__(nullable)
        self.element = element

    def _params(self):
        return (self.element,)

    @property
    def is_nested(self):
        return True

    def _paimon_body(self):
        return f"MULTISET<{self.element.to_paimon_string()}>"

    def as_map(self) -> MapType:
        return MapType(self.element, IntType(False), self.nullable)

    def to_arrow(self):
        return self.as_map().to_arrow()


class RowType(DataType):
    """A ROW / Iceberg struct; also the type of a whole schema."""

    __slots__ = ("fields", "_by_name")
    root = "ROW"

    def __init__(self, fields, nullable: bool = True):
        super().__init__(nullable)
        fields = tuple(fields)
        names = set()
        for f in fields:
            if not isinstance(f, DataField):
                raise SchemaError(f"ROW field {f!r} is not a DataField")
            if f.name in names:
                raise SchemaError(f"duplicate field name {f.name!r}")
            names.add(f.name)
        self.fields = fields
        self._by_name = {f.name: i for i, f in enumerate(fields)}

    @classmethod
    def of(cls, *pairs, nullable: bool = True, start_id: int = 0) -> "RowType":
        """``RowType.of(("a", IntType()), ("b", STRING()))`` with ids start_id, start_id+1, ..."""
        return cls([DataField(start_id + i, n, t) for i, (n, t) in enumerate(pairs)], nullable)

    def _params(self):
        return self.fields

    def _params_ignore_nullable(self):
        return tuple((f.name, f.type.copy(True)) for f in self.fields)

    @property
    def is_nested(self):
        return True

    @property
    def names(self) -> list:
        return [f.name for f in self.fields]

    def __len__(self):
        return len(self.fields)

    def __iter__(self):
        return iter(self.fields)

    def __contains__(self, name):
        return name in self._by_name

    def index(self, name: str) -> int:
        try:
            return self._by_name[name]
        except KeyError:
            raise SchemaError(f"no field named {name!r}; fields are {self.names}") from None

    def field(self, name_or_index) -> DataField:
        if isinstance(name_or_index, int):
            return self.fields[name_or_index]
        return self.fields[self.index(name_or_index)]

    def field_by_id(self, field_id: int) -> DataField | None:
        for f in self.fields:
            if f.id == field_id:
                return f
        return None

    def project(self, names) -> "RowType":
        return RowType([self.field(n) for n in names], self.nullable)

    def _paimon_body(self):
        return "ROW<" + ", ".join(f.to_paimon_string() for f in self.fields) + ">"

    def to_iceberg(self):
        out = []
        for f in self.fields:
            d = {"id": f.id, "name": f.name, "required": f.required, "type": f.type.to_iceberg()}
            if f.description:
                d["doc"] = f.description
            if f.initial_default is not None:
                d["initial-default"] = f.initial_default
            if f.write_default is not None:
                d["write-default"] = f.write_default
            out.append(d)
        return {"type": "struct", "fields": out}

    def to_arrow(self):
        import pyarrow as pa
        return pa.struct([_arrow_field(f.name, f.type, f.id) for f in self.fields])

    def to_arrow_schema(self):
        """The fields as a ``pyarrow.Schema`` (field ids in ``PARQUET:field_id`` metadata)."""
        import pyarrow as pa
        return pa.schema([_arrow_field(f.name, f.type, f.id) for f in self.fields])


def _arrow_field(name, dtype: DataType, field_id):
    import pyarrow as pa
    meta = None if field_id is None else {b"PARQUET:field_id": str(field_id).encode()}
    return pa.field(name, dtype.to_arrow(), nullable=dtype.nullable, metadata=meta)


# ---------------------------------------------------------------------------
# Paimon type strings
# ---------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(`(?:[^`]|``)*`)|('(?:[^']|'')*')|([A-Za-z_][A-Za-z0-9_$]*)|(\d+)|([<>(),:]))")


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise SchemaError(f"cannot parse type {self.text!r} at position {pos}")
            self.tokens.append((m.lastindex, m.group(m.lastindex), m.start(m.lastindex)))
            pos = m.end()
        self.i = 0

    def peek(self, k=0):
        j = self.i + k
        return self.tokens[j] if j < len(self.tokens) else (None, None, len(self.text))

    def take(self):
        tok = self.peek()
        if tok[0] is None:
            raise SchemaError(f"unexpected end of type {self.text!r}")
        self.i += 1
        return tok

    def fail(self, what):
        raise SchemaError(f"cannot parse type {self.text!r}: expected {what} at position {self.peek()[2]}")

    def expect(self, sym):
        kind, val, _ = self.peek()
        if val != sym or kind not in (5,):
            self.fail(repr(sym))
        self.i += 1

    def word(self, *words):
        kind, val, _ = self.peek()
        if kind == 3 and val.upper() in words:
            self.i += 1
            return val.upper()
        return None

    def int_args(self, max_args):
        args = []
        if self.peek()[1] == "(":
            self.take()
            while True:
                kind, val, _ = self.take()
                if kind != 4:
                    self.fail("a number")
                args.append(int(val))
                if self.peek()[1] == ",":
                    self.take()
                    continue
                self.expect(")")
                break
            if len(args) > max_args:
                self.fail(f"at most {max_args} arguments")
        return args

    def parse_type(self) -> DataType:
        kind, val, _ = self.take()
        if kind != 3:
            self.fail("a type name")
        name = val.upper()
        t = self._body(name)
        if self.word("NOT"):
            if not self.word("NULL"):
                self.fail("NULL")
            t = t.copy(False)
        elif self.word("NULL"):
            pass
        return t

    def _body(self, name) -> DataType:
        simple = {"BOOLEAN": BooleanType, "TINYINT": TinyIntType, "SMALLINT": SmallIntType,
                  "INT": IntType, "INTEGER": IntType, "BIGINT": BigIntType, "FLOAT": FloatType,
                  "DOUBLE": DoubleType, "DATE": DateType, "VARIANT": VariantType, "UUID": UuidType}
        if name in simple:
            if name == "DOUBLE":
                self.word("PRECISION")
            return simple[name]()
        if name == "STRING":
            return STRING()
        if name == "BYTES":
            return BYTES()
        if name in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
            args = self.int_args(1)
            cls = {"CHAR": CharType, "VARCHAR": VarCharType, "BINARY": BinaryType, "VARBINARY": VarBinaryType}[name]
            return cls(args[0] if args else (1 if name in ("CHAR", "BINARY") else 1))
        if name in ("DECIMAL", "DEC", "NUMERIC"):
            args = self.int_args(2)
            return DecimalType(args[0] if args else 10, args[1] if len(args) > 1 else 0)
        if name == "TIME":
            args = self.int_args(1)
            if self.word("WITHOUT"):
                self._words("TIME", "ZONE")
            return TimeType(args[0] if args else 0)
        if name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            args = self.int_args(1)
            p = args[0] if args else 6
            if name == "TIMESTAMP_LTZ":
                return LocalZonedTimestampType(p)
            if self.word("WITH"):
                self._words("LOCAL", "TIME", "ZONE")
                return LocalZonedTimestampType(p)
            if self.word("WITHOUT"):
                self._words("TIME", "ZONE")
            return TimestampType(p)
        if name in ("ARRAY", "MULTISET"):
            self.expect("<")
            elem = self.parse_type()
            self.expect(">")
            return ArrayType(elem) if name == "ARRAY" else MultisetType(elem)
        if name == "MAP":
            self.expect("<")
            k = self.parse_type()
            self.expect(",")
            v = self.parse_type()
            self.expect(">")
            return MapType(k, v)
        if name == "ROW":
            self.expect("<")
            fields = []
            while True:
                kind, val, _ = self.take()
                if kind == 1:
                    fname = val[1:-1].replace("``", "`")
                elif kind == 3:
                    fname = val
                else:
                    self.fail("a field name")
                if self.peek()[1] == ":":
                    self.take()
                ftype = self.parse_type()
                desc = None
                if self.peek()[0] == 2:
                    desc = self.take()[1][1:-1].replace("''", "'")
                fields.append(DataField(len(fields), fname, ftype, desc))
                if self.peek()[1] == ",":
                    self.take()
                    continue
                self.expect(">")
                break
            return RowType(fields)
        raise UnsupportedTypeError(f"unknown type {name!r} in {self.text!r}")

    def _words(self, *words):
        for w in words:
            if not self.word(w):
                self.fail(w)


def parse_paimon_type(text: str) -> DataType:
    """Parse a Paimon (Flink SQL style) type string such as ``MAP<STRING NOT NULL, INT>``."""
    if not isinstance(text, str):
        raise SchemaError(f"type string expected, got {type(text).__name__}")
    p = _Parser(text)
    t = p.parse_type()
    if p.peek()[0] is not None:
        p.fail("end of type")
    return t


# ---------------------------------------------------------------------------
# Iceberg JSON types
# ---------------------------------------------------------------------------

_ICEBERG_PRIMITIVES = {
    "boolean": BooleanType, "int": IntType, "long": BigIntType, "float": FloatType,
    "double": DoubleType, "date": DateType, "uuid": UuidType, "variant": VariantType, "unknown": UnknownType,
    "string": STRING, "binary": BYTES,
    "time": lambda: TimeType(6),
    "timestamp": lambda: TimestampType(6), "timestamptz": lambda: LocalZonedTimestampType(6),
    "timestamp_ns": lambda: TimestampType(9), "timestamptz_ns": lambda: LocalZonedTimestampType(9),
}
_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_FIXED = re.compile(r"^fixed\[\s*(\d+)\s*\]$")
_GEO = re.compile(r"^(geometry|geography)\s*(\(.*\))?$")


def from_iceberg(obj, nullable: bool = True) -> DataType:
    """Iceberg JSON type (string or nested dict) -> DataType."""
    if isinstance(obj, str):
        s = obj.strip()
        ctor = _ICEBERG_PRIMITIVES.get(s)
        if ctor is not None:
            return ctor().copy(nullable)
        m = _DECIMAL.match(s)
        if m:
            return DecimalType(int(m.group(1)), int(m.group(2)), nullable)
        m = _FIXED.match(s)
        if m:
            return BinaryType(int(m.group(1)), nullable)
        if _GEO.match(s):
            raise UnsupportedTypeError(f"Iceberg v3 type {s!r} (geospatial) is not supported: its values cannot "
                                       f"be decoded yet")
        raise UnsupportedTypeError(f"unknown Iceberg type {obj!r}")
    if not isinstance(obj, dict):
        raise SchemaError(f"Iceberg type must be a string or an object, got {obj!r}")
    kind = obj.get("type")
    try:
        if kind == "struct":
            fields = []
            for f in obj["fields"]:
                fields.append(DataField(int(f["id"]), f["name"],
                                        from_iceberg(f["type"], not f.get("required", False)),
                                        f.get("doc"), f.get("initial-default"), f.get("write-default")))
            return RowType(fields, nullable)
        if kind == "list":
            return ArrayType(from_iceberg(obj["element"], not obj.get("element-required", False)),
                             nullable, element_id=int(obj["element-id"]))
        if kind == "map":
            return MapType(from_iceberg(obj["key"], False),
                           from_iceberg(obj["value"], not obj.get("value-required", False)),
                           nullable, key_id=int(obj["key-id"]), value_id=int(obj["value-id"]))
    except KeyError as exc:
        raise SchemaError(f"Iceberg {kind} type is missing {exc.args[0]!r}: {obj!r}") from None
    raise UnsupportedTypeError(f"unknown Iceberg type {obj!r}")


# ---------------------------------------------------------------------------
# Arrow
# ---------------------------------------------------------------------------

def _arrow_field_id(field):
    meta = field.metadata or {}
    raw = meta.get(b"PARQUET:field_id") or meta.get(b"field_id")
    return int(raw) if raw is not None else None


def from_arrow(arrow_type, nullable: bool = True) -> DataType:
    """pyarrow DataType -> DataType."""
    import pyarrow as pa
    t = pa.types
    at = arrow_type
    if t.is_boolean(at):
        r = BooleanType()
    elif t.is_int8(at):
        r = TinyIntType()
    elif t.is_int16(at):
        r = SmallIntType()
    elif t.is_int32(at):
        r = IntType()
    elif t.is_int64(at):
        r = BigIntType()
    elif t.is_uint8(at) or t.is_uint16(at):
        r = IntType() if t.is_uint16(at) else SmallIntType()
    elif t.is_uint32(at):
        r = BigIntType()
    elif t.is_float32(at):
        r = FloatType()
    elif t.is_float64(at):
        r = DoubleType()
    elif t.is_string(at) or t.is_large_string(at) or (hasattr(t, "is_string_view") and t.is_string_view(at)):
        r = STRING()
    elif t.is_fixed_size_binary(at):
        r = BinaryType(at.byte_width)
    elif t.is_binary(at) or t.is_large_binary(at) or (hasattr(t, "is_binary_view") and t.is_binary_view(at)):
        r = BYTES()
    elif t.is_decimal(at):
        r = DecimalType(at.precision, at.scale)
    elif t.is_date32(at) or t.is_date64(at):
        r = DateType()
    elif t.is_time(at):
        r = TimeType({"s": 0, "ms": 3, "us": 6, "ns": 9}[at.unit])
    elif t.is_timestamp(at):
        p = {"s": 0, "ms": 3, "us": 6, "ns": 9}[at.unit]
        r = LocalZonedTimestampType(p) if at.tz is not None else TimestampType(p)
    elif t.is_map(at):
        kf, vf = at.key_field, at.item_field
        r = MapType(from_arrow(kf.type, False), from_arrow(vf.type, vf.nullable),
                    key_id=_arrow_field_id(kf), value_id=_arrow_field_id(vf))
    elif t.is_list(at) or t.is_large_list(at) or t.is_fixed_size_list(at):
        vf = at.value_field
        r = ArrayType(from_arrow(vf.type, vf.nullable), element_id=_arrow_field_id(vf))
    elif t.is_struct(at):
        r = RowType([_field_from_arrow(at.field(i), i) for i in range(at.num_fields)])
    elif t.is_dictionary(at):
        return from_arrow(at.value_type, nullable)
    elif t.is_null(at):
        return UnknownType()
    else:
        raise UnsupportedTypeError(f"Arrow type {at} has no logical type")
    return r.copy(nullable)


def _field_from_arrow(field, index):
    fid = _arrow_field_id(field)
    return DataField(index if fid is None else fid, field.name, from_arrow(field.type, field.nullable))


def schema_from_arrow(schema) -> RowType:
    """pyarrow Schema -> RowType (ids from field metadata, else positions)."""
    return RowType([_field_from_arrow(schema.field(i), i) for i in range(len(schema))])
