"""Fory row schemas and their physical layouts.

A :class:`ForySchema` wraps an Arrow schema restricted to the types the Fory
row format defines, and computes, for each layout, the *node table* the
``foryrow`` kernel walks: one row of int64 per type node in preorder, with the
slot offset, null bit, widths and region sizes the layout gives that node.

Standard layout (Java, C++ and pyfory): a row is a null bitmap of
``((n + 63) // 64) * 8`` bytes, one 8-byte slot per field, then the variable
region; arrays have an 8-byte count, a bitmap of ``((n + 63) // 64) * 8``
bytes and natural-width elements.

Compact layout (Java): fields sorted (stable) by alignment group then size,
natural-width slots, a ``(n + 7) // 8``-byte bitmap over all fields after the
fixed region (omitted when no field is nullable), the fixed region rounded to 8
only when the row has a variable-width field, fixed-width structs inlined, and
arrays with an int32 count and a bitmap only for nullable elements.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal

import numpy as np

from ...errors import SchemaError, UnsupportedTypeError

STANDARD = "standard"
COMPACT = "compact"
LAYOUTS = (STANDARD, COMPACT)

# kernel node kinds (paimon_engine/_kernels/foryrow.pyx uses the same numbers)
K_FIXED = 1     # little-endian value of C_WIDTH bytes
K_BOOL = 2      # one byte 0/1 in the row, bit-packed in Arrow
K_BYTES = 3     # string / binary: offset+size slot, body in the variable region
K_DECIMAL = 4   # 32-byte little-endian sign-extended unscaled value in the variable region
K_LIST = 5
K_MAP = 6
K_STRUCT = 7

# node table columns
C_KIND = 0      # K_*
C_WIDTH = 1     # Arrow value width (fixed kinds; decimal: 16 or 32)
C_SLOT = 2      # bytes this node takes in its parent's slot/element region
C_OFF = 3       # slot offset inside the parent struct's fixed region (-1 if parent is not a struct)
C_BIT = 4       # null bit inside the parent struct's bitmap
C_NULLABLE = 5
C_INLINE = 6    # compact: struct stored inline (all children fixed width)
C_FIXED = 7     # struct: fixed region + bitmap (aligned as the layout says); inline struct: its width
C_BMOFF = 8     # struct: bitmap offset inside the row
C_BMSIZE = 9    # struct: bitmap bytes (0 = no bitmap)
C_NCHILD = 10
C_CHILD0 = 11   # first index into the children array
C_HDRROUND = 12  # element node of a compact array: array header rounded to 8
C_LARGE = 13    # Arrow offsets are int64 (large_string / large_binary / large_list)
C_UTF8 = 14     # string node: decoding checks every value is valid UTF-8
C_BOUND = 15    # decimal node: 10**precision as four little-endian 64-bit limbs (columns 15..18, bit patterns);
                # decoding rejects an unscaled value that is not strictly between -bound and bound
NCOLS = 19

MAX_DEPTH = 64


def _round8(n: int) -> int:
    return (n + 7) & ~7


def _pa():
    import pyarrow as pa
    return pa


def _normalize_field(field):
    """Check ``field``'s type is representable and return it with map keys non-null."""
    pa = _pa()
    t = field.type
    if pa.types.is_dictionary(t):
        raise UnsupportedTypeError(f"field {field.name!r}: dictionary type {t} has no Fory row encoding")
    return field


class _Node:
    __slots__ = ("field", "kind", "width", "children", "slot", "off", "bit", "inline", "fixed",
                 "bmoff", "bmsize", "hdrround", "large", "index")

    def __init__(self, field, kind, width=0, children=(), large=False):
        self.field = field
        self.kind = kind
        self.width = width
        self.children = list(children)
        self.slot = 8
        self.off = -1
        self.bit = 0
        self.inline = False
        self.fixed = 0
        self.bmoff = 0
        self.bmsize = 0
        self.hdrround = False
        self.large = large
        self.index = -1

    @property
    def nullable(self):
        return bool(self.field.nullable)


def _build(field, depth=0) -> _Node:
    pa = _pa()
    if depth > MAX_DEPTH:
        raise SchemaError(f"field {field.name!r}: nesting deeper than {MAX_DEPTH}")
    t = field.type
    if pa.types.is_boolean(t):
        return _Node(field, K_BOOL, 1)
    if pa.types.is_integer(t):
        if pa.types.is_unsigned_integer(t):
            raise UnsupportedTypeError(f"field {field.name!r}: unsigned {t} has no Fory row encoding")
        return _Node(field, K_FIXED, t.bit_width // 8)
    if pa.types.is_float32(t) or pa.types.is_float64(t):
        return _Node(field, K_FIXED, t.bit_width // 8)
    if pa.types.is_date32(t):
        return _Node(field, K_FIXED, 4)
    if pa.types.is_timestamp(t) or pa.types.is_duration(t):
        if t.unit != "us":
            raise UnsupportedTypeError(f"field {field.name!r}: {t}: Fory stores microseconds; cast to unit 'us'")
        return _Node(field, K_FIXED, 8)
    if pa.types.is_string(t) or pa.types.is_binary(t):
        return _Node(field, K_BYTES, 0)
    if pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        return _Node(field, K_BYTES, 0, large=True)
    if pa.types.is_decimal128(t):
        return _Node(field, K_DECIMAL, 16)
    if pa.types.is_decimal256(t):
        return _Node(field, K_DECIMAL, 32)
    if pa.types.is_map(t):
        entries = pa.field("entries", pa.struct([t.key_field, t.item_field]), nullable=False)
        return _Node(field, K_MAP, 0, [_build(entries, depth + 1)])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _Node(field, K_LIST, 0, [_build(t.value_field, depth + 1)], large=pa.types.is_large_list(t))
    if pa.types.is_struct(t):
        return _Node(field, K_STRUCT, 0, [_build(t.field(i), depth + 1) for i in range(t.num_fields)])
    raise UnsupportedTypeError(f"field {field.name!r}: type {t} has no Fory row encoding")


def _fixed_width(node: _Node) -> int:
    """Compact width of a value that can live in the fixed region, or -1 if variable-width."""
    if node.kind in (K_FIXED, K_BOOL):
        return node.width
    if node.kind == K_STRUCT:
        width = _bitmap_bytes_compact(node.children)
        for c in node.children:
            w = _fixed_width(c)
            if w < 0:
                return -1
            width += w
        return width
    return -1


def _bitmap_bytes_compact(children) -> int:
    if not any(c.nullable for c in children):
        return 0
    return (len(children) + 7) // 8


def _region_space(node: _Node) -> int:
    w = _fixed_width(node)
    return 8 if w < 0 else w


def _alignment_group(size: int) -> int:
    return 0 if size in (2, 4) or size % 8 == 0 else 1


def _compact_order(children):
    """Positions of ``children`` in compact slot order (stable: group, then larger first)."""
    return sorted(range(len(children)),
                  key=lambda i: (_alignment_group(_region_space(children[i])), -_region_space(children[i])))


def _lay_struct_standard(node: _Node):
    n = len(node.children)
    node.bmoff = 0
    node.bmsize = ((n + 63) // 64) * 8
    for i, c in enumerate(node.children):
        c.off = node.bmsize + 8 * i
        c.bit = i
        c.slot = 8
    node.fixed = node.bmsize + 8 * n


def _lay_struct_compact(node: _Node, inline: bool):
    children = node.children
    off = 0
    for pos, i in enumerate(_compact_order(children)):
        c = children[i]
        c.off = off
        c.bit = pos
        c.slot = _region_space(c)
        off += c.slot
    node.bmoff = off
    node.bmsize = _bitmap_bytes_compact(children)
    total = off + node.bmsize
    node.inline = inline
    if inline or all(_fixed_width(c) >= 0 for c in children):
        node.fixed = total
    else:
        node.fixed = _round8(total)


def _lay(node: _Node, layout: str, in_struct: bool):
    """Fill layout fields of ``node``'s subtree. ``in_struct``: the node is a struct field."""
    compact = layout == COMPACT
    if node.kind == K_STRUCT:
        inline = compact and _fixed_width(node) >= 0
        if compact:
            _lay_struct_compact(node, inline)
        else:
            _lay_struct_standard(node)
        for c in node.children:
            _lay(c, layout, True)
        if inline:
            node.slot = node.fixed
    elif node.kind == K_LIST:
        elem = node.children[0]
        _lay_element(elem, layout)
    elif node.kind == K_MAP:
        entries = node.children[0]
        # the entries struct is not a row: its two children are the key and value arrays' elements
        entries.off = -1
        for c in entries.children:
            _lay_element(c, layout)


def _lay_element(elem: _Node, layout: str):
    """Layout of an array element node (element width, header rounding)."""
    saved_off = elem.off
    _lay(elem, layout, False)
    elem.off = saved_off
    if layout == COMPACT:
        w = _fixed_width(elem)
        elem.slot = 8 if w < 0 else w
        elem.hdrround = w >= 0 and w % 8 == 0
    else:
        elem.slot = elem.width if elem.kind in (K_FIXED, K_BOOL) else 8
        elem.hdrround = True


class Layout:
    """The node table of one schema in one layout (what the kernel walks)."""

    __slots__ = ("name", "table", "children", "nodes", "root", "_view")

    def __init__(self, root: _Node, name: str):
        self.name = name
        self.root = root
        nodes = []
        todo = [root]       # depth first, children in order (a loop: a closure calling itself is a reference cycle)
        while todo:
            n = todo.pop()
            n.index = len(nodes)
            nodes.append(n)
            todo += reversed(n.children)
        self.nodes = nodes
        table = np.zeros((len(nodes), NCOLS), dtype=np.int64)
        kids = []
        for n in nodes:
            row = table[n.index]
            row[C_KIND] = n.kind
            row[C_WIDTH] = n.width
            row[C_SLOT] = n.slot
            row[C_OFF] = n.off
            row[C_BIT] = n.bit
            row[C_NULLABLE] = 1 if n.nullable else 0
            row[C_INLINE] = 1 if n.inline else 0
            row[C_FIXED] = n.fixed
            row[C_BMOFF] = n.bmoff
            row[C_BMSIZE] = n.bmsize
            row[C_NCHILD] = len(n.children)
            row[C_CHILD0] = len(kids)
            row[C_HDRROUND] = 1 if n.hdrround else 0
            row[C_LARGE] = 1 if n.large else 0
            t = n.field.type
            row[C_UTF8] = 1 if n.kind == K_BYTES and (_pa().types.is_string(t) or _pa().types.is_large_string(t)) \
                else 0
            if n.kind == K_DECIMAL:
                bound = 10 ** t.precision
                for j in range(4):
                    limb = (bound >> (64 * j)) & 0xFFFFFFFFFFFFFFFF
                    row[C_BOUND + j] = limb - (1 << 64) if limb >> 63 else limb
            kids.extend(c.index for c in n.children)
        self.table = table
        self.children = np.asarray(kids or [0], dtype=np.int64)
        self._view = None

    @property
    def compact(self) -> bool:
        return self.name == COMPACT

    def paths(self):
        """Dotted field path of every node, by node index (``"<row>"`` for the row itself)."""
        out = [""] * len(self.nodes)
        out[self.root.index] = "<row>"
        for n in self.nodes:  # preorder: a parent's path is set before its children's
            for c in n.children:
                out[c.index] = c.field.name if n is self.root else f"{out[n.index]}.{c.field.name}"
        return out

    def slot_order(self):
        """Top-level field names in the order their slots appear in a row."""
        kids = self.root.children
        return [c.field.name for c in sorted(kids, key=lambda c: c.off)]


class ForySchema:
    """A Fory row schema: named, typed, nullable fields (an Arrow schema underneath).

    Build it from an Arrow schema, a paimon_engine ``RowType``, or a list of
    Arrow fields. Supported types: bool, int8..int64, float32/64, string,
    binary (and their large variants), date32, timestamp[us] (with or without
    a time zone), duration[us], decimal128/256, list, map and struct, at any
    depth.
    """

    __slots__ = ("arrow_schema", "_root", "_layouts", "_names")

    def __init__(self, schema):
        pa = _pa()
        if isinstance(schema, ForySchema):
            schema = schema.arrow_schema
        elif not isinstance(schema, pa.Schema):
            if hasattr(schema, "to_arrow") and hasattr(schema, "fields"):
                schema = schema.to_arrow()
                if not isinstance(schema, pa.Schema):
                    schema = pa.schema(list(schema))
            else:
                schema = pa.schema(list(schema))
        fields = [_normalize_field(f) for f in schema]
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            raise SchemaError(f"duplicate field names in Fory schema: {names}")
        self.arrow_schema = pa.schema(fields, metadata=schema.metadata)
        self._names = names
        self._layouts = {}
        root_field = pa.field("row", pa.struct(fields), nullable=False)
        _build(root_field)  # validates every type once

    @classmethod
    def from_arrow(cls, schema) -> "ForySchema":
        return cls(schema)

    @classmethod
    def from_row_type(cls, row_type) -> "ForySchema":
        return cls(row_type.to_arrow())

    @property
    def names(self):
        return list(self._names)

    def __len__(self):
        return len(self._names)

    def __eq__(self, other):
        return isinstance(other, ForySchema) and self.arrow_schema.equals(other.arrow_schema)

    def __hash__(self):
        return hash(tuple(self._names))

    def __repr__(self):
        body = ", ".join(f"{f.name}: {f.type}{'' if f.nullable else ' not null'}" for f in self.arrow_schema)
        return f"ForySchema({body})"

    def index(self, name) -> int:
        try:
            return self._names.index(name)
        except ValueError:
            raise SchemaError(f"no field {name!r} in {self!r}") from None

    def view_schema(self, layout: str = STANDARD):
        """What ``RowView`` reads rows of this schema with (cached per layout)."""
        lay = self.layout(layout)
        if lay._view is None:
            lay._view = view_schema(lay)
        return lay._view

    def layout(self, name: str = STANDARD) -> Layout:
        """The node table for layout ``name`` ("standard" or "compact")."""
        if name not in LAYOUTS:
            raise SchemaError(f"unknown Fory row layout {name!r}; expected one of {LAYOUTS}")
        lay = self._layouts.get(name)
        if lay is None:
            pa = _pa()
            root = _build(pa.field("row", pa.struct(list(self.arrow_schema)), nullable=False))
            _lay(root, name, False)
            root.slot = 8
            root.inline = False
            if name == COMPACT:
                # a top-level row is never inlined, even if every field is fixed width
                _lay_struct_compact(root, False)
            lay = Layout(root, name)
            self._layouts[name] = lay
        return lay


# ---------------------------------------------------------------------------
# the kernel's ViewSchema (what RowView / ArrayView / MapView read rows with)
# ---------------------------------------------------------------------------

_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _view_kernel():
    from ... import _speedups
    return _speedups.kernel("foryview")


def _date(days):
    return _EPOCH_DATE + _dt.timedelta(days=days)


def _timestamp(tz):
    if tz:
        try:
            import zoneinfo
            zone = _dt.timezone.utc if tz in ("UTC", "utc", "Z", "+00:00") else zoneinfo.ZoneInfo(tz)
        except Exception:  # an offset string such as "+08:00"
            zone = _dt.timezone.utc
        return lambda us: (_EPOCH_UTC + _dt.timedelta(microseconds=us)).astimezone(zone)
    return lambda us: _EPOCH + _dt.timedelta(microseconds=us)


def _duration(us):
    return _dt.timedelta(microseconds=us)


_EXACT = _decimal.Context(prec=80)   # every decimal256 value exactly (the default context keeps 28 digits)


def _decimal_of(precision, scale):
    bound = 10 ** precision

    def convert(raw: bytes):
        # a ValueError here is a value beyond the precision: the view reports it as corrupt bytes
        unscaled = int.from_bytes(raw, "little", signed=True)
        if not -bound < unscaled < bound:
            raise ValueError("decimal value beyond its precision")
        return _decimal.Decimal(unscaled).scaleb(-scale, _EXACT)
    return convert


def _prim_and_convert(node):
    import pyarrow as pa
    k = _view_kernel()
    t = node.field.type
    if pa.types.is_boolean(t):
        return k.P_BOOL, None
    if pa.types.is_int8(t):
        return k.P_I8, None
    if pa.types.is_int16(t):
        return k.P_I16, None
    if pa.types.is_int32(t):
        return k.P_I32, None
    if pa.types.is_int64(t):
        return k.P_I64, None
    if pa.types.is_float32(t):
        return k.P_F32, None
    if pa.types.is_float64(t):
        return k.P_F64, None
    if pa.types.is_date32(t):
        return k.P_DATE, _date
    if pa.types.is_timestamp(t):
        return k.P_TS, _timestamp(t.tz)
    if pa.types.is_duration(t):
        return k.P_DUR, _duration
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return k.P_STR, None
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return k.P_BIN, None
    if pa.types.is_decimal(t):
        return k.P_DEC, _decimal_of(t.precision, t.scale)
    return k.P_NONE, None


def view_schema(lay: Layout):
    """The kernel's ViewSchema for one layout of a ForySchema."""
    k = _view_kernel()
    nodes = lay.nodes
    prims, converts, paths, typenames, names = [], [], [], [], []
    path = lay.paths()
    for n in nodes:
        p, conv = _prim_and_convert(n)
        prims.append(p)
        converts.append(conv)
        paths.append(path[n.index])
        typenames.append(str(n.field.type))
        names.append({c.field.name: i for i, c in enumerate(n.children)} if n.kind == K_STRUCT else {})
    col = lambda c: [int(x) for x in lay.table[:, c]]  # noqa: E731
    return k.ViewSchema(col(C_KIND), col(C_WIDTH), col(C_SLOT), col(C_OFF), col(C_BIT),
                        col(C_NULLABLE), col(C_INLINE), col(C_FIXED), col(C_BMOFF), col(C_BMSIZE),
                        [[c.index for c in n.children] for n in nodes], col(C_HDRROUND), prims, names,
                        lay.compact, converts, paths, typenames)
