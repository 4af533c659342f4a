"""Partition specs: fields (source id, partition field id from 1000, transform, name), the partition struct type,
partition paths, and partition evolution (add / remove / rename fields; v1 replaces removed fields with ``void``)."""

from __future__ import annotations

from urllib.parse import quote

from .. import types as T
from ..errors import InvalidArgumentError, SchemaError
from .transforms import Transform, VoidTransform, parse_transform

__all__ = ["PartitionField", "PartitionSpec", "UNPARTITIONED", "PARTITION_FIELD_ID_START", "evolve_spec"]

PARTITION_FIELD_ID_START = 1000


_FIELD_KEYS = frozenset(("name", "transform", "source-id", "source-ids", "field-id"))
_SPEC_KEYS = frozenset(("spec-id", "fields"))


class PartitionField:
    """One partition field; ``extra`` keeps JSON keys this library does not know (another writer's), written back
    unchanged."""

    __slots__ = ("source_id", "field_id", "transform", "name", "extra")

    def __init__(self, source_id: int, field_id: int, transform, name: str, extra=None):
        self.source_id = int(source_id)
        self.field_id = int(field_id)
        self.transform = parse_transform(transform)
        self.name = str(name)
        self.extra = dict(extra or {})

    def to_dict(self):
        d = {"name": self.name, "transform": str(self.transform), "source-id": self.source_id,
             "field-id": self.field_id}
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d, default_field_id: int):
        if not isinstance(d, dict):
            raise InvalidArgumentError(f"partition field must be an object, got {d!r}")
        for key in ("name", "transform"):
            if key not in d:
                raise InvalidArgumentError(f"partition field is missing required field {key!r}: {d!r}")
        src = d.get("source-id", (d.get("source-ids") or [None])[0])
        if src is None:
            raise InvalidArgumentError(f"partition field is missing required field 'source-id': {d!r}")
        return cls(src, d.get("field-id", default_field_id), d["transform"], d["name"],
                   {k: v for k, v in d.items() if k not in _FIELD_KEYS})

    def _key(self):
        return (self.source_id, self.field_id, str(self.transform), self.name)

    def __eq__(self, other):
        return isinstance(other, PartitionField) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"PartitionField({self.source_id}, {self.field_id}, {self.transform}, {self.name!r})"


class PartitionSpec:
    __slots__ = ("spec_id", "fields", "extra")

    def __init__(self, fields=(), spec_id: int = 0, extra=None):
        self.spec_id = int(spec_id)
        self.fields = tuple(fields)
        self.extra = dict(extra or {})  # unknown JSON keys, written back unchanged
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise InvalidArgumentError(f"partition spec {spec_id} has duplicate field names {names}")

    @property
    def is_unpartitioned(self) -> bool:
        return all(isinstance(f.transform, VoidTransform) for f in self.fields)

    @property
    def last_assigned_field_id(self) -> int:
        return max((f.field_id for f in self.fields), default=PARTITION_FIELD_ID_START - 1)

    def compatible_with(self, other: "PartitionSpec") -> bool:
        """Same fields (ignoring the spec id)."""
        return self.fields == other.fields

    def __eq__(self, other):
        return isinstance(other, PartitionSpec) and self.spec_id == other.spec_id and self.fields == other.fields

    def __hash__(self):
        return hash((self.spec_id, self.fields))

    def __repr__(self):
        return f"PartitionSpec(id={self.spec_id}, {list(self.fields)})"

    def partition_type(self, schema) -> T.RowType:
        """The partition struct (field ids = partition field ids); dropped source columns read as their transform
        of an unknown type (void -> int)."""
        out = []
        for f in self.fields:
            entry = schema.by_id().get(f.source_id)
            if entry is None:
                if isinstance(f.transform, VoidTransform):
                    out.append(T.DataField(f.field_id, f.name, T.IntType()))
                    continue
                raise SchemaError(f"partition field {f.name!r} references missing source id {f.source_id}")
            rt = f.transform.result_type(entry[1].type)
            out.append(T.DataField(f.field_id, f.name, rt.copy(True)))
        return T.RowType(out)

    def source_types(self, schema):
        types = []
        for f in self.fields:
            entry = schema.by_id().get(f.source_id)
            types.append(entry[1].type if entry else T.IntType())
        return types

    def partition_path(self, values, schema) -> str:
        """``a=1/ts_day=2017-11-16`` for one partition tuple (URL-quoted like Java)."""
        parts = []
        for f, t, v in zip(self.fields, self.source_types(schema), values):
            parts.append(f"{quote(f.name, safe='')}={quote(f.transform.human_string(t, v), safe='')}")
        return "/".join(parts)

    def to_dict(self):
        d = {"spec-id": self.spec_id, "fields": [f.to_dict() for f in self.fields]}
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d) -> "PartitionSpec":
        if not isinstance(d, dict):
            raise InvalidArgumentError(f"partition spec must be an object, got {type(d).__name__}")
        if not isinstance(d.get("fields"), list):
            raise InvalidArgumentError("partition spec is missing required field 'fields'")
        spec = cls.from_fields(d["fields"], d.get("spec-id", 0))
        spec.extra = {k: v for k, v in d.items() if k not in _SPEC_KEYS}
        return spec

    @classmethod
    def from_fields(cls, fields, spec_id: int = 0) -> "PartitionSpec":
        """From a JSON list (v1 ``partition-spec``: field ids default to 1000, 1001, ...)."""
        out = []
        for i, fd in enumerate(fields):
            out.append(PartitionField.from_dict(fd, PARTITION_FIELD_ID_START + i))
        return cls(out, spec_id)

    @classmethod
    def build(cls, schema, *fields, spec_id: int = 0, last_partition_id: int | None = None) -> "PartitionSpec":
        """``PartitionSpec.build(schema, ("ts", "day"), ("id", "bucket[16]", "id_bucket"))``: default names
        follow Java (``ts_day``, ``id_bucket``, ``name_trunc``, identity keeps the column name)."""
        next_id = (PARTITION_FIELD_ID_START - 1) if last_partition_id is None else last_partition_id
        out = []
        for item in fields:
            source, transform = item[0], parse_transform(item[1])
            name = item[2] if len(item) > 2 else None
            src = schema.find_field(source)
            transform.result_type(src.type)
            next_id += 1
            out.append(PartitionField(src.id, next_id, transform,
                                      name or default_partition_name(schema.column_name(src.id), transform)))
        return cls(out, spec_id)


def default_partition_name(column: str, transform: Transform) -> str:
    s = str(transform)
    if s == "identity":
        return column
    if s.startswith("bucket"):
        return f"{column}_bucket"
    if s.startswith("truncate"):
        return f"{column}_trunc"
    if s == "void":
        return f"{column}_null"
    return f"{column}_{s}"


UNPARTITIONED = PartitionSpec((), 0)


def evolve_spec(spec: PartitionSpec, schema, last_partition_id: int, format_version: int, *,
                add=(), remove=(), rename=None) -> PartitionSpec:
    """A new spec from ``spec``: ``add`` items like :meth:`PartitionSpec.build`, ``remove`` partition field names,
    ``rename`` {old: new}. Removed fields become ``void`` in v1 (field ids must stay dense) and are dropped in v2.
    The spec id is assigned by the metadata on commit."""
    fields = list(spec.fields)
    remove = set(remove)
    unknown = remove - {f.name for f in fields}
    if unknown:
        raise InvalidArgumentError(f"cannot remove unknown partition fields {sorted(unknown)}")
    kept = []
    for f in fields:
        if f.name in remove:
            if format_version == 1:
                kept.append(PartitionField(f.source_id, f.field_id, VoidTransform(), f.name))
            continue
        kept.append(f)
    for old, new in (rename or {}).items():
        idx = [k.name for k in kept].index(old) if old in [k.name for k in kept] else None
        if idx is None:
            raise InvalidArgumentError(f"cannot rename unknown partition field {old!r}")
        f = kept[idx]
        kept[idx] = PartitionField(f.source_id, f.field_id, f.transform, new)
    next_id = max(last_partition_id, PARTITION_FIELD_ID_START - 1)
    for item in add:
        source, transform = item[0], parse_transform(item[1])
        name = item[2] if len(item) > 2 else None
        src = schema.find_field(source)
        transform.result_type(src.type)
        for k in kept:
            if k.source_id == src.id and str(k.transform) == str(transform):
                raise InvalidArgumentError(f"partition field for {source!r} with {transform} exists already")
        next_id += 1
        kept.append(PartitionField(src.id, next_id, transform,
                                   name or default_partition_name(schema.column_name(src.id), transform)))
    return PartitionSpec(kept, spec.spec_id + 1)
