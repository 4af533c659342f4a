"""Table schemas (an Iceberg schema: a struct with field ids, a schema id, identifier fields) and schema evolution.

:class:`Schema` wraps a :class:`paimon_engine.types.RowType`. :class:`SchemaUpdate` builds a new schema from an
old one: add columns (nested too, fresh ids from ``last-column-id``), rename, drop, reorder, promote types
(int->long, float->double, decimal precision widening), make optional, set identifier fields.
"""

from __future__ import annotations

from .. import types as T
from ..errors import SchemaError

__all__ = ["Schema", "SchemaUpdate", "assign_fresh_ids", "highest_field_id", "index_by_id", "index_by_name",
           "promote_allowed", "DELETE_FILE_PATH_ID", "DELETE_POS_ID", "POSITION_DELETE_FIELDS",
           "ROW_ID_COLUMN", "LAST_UPDATED_COLUMN", "ROW_ID_FIELD_ID", "LAST_UPDATED_FIELD_ID", "LINEAGE_COLUMNS",
           "lineage_field"]

#: the reserved field ids of a position-delete file's columns
DELETE_FILE_PATH_ID = 2147483546
DELETE_POS_ID = 2147483545
#: v3 row lineage: the metadata columns and their reserved field ids
ROW_ID_COLUMN = "_row_id"
LAST_UPDATED_COLUMN = "_last_updated_sequence_number"
ROW_ID_FIELD_ID = 2147483540
LAST_UPDATED_FIELD_ID = 2147483539
LINEAGE_COLUMNS = {ROW_ID_COLUMN: ROW_ID_FIELD_ID, LAST_UPDATED_COLUMN: LAST_UPDATED_FIELD_ID}


def lineage_field(name: str) -> T.DataField:
    """The optional ``long`` field a data file stores a row-lineage column in (``_row_id`` or
    ``_last_updated_sequence_number``)."""
    return T.DataField(LINEAGE_COLUMNS[name], name, T.BigIntType())


#: the schema of a position-delete file: ``file_path`` (string) and ``pos`` (long), both required
POSITION_DELETE_FIELDS = (T.DataField(DELETE_FILE_PATH_ID, "file_path", T.STRING(False)),
                          T.DataField(DELETE_POS_ID, "pos", T.BigIntType(False)))


def _walk(dtype, prefix, out_id, out_name):
    if isinstance(dtype, T.RowType):
        for f in dtype.fields:
            name = f"{prefix}{f.name}"
            out_id[f.id] = (name, f)
            out_name[name] = f.id
            _walk(f.type, name + ".", out_id, out_name)
    elif isinstance(dtype, T.ArrayType):
        name = f"{prefix}element"
        if dtype.element_id is not None:
            out_id[dtype.element_id] = (name, T.DataField(dtype.element_id, "element", dtype.element))
            out_name[name] = dtype.element_id
        _walk(dtype.element, name + ".", out_id, out_name)
    elif isinstance(dtype, T.MapType):
        for part, fid, t in (("key", dtype.key_id, dtype.key), ("value", dtype.value_id, dtype.value)):
            name = f"{prefix}{part}"
            if fid is not None:
                out_id[fid] = (name, T.DataField(fid, part, t))
                out_name[name] = fid
            _walk(t, name + ".", out_id, out_name)


def index_by_id(struct: T.RowType) -> dict:
    """field id -> (dotted name, DataField) for every field at every depth (list elements and map keys/values
    appear as ``a.element``, ``m.key``, ``m.value``)."""
    out_id, out_name = {}, {}
    _walk(struct, "", out_id, out_name)
    return out_id


def index_by_name(struct: T.RowType) -> dict:
    out_id, out_name = {}, {}
    _walk(struct, "", out_id, out_name)
    return out_name


def highest_field_id(struct: T.DataType) -> int:
    ids = index_by_id(struct) if isinstance(struct, T.RowType) else {}
    return max(ids, default=0)


def assign_fresh_ids(dtype: T.DataType, next_id) -> T.DataType:
    """Copy of ``dtype`` with every nested id replaced by ``next_id()`` (breadth-first per struct, like Iceberg:
    a struct's own fields first, then their children)."""
    if isinstance(dtype, T.RowType):
        ids = [next_id() for _ in dtype.fields]
        return T.RowType([T.DataField(i, f.name, assign_fresh_ids(f.type, next_id), f.description,
                                      f.initial_default, f.write_default) for i, f in zip(ids, dtype.fields)],
                         dtype.nullable)
    if isinstance(dtype, T.ArrayType):
        eid = next_id()
        return T.ArrayType(assign_fresh_ids(dtype.element, next_id), dtype.nullable, element_id=eid)
    if isinstance(dtype, T.MapType):
        kid, vid = next_id(), next_id()
        return T.MapType(assign_fresh_ids(dtype.key, next_id), assign_fresh_ids(dtype.value, next_id),
                         dtype.nullable, key_id=kid, value_id=vid)
    return dtype


def promote_allowed(old: T.DataType, new: T.DataType) -> bool:
    """The spec's allowed type promotions (ignoring nullability)."""
    if old.equals_ignore_nullable(new):
        return True
    if isinstance(old, T.IntType) and isinstance(new, T.BigIntType):
        return True
    if isinstance(old, T.FloatType) and isinstance(new, T.DoubleType):
        return True
    if isinstance(old, T.DecimalType) and isinstance(new, T.DecimalType):
        return new.scale == old.scale and new.precision >= old.precision
    if isinstance(old, T.DateType) and isinstance(new, T.TimestampType):
        return False
    return False


class Schema:
    """An Iceberg schema: ``schema_id``, ``struct`` (RowType with field ids), ``identifier_field_ids``."""

    __slots__ = ("schema_id", "struct", "identifier_field_ids", "_by_id", "_by_name", "extra", "field_extra")

    def __init__(self, struct, schema_id: int = 0, identifier_field_ids=(), extra=None, field_extra=None):
        if not isinstance(struct, T.RowType):
            struct = T.RowType(struct)
        self.struct = struct
        self.schema_id = int(schema_id)
        self.identifier_field_ids = tuple(int(i) for i in identifier_field_ids)
        self._by_id = None
        self._by_name = None
        # JSON keys this library does not know (another writer's), written back unchanged: ``extra`` on the
        # schema object, ``field_extra[(kind, id)]`` on a struct field ("field", field id) or on a list / map
        # type object ("list", element id) / ("map", key id)
        self.extra = dict(extra or {})
        self.field_extra = dict(field_extra or {})
        ids = []
        _collect_ids(struct, ids)
        dup = {i for i in ids if ids.count(i) > 1} if len(ids) != len(set(ids)) else set()
        if dup:
            raise SchemaError(f"schema {schema_id} has duplicate field ids {sorted(dup)}")
        for fid in self.identifier_field_ids:
            entry = self.by_id().get(fid)
            if entry is None:
                raise SchemaError(f"identifier field id {fid} is not in schema {schema_id}")
            f = entry[1]
            if f.type.is_nested or isinstance(f.type, (T.FloatType, T.DoubleType)):
                raise SchemaError(f"identifier field {entry[0]!r} must be a non-float primitive")
            if f.nullable:
                raise SchemaError(f"identifier field {entry[0]!r} must be required")

    # -- lookups ---------------------------------------------------------------
    @property
    def fields(self):
        return self.struct.fields

    @property
    def names(self):
        return self.struct.names

    def by_id(self) -> dict:
        if self._by_id is None:
            self._by_id = index_by_id(self.struct)
        return self._by_id

    def by_name(self) -> dict:
        if self._by_name is None:
            self._by_name = index_by_name(self.struct)
        return self._by_name

    def find_field(self, name_or_id) -> T.DataField:
        """A field at any depth by id or dotted name (case-sensitive)."""
        if isinstance(name_or_id, int):
            entry = self.by_id().get(name_or_id)
            if entry is None:
                raise SchemaError(f"no field with id {name_or_id} in schema {self.schema_id}")
            return entry[1]
        fid = self.by_name().get(name_or_id)
        if fid is None:
            raise SchemaError(f"no field named {name_or_id!r} in schema {self.schema_id}; "
                              f"columns are {self.names}")
        return self.by_id()[fid][1]

    def find_type(self, name_or_id) -> T.DataType:
        return self.find_field(name_or_id).type

    def column_name(self, field_id: int) -> str:
        entry = self.by_id().get(field_id)
        if entry is None:
            raise SchemaError(f"no field with id {field_id} in schema {self.schema_id}")
        return entry[0]

    @property
    def highest_field_id(self) -> int:
        return max(self.by_id(), default=0)

    @property
    def identifier_field_names(self):
        return [self.column_name(i) for i in self.identifier_field_ids]

    def to_arrow(self):
        """A pyarrow Schema with ``PARQUET:field_id`` metadata on every field."""
        return self.struct.to_arrow_schema()

    def select(self, names) -> "Schema":
        return Schema(self.struct.project(names), self.schema_id)

    def same_fields(self, other: "Schema") -> bool:
        """Same fields (ids, names, types, docs), column defaults and identifier fields."""
        return (self.struct == other.struct and self.identifier_field_ids == other.identifier_field_ids
                and _defaults(self.struct) == _defaults(other.struct))

    def __eq__(self, other):
        return isinstance(other, Schema) and self.schema_id == other.schema_id and self.same_fields(other)

    def __hash__(self):
        return hash((self.schema_id, self.struct))

    def __repr__(self):
        return f"Schema(id={self.schema_id}, {self.struct.to_paimon_string()})"

    # -- JSON ------------------------------------------------------------------
    def to_dict(self) -> dict:
        d = self.struct.to_iceberg()
        out = {"type": "struct", "schema-id": self.schema_id}
        if self.identifier_field_ids:
            out["identifier-field-ids"] = list(self.identifier_field_ids)
        out["fields"] = d["fields"]
        if self.field_extra:
            _walk_json_fields(out["fields"], lambda key, obj: obj.update(self.field_extra.get(key, {})))
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, d, default_id: int = 0) -> "Schema":
        if not isinstance(d, dict):
            raise SchemaError(f"schema must be a JSON object, got {type(d).__name__}")
        if d.get("type", "struct") != "struct":
            raise SchemaError(f"schema type must be 'struct', got {d.get('type')!r}")
        if not isinstance(d.get("fields"), list):
            raise SchemaError("schema is missing required field 'fields'")
        try:
            struct = T.from_iceberg({"type": "struct", "fields": d["fields"]})
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, SchemaError):
                raise
            raise SchemaError(f"bad schema field: {exc}") from None
        sid = d.get("schema-id", default_id)
        field_extra = {}

        def unknown(key, obj):
            extra = {k: v for k, v in obj.items() if k not in _JSON_KEYS[key[0]]}
            if extra:
                field_extra[key] = extra
        _walk_json_fields(d["fields"], unknown)
        return cls(struct, sid if sid is not None else default_id, d.get("identifier-field-ids") or (),
                   {k: v for k, v in d.items() if k not in _SCHEMA_KEYS}, field_extra)

    @classmethod
    def from_arrow(cls, arrow_schema, schema_id: int = 0) -> "Schema":
        """A new schema from Arrow: ids from ``PARQUET:field_id`` when every field has one, else fresh ids."""
        struct = T.schema_from_arrow(arrow_schema)
        ids = []
        _collect_ids(struct, ids)
        has_ids = all(f.metadata and b"PARQUET:field_id" in f.metadata for f in arrow_schema)
        if not has_ids or None in ids or 0 in ids:
            counter = iter(range(1, 1 << 31))
            struct = assign_fresh_ids(struct, lambda: next(counter))
        return cls(struct, schema_id)

    def update(self, last_column_id: int | None = None) -> "SchemaUpdate":
        return SchemaUpdate(self, self.highest_field_id if last_column_id is None else last_column_id)


_SCHEMA_KEYS = frozenset(("type", "schema-id", "identifier-field-ids", "fields"))
_JSON_KEYS = {
    "field": frozenset(("id", "name", "required", "type", "doc", "initial-default", "write-default")),
    "list": frozenset(("type", "element-id", "element", "element-required")),
    "map": frozenset(("type", "key-id", "key", "value-id", "value", "value-required")),
}


def _walk_json_fields(fields, fn):
    """Call ``fn((kind, id), obj)`` on every struct field and list/map type object of a JSON schema."""
    for f in fields:
        if isinstance(f, dict) and "id" in f:
            fn(("field", f["id"]), f)
            _walk_json_type(f.get("type"), fn)


def _walk_json_type(t, fn):
    if not isinstance(t, dict):
        return
    kind = t.get("type")
    if kind == "struct" and isinstance(t.get("fields"), list):
        _walk_json_fields(t["fields"], fn)
    elif kind == "list" and "element-id" in t:
        fn(("list", t["element-id"]), t)
        _walk_json_type(t.get("element"), fn)
    elif kind == "map" and "key-id" in t:
        fn(("map", t["key-id"]), t)
        _walk_json_type(t.get("key"), fn)
        _walk_json_type(t.get("value"), fn)


def _collect_ids(dtype, out):
    if isinstance(dtype, T.RowType):
        for f in dtype.fields:
            out.append(f.id)
            _collect_ids(f.type, out)
    elif isinstance(dtype, T.ArrayType):
        out.append(dtype.element_id)
        _collect_ids(dtype.element, out)
    elif isinstance(dtype, T.MapType):
        out.append(dtype.key_id)
        out.append(dtype.value_id)
        _collect_ids(dtype.key, out)
        _collect_ids(dtype.value, out)


def _split(path):
    if isinstance(path, (tuple, list)):
        return tuple(path)
    return tuple(path.split("."))


def _defaults(struct) -> list:
    """[(field id, initial-default, write-default)] of every field with a default, nested fields included."""
    out = []
    stack = list(struct.fields)
    while stack:
        f = stack.pop()
        if f.initial_default is not None or f.write_default is not None:
            out.append((f.id, f.initial_default, f.write_default))
        t = f.type
        if isinstance(t, T.RowType):
            stack += t.fields
    return sorted(out, key=lambda x: x[0])


class SchemaUpdate:
    """Schema evolution by field id. Chain calls, then ``apply()`` -> ``(new Schema, new last_column_id)``.

    The new schema's id is assigned by the table metadata on commit (an identical existing schema is reused).
    """

    def __init__(self, schema: Schema, last_column_id: int):
        self.base = schema
        self.last_column_id = int(last_column_id)
        self._struct = schema.struct
        self._identifier = list(schema.identifier_field_ids)

    def _next_id(self):
        self.last_column_id += 1
        return self.last_column_id

    # locate a struct by parent path and rebuild it
    def _rewrite_parent(self, parent_path, fn):
        self._struct = _rewrite_at(self._struct, tuple(parent_path), parent_path, fn)

    def add_column(self, path, dtype: T.DataType, doc: str | None = None, required: bool = False, *,
                   default=None):
        """Add a column (``"a.b"`` or ``("a", "b")`` adds ``b`` inside struct ``a``); fresh ids for nested types.

        ``default`` (format version 3; a Python value: ``date``, ``datetime``, ``Decimal``, ...): the column's
        ``initial-default`` (what rows written before it existed read) and ``write-default`` (what a writer that
        omits it stores). A required column can be added only with a default."""
        from .conversions import default_to_json, default_from_json
        parts = _split(path)
        if required and default is None:
            raise SchemaError(f"cannot add required column {'.'.join(parts)!r}: existing rows have no value "
                              f"(give it a default)")
        dtype = assign_fresh_ids(dtype.copy(True), self._next_id) if dtype.is_nested else dtype.copy(not required)
        fid = self._next_id()
        value = default_to_json(dtype, default, parts[-1])
        default_from_json(dtype, value, parts[-1])          # a value the type cannot hold fails here
        field = T.DataField(fid, parts[-1], dtype, doc, value, value)

        def add(struct):
            if parts[-1] in struct:
                raise SchemaError(f"column {'.'.join(parts)!r} exists already")
            return T.RowType(list(struct.fields) + [field], struct.nullable)
        self._rewrite_parent(parts[:-1], add)
        return self

    def _field_path(self, path):
        """-> (current path parts, field id). A name of the schema the update started from also works after an
        earlier call of the same update renamed it (pyiceberg resolves names against that schema)."""
        parts = _split(path)
        fid = index_by_name(self._struct).get(".".join(parts))
        if fid is None:
            fid = index_by_name(self.base.struct).get(".".join(parts))
            now = index_by_id(self._struct).get(fid) if fid is not None else None
            if now is None:
                raise SchemaError(f"no column {'.'.join(parts)!r}")
            parts = tuple(now[0].split("."))
        return parts, fid

    def rename_column(self, path, new_name: str):
        parts, _ = self._field_path(path)

        def ren(struct):
            if new_name in struct:
                raise SchemaError(f"cannot rename {'.'.join(parts)!r}: {new_name!r} exists already")
            return T.RowType([T.DataField(f.id, new_name, f.type, f.description, f.initial_default,
                                          f.write_default) if f.name == parts[-1] else f for f in struct.fields],
                             struct.nullable)
        self._rewrite_parent(parts[:-1], ren)
        return self

    def delete_column(self, path):
        parts, fid = self._field_path(path)
        if fid in self._identifier:
            raise SchemaError(f"cannot drop identifier field {'.'.join(parts)!r}")

        def drop(struct):
            return T.RowType([f for f in struct.fields if f.name != parts[-1]], struct.nullable)
        self._rewrite_parent(parts[:-1], drop)
        return self

    drop_column = delete_column

    def update_column(self, path, dtype: T.DataType | None = None, doc: str | None = None,
                      required: bool | None = None):
        """Promote the type (allowed promotions only), change the doc, or make a required column optional."""
        parts, _ = self._field_path(path)

        def upd(struct):
            out = []
            for f in struct.fields:
                if f.name == parts[-1]:
                    t = f.type
                    if dtype is not None:
                        if not promote_allowed(f.type, dtype):
                            raise SchemaError(f"cannot change {'.'.join(parts)!r} from "
                                              f"{type_name_of(f.type)} to {type_name_of(dtype)}")
                        t = dtype.copy(f.type.nullable)
                    if required is not None:
                        if required and t.nullable:
                            raise SchemaError(f"cannot make optional column {'.'.join(parts)!r} required")
                        t = t.copy(not required)
                    f = T.DataField(f.id, f.name, t, doc if doc is not None else f.description,
                                    f.initial_default, f.write_default)
                out.append(f)
            return T.RowType(out, struct.nullable)
        self._rewrite_parent(parts[:-1], upd)
        return self

    def set_default_value(self, path, value):
        """Change a column's ``write-default`` (format version 3) — what a writer that omits the column stores
        from now on — and nothing else: its ``initial-default`` (what rows written before the column existed
        read) stays as it is, since those rows cannot change. ``value``: a Python value the column's type holds,
        or None to drop the write default (refused for a required column, which then could not be omitted).
        pyiceberg's ``set_default_value``; Iceberg Java's ``updateColumnDefault``."""
        from .conversions import default_from_json, default_to_json
        parts, _ = self._field_path(path)
        name = ".".join(parts)

        def upd(struct):
            out = []
            for f in struct.fields:
                if f.name == parts[-1]:
                    if value is None and not f.type.nullable:
                        raise SchemaError(f"cannot drop the write default of required column {name!r}: "
                                          f"a writer could not omit it")
                    json_value = default_to_json(f.type, value, name)
                    default_from_json(f.type, json_value, name)     # a value the type cannot hold fails here
                    f = T.DataField(f.id, f.name, f.type, f.description, f.initial_default, json_value)
                out.append(f)
            return T.RowType(out, struct.nullable)
        self._rewrite_parent(parts[:-1], upd)
        return self

    def _move(self, path, where, other=None):
        parts, _ = self._field_path(path)
        if other is not None:
            oparts, _ = self._field_path(other)
            if oparts[:-1] != parts[:-1]:
                raise SchemaError(f"cannot move {'.'.join(parts)!r} next to a field of another struct")
            if oparts == parts:
                raise SchemaError(f"cannot move {'.'.join(parts)!r} relative to itself")

        def mv(struct):
            fields = list(struct.fields)
            f = fields.pop(struct.index(parts[-1]))
            if where == "first":
                fields.insert(0, f)
            else:
                idx = [x.name for x in fields].index(oparts[-1])
                fields.insert(idx if where == "before" else idx + 1, f)
            return T.RowType(fields, struct.nullable)
        self._rewrite_parent(parts[:-1], mv)
        return self

    def move_first(self, path):
        return self._move(path, "first")

    def move_before(self, path, other):
        return self._move(path, "before", other)

    def move_after(self, path, other):
        return self._move(path, "after", other)

    def union_by_name(self, new_schema):
        """pyiceberg's ``union_by_name``: make the schema hold every column of ``new_schema`` (an Arrow schema or a
        :class:`Schema`), matched by name: missing columns (also inside structs) are added as optional, narrower
        existing types are promoted, required columns that ``new_schema`` has as optional become optional.
        Nothing is dropped; a type that cannot be promoted raises SchemaError naming the column."""
        struct = new_schema.struct if isinstance(new_schema, Schema) else T.schema_from_arrow(new_schema)
        self._union(struct, ())
        return self

    def _union(self, struct, prefix):
        by_name = index_by_name(self._struct)
        for f in struct.fields:
            path = prefix + (f.name,)
            fid = by_name.get(".".join(path))
            if fid is None:
                self.add_column(path, f.type.copy(True), f.description)
                continue
            old = index_by_id(self._struct)[fid][1].type
            if isinstance(old, T.RowType) and isinstance(f.type, T.RowType):
                self._union(f.type, path)
            elif type_name_of(old.copy(True)) != type_name_of(f.type.copy(True)):
                if old.is_nested or f.type.is_nested or not promote_allowed(old, f.type):
                    raise SchemaError(f"cannot union column {'.'.join(path)!r}: {type_name_of(old)} cannot "
                                      f"become {type_name_of(f.type)}")
                self.update_column(path, f.type)
            if f.type.nullable and not old.nullable and fid not in self._identifier:
                SchemaUpdate.update_column(self, path, required=False)

    def set_identifier_fields(self, *paths):
        by_name = index_by_name(self._struct)
        ids = []
        for p in paths:
            fid = by_name.get(".".join(_split(p)))
            if fid is None:
                raise SchemaError(f"no column {p!r} for an identifier field")
            ids.append(fid)
        self._identifier = ids
        return self

    def check_format_version(self, format_version: int):
        """Column defaults need format version 3 (the spec's rule)."""
        stack = list(self._struct.fields)
        while stack:
            f = stack.pop()
            if format_version < 3 and (f.initial_default is not None or f.write_default is not None):
                raise SchemaError(f"column {f.name!r}: default values need format version 3 "
                                  f"(the table has {format_version})")
            t = f.type
            if isinstance(t, T.RowType):
                stack += t.fields
        return self

    def apply(self) -> tuple:
        """-> (Schema with id base.schema_id + 1 (re-numbered by the metadata on commit), last_column_id)."""
        ids = []
        _collect_ids(self._struct, ids)
        alive = set(ids)
        ident = [i for i in self._identifier if i in alive]
        # another writer's keys on a field (or list/map type) stay with it while the field lives
        field_extra = {k: v for k, v in self.base.field_extra.items() if k[1] in alive}
        return Schema(self._struct, self.base.schema_id + 1, ident, field_extra=field_extra), self.last_column_id


def type_name_of(t):
    ice = t.to_iceberg()
    return ice if isinstance(ice, str) else ice.get("type")


def _rewrite_at(dtype, path, parent_path, fn):
    """``dtype`` with the struct at ``path`` (below it) replaced by ``fn(struct)``; ``parent_path`` names the
    whole path in errors. (A module-level function: a closure calling itself is a reference cycle.)"""
    if not path:
        if not isinstance(dtype, T.RowType):
            raise SchemaError(f"{'.'.join(parent_path)!r} is not a struct")
        return fn(dtype)
    head, rest = path[0], path[1:]
    if isinstance(dtype, T.RowType):
        if head not in dtype:
            raise SchemaError(f"no field {'.'.join(parent_path)!r} in the schema")
        fields = [f if f.name != head else f.with_type(_rewrite_at(f.type, rest, parent_path, fn))
                  for f in dtype.fields]
        return T.RowType(fields, dtype.nullable)
    if isinstance(dtype, T.ArrayType) and head == "element":
        return T.ArrayType(_rewrite_at(dtype.element, rest, parent_path, fn), dtype.nullable, dtype.element_id)
    if isinstance(dtype, T.MapType) and head in ("key", "value"):
        if head == "key":
            raise SchemaError("map keys cannot be changed")
        return T.MapType(dtype.key, _rewrite_at(dtype.value, rest, parent_path, fn), dtype.nullable, dtype.key_id,
                         dtype.value_id)
    raise SchemaError(f"no field {'.'.join(parent_path)!r} in the schema")
