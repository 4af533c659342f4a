"""Sort orders: fields (source id, transform, direction, null order); order id 0 is the unsorted order."""

from __future__ import annotations

from ..errors import InvalidArgumentError
from .transforms import parse_transform

__all__ = ["SortField", "SortOrder", "UNSORTED"]

_DIRECTIONS = ("asc", "desc")
_NULL_ORDERS = ("nulls-first", "nulls-last")


_FIELD_KEYS = frozenset(("transform", "source-id", "source-ids", "direction", "null-order"))
_ORDER_KEYS = frozenset(("order-id", "fields"))


class SortField:
    """One sort field; ``extra`` keeps unknown JSON keys (another writer's), written back unchanged."""

    __slots__ = ("source_id", "transform", "direction", "null_order", "extra")

    def __init__(self, source_id: int, transform="identity", direction: str = "asc", null_order: str | None = None,
                 extra=None):
        if direction not in _DIRECTIONS:
            raise InvalidArgumentError(f"sort direction must be one of {_DIRECTIONS}, got {direction!r}")
        if null_order is None:
            null_order = "nulls-first" if direction == "asc" else "nulls-last"
        if null_order not in _NULL_ORDERS:
            raise InvalidArgumentError(f"null order must be one of {_NULL_ORDERS}, got {null_order!r}")
        self.source_id = int(source_id)
        self.transform = parse_transform(transform)
        self.direction = direction
        self.null_order = null_order
        self.extra = dict(extra or {})

    def to_dict(self):
        d = {"transform": str(self.transform), "source-id": self.source_id, "direction": self.direction,
             "null-order": self.null_order}
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d):
        if not isinstance(d, dict):
            raise InvalidArgumentError(f"sort field must be an object, got {d!r}")
        src = d.get("source-id", (d.get("source-ids") or [None])[0])
        for key, val in (("source-id", src), ("transform", d.get("transform")),
                         ("direction", d.get("direction")), ("null-order", d.get("null-order"))):
            if val is None:
                raise InvalidArgumentError(f"sort field is missing required field {key!r}: {d!r}")
        return cls(src, d["transform"], d["direction"], d["null-order"],
                   {k: v for k, v in d.items() if k not in _FIELD_KEYS})

    def _key(self):
        return (self.source_id, str(self.transform), self.direction, self.null_order)

    def __eq__(self, other):
        return isinstance(other, SortField) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"SortField({self.source_id}, {self.transform}, {self.direction}, {self.null_order})"


class SortOrder:
    __slots__ = ("order_id", "fields", "extra")

    def __init__(self, fields=(), order_id: int | None = None, extra=None):
        self.fields = tuple(fields)
        self.extra = dict(extra or {})  # unknown JSON keys, written back unchanged
        self.order_id = int(order_id) if order_id is not None else (1 if self.fields else 0)
        if self.order_id == 0 and self.fields:
            raise InvalidArgumentError("sort order id 0 is reserved for the unsorted order")

    @property
    def is_unsorted(self):
        return not self.fields

    def to_dict(self):
        d = {"order-id": self.order_id, "fields": [f.to_dict() for f in self.fields]}
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d):
        if not isinstance(d, dict) or not isinstance(d.get("fields"), list):
            raise InvalidArgumentError(f"sort order must be an object with 'fields', got {d!r}")
        if "order-id" not in d:
            raise InvalidArgumentError("sort order is missing required field 'order-id'")
        return cls([SortField.from_dict(f) for f in d["fields"]], d["order-id"],
                   {k: v for k, v in d.items() if k not in _ORDER_KEYS})

    def __eq__(self, other):
        return isinstance(other, SortOrder) and self.order_id == other.order_id and self.fields == other.fields

    def __hash__(self):
        return hash((self.order_id, self.fields))

    def __repr__(self):
        return f"SortOrder(id={self.order_id}, {list(self.fields)})"


UNSORTED = SortOrder((), 0)
