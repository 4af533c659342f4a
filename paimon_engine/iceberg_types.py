"""pyiceberg's names for types, schemas, partition specs, transforms and sort orders, building this library's own
objects.

``paimon_engine.types`` keeps Paimon's type names, several of which mean something else in pyiceberg
(``TimestampType``, ``DecimalType``, ``MapType``, ``BinaryType`` ...). A script written for pyiceberg imports these
names from here instead of ``pyiceberg.types``, ``pyiceberg.schema``, ``pyiceberg.partitioning``,
``pyiceberg.transforms`` and ``pyiceberg.table.sorting``::

    from paimon_engine.iceberg_types import LongType, NestedField, Schema, StringType

    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType()))

Each type "class" here is a constructor: ``LongType()`` returns a :class:`paimon_engine.types.BigIntType`, and
``isinstance(t, LongType)`` is true for it. ``Schema(...)`` returns a
:class:`paimon_engine.spec.schema.Schema`, ``PartitionSpec(...)`` a
:class:`paimon_engine.spec.partitioning.PartitionSpec`, so what these build goes wherever the library's own
objects go (``create_table``, ``update_schema().add_column`` ...).
"""

from __future__ import annotations

from . import types as T
from .errors import InvalidArgumentError, SchemaError
from .spec.partitioning import PartitionField as _PartitionField
from .spec.partitioning import PartitionSpec as _PartitionSpec
from .spec.schema import Schema as _Schema
from .spec.sorting import SortField as _SortField
from .spec.sorting import SortOrder as _SortOrder
from .spec.transforms import (BucketTransform, DayTransform, HourTransform, IdentityTransform, MonthTransform,
                               Transform, TruncateTransform, VoidTransform, YearTransform)

__all__ = ["BooleanType", "IntegerType", "LongType", "FloatType", "DoubleType", "DecimalType", "StringType",
           "BinaryType", "FixedType", "UUIDType", "DateType", "TimeType", "TimestampType", "TimestamptzType",
           "TimestampNanoType", "TimestamptzNanoType", "ListType", "MapType", "StructType", "NestedField",
           "Schema", "PartitionSpec", "PartitionField", "UNPARTITIONED_PARTITION_SPEC", "Transform",
           "IdentityTransform", "BucketTransform", "TruncateTransform", "YearTransform", "MonthTransform",
           "DayTransform", "HourTransform", "VoidTransform", "SortOrder", "SortField", "SortDirection",
           "NullOrder", "UNSORTED_SORT_ORDER"]


class _Alias(type):
    """Metaclass of the pyiceberg-named constructors: calling one builds the library's type, ``isinstance``
    recognises the library's type."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls._target) and cls._matches(obj)


class _Primitive(metaclass=_Alias):
    _target = T.DataType

    @classmethod
    def _matches(cls, obj):
        return True


def _primitive(name, target, build, matches=None, doc=""):
    def new(cls, *args, **kw):
        return build(*args, **kw)
    attrs = {"__new__": new, "_target": target, "__doc__": doc or f"pyiceberg's ``{name}``: builds {target.__name__}."}
    if matches is not None:
        attrs["_matches"] = classmethod(lambda cls, obj: matches(obj))
    return _Alias(name, (_Primitive,), attrs)


BooleanType = _primitive("BooleanType", T.BooleanType, lambda: T.BooleanType())
IntegerType = _primitive("IntegerType", T.IntType, lambda: T.IntType())
LongType = _primitive("LongType", T.BigIntType, lambda: T.BigIntType())
FloatType = _primitive("FloatType", T.FloatType, lambda: T.FloatType())
DoubleType = _primitive("DoubleType", T.DoubleType, lambda: T.DoubleType())
DecimalType = _primitive("DecimalType", T.DecimalType, lambda precision, scale: T.DecimalType(precision, scale),
                         doc="pyiceberg's ``DecimalType(precision, scale)``.")
StringType = _primitive("StringType", T.VarCharType, lambda: T.STRING())
BinaryType = _primitive("BinaryType", T.VarBinaryType, lambda: T.BYTES(),
                        doc="pyiceberg's variable-length ``BinaryType`` (Paimon's ``VarBinaryType``; Paimon's "
                            "``BinaryType`` is pyiceberg's ``FixedType``).")
FixedType = _primitive("FixedType", T.BinaryType, lambda length: T.BinaryType(length),
                       doc="pyiceberg's ``FixedType(length)``: fixed-length bytes (Paimon's ``BinaryType``).")
UUIDType = _primitive("UUIDType", T.UuidType, lambda: T.UuidType())
DateType = _primitive("DateType", T.DateType, lambda: T.DateType())
TimeType = _primitive("TimeType", T.TimeType, lambda: T.TimeType(6))
TimestampType = _primitive("TimestampType", T.TimestampType, lambda: T.TimestampType(6),
                           lambda t: (t.precision or 6) <= 6, "pyiceberg's ``TimestampType``: microseconds, no zone.")
TimestamptzType = _primitive("TimestamptzType", T.LocalZonedTimestampType, lambda: T.LocalZonedTimestampType(6),
                             lambda t: (t.precision or 6) <= 6, "pyiceberg's ``TimestamptzType``: microseconds, UTC.")
TimestampNanoType = _primitive("TimestampNanoType", T.TimestampType, lambda: T.TimestampType(9),
                               lambda t: (t.precision or 6) > 6)
TimestamptzNanoType = _primitive("TimestamptzNanoType", T.LocalZonedTimestampType,
                                 lambda: T.LocalZonedTimestampType(9), lambda t: (t.precision or 6) > 6)


def _check_type(t, what):
    if not isinstance(t, T.DataType):
        raise SchemaError(f"{what} must be a type (LongType(), StringType() ...), got {t!r}")
    return t


def _list(element_id: int, element=None, element_required: bool = True, *, element_type=None):
    if element is None:
        element = element_type
    element = _check_type(element, "ListType element")
    return T.ArrayType(element.copy(not element_required), element_id=int(element_id))


def _map(key_id: int, key_type, value_id: int, value_type, value_required: bool = True):
    key = _check_type(key_type, "MapType key").copy(False)
    value = _check_type(value_type, "MapType value").copy(not value_required)
    return T.MapType(key, value, key_id=int(key_id), value_id=int(value_id))


ListType = _primitive("ListType", T.ArrayType, _list,
                      doc="pyiceberg's ``ListType(element_id, element, element_required=True)``.")
MapType = _primitive("MapType", T.MapType, _map,
                     doc="pyiceberg's ``MapType(key_id, key_type, value_id, value_type, value_required=True)``.")
StructType = _primitive("StructType", T.RowType, lambda *fields: T.RowType(list(fields)),
                        doc="pyiceberg's ``StructType(*fields)`` of :func:`NestedField`.")


class NestedField(metaclass=_Alias):
    """pyiceberg's ``NestedField(field_id, name, field_type, required=False, doc=None)``: builds a
    :class:`paimon_engine.types.DataField` (nullability lives on its type)."""

    _target = T.DataField

    @classmethod
    def _matches(cls, obj):
        return True

    def __new__(cls, field_id: int, name: str, field_type=None, required: bool = False, doc: str | None = None,
                initial_default=None, write_default=None):
        t = _check_type(field_type, f"field {name!r}'s type").copy(not required)
        return T.DataField(int(field_id), str(name), t, doc, initial_default, write_default)


def Schema(*fields, schema_id: int = 0, identifier_field_ids=()):
    """pyiceberg's ``Schema(*fields, schema_id=0, identifier_field_ids=[])`` -> a
    :class:`paimon_engine.spec.schema.Schema`."""
    for f in fields:
        if not isinstance(f, T.DataField):
            raise SchemaError(f"Schema takes NestedField(...) fields, got {f!r}")
    return _Schema(T.RowType(list(fields)), schema_id, identifier_field_ids)


def PartitionField(source_id: int, field_id: int, transform, name: str):
    """pyiceberg's ``PartitionField(source_id, field_id, transform, name)``."""
    return _PartitionField(source_id, field_id, transform, name)


def PartitionSpec(*fields, spec_id: int = 0):
    """pyiceberg's ``PartitionSpec(*fields, spec_id=0)``."""
    for f in fields:
        if not isinstance(f, _PartitionField):
            raise InvalidArgumentError(f"PartitionSpec takes PartitionField(...) fields, got {f!r}")
    return _PartitionSpec(fields, spec_id)


UNPARTITIONED_PARTITION_SPEC = _PartitionSpec((), 0)


class SortDirection:
    """pyiceberg's ``SortDirection.ASC`` / ``DESC``."""
    ASC = "asc"
    DESC = "desc"


class NullOrder:
    """pyiceberg's ``NullOrder.NULLS_FIRST`` / ``NULLS_LAST``."""
    NULLS_FIRST = "nulls-first"
    NULLS_LAST = "nulls-last"


def SortField(source_id: int, transform=None, direction: str = SortDirection.ASC, null_order: str | None = None):
    """pyiceberg's ``SortField(source_id, transform=IdentityTransform(), direction=ASC, null_order=...)``."""
    return _SortField(source_id, transform if transform is not None else IdentityTransform(), direction,
                      null_order)


def SortOrder(*fields, order_id: int | None = None):
    """pyiceberg's ``SortOrder(*fields, order_id=1)``."""
    return _SortOrder(fields, order_id)


UNSORTED_SORT_ORDER = _SortOrder((), 0)
