"""A check of a Parquet footer's column chunk metadata before pyarrow is asked for statistics.

pyarrow decodes a column chunk's statistics the first time they are asked for (``is_stats_set``,
``statistics``) and does so where a C++ exception cannot be turned into a Python one: a chunk whose physical type
is not a Parquet type, or whose encoded min/max is shorter than its type, ends the process. The reader therefore
walks the footer's Thrift (compact protocol) itself first and treats such a file as corrupt: every column chunk
must name the physical type of its schema column, and every encoded min/max of a fixed-width type must be exactly
that width (a BOOLEAN one byte, INT32/FLOAT four, INT64/DOUBLE eight, INT96 twelve, FIXED_LEN_BYTE_ARRAY its
length).
"""

from __future__ import annotations

from .parquet_pages import _BINARY, _I32, _LIST, _STRUCT, _Bad, _Cursor, _Short

__all__ = ["PHYSICAL_TYPES", "column_chunk_problem"]

#: Parquet physical type code -> name (as pyarrow spells it)
PHYSICAL_TYPES = ("BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY")
_WIDTH = {"BOOLEAN": 1, "INT32": 4, "INT64": 8, "INT96": 12, "FLOAT": 4, "DOUBLE": 8}
# Statistics: max, min (legacy), max_value, min_value
_STAT_VALUES = {1: "max", 2: "min", 5: "max_value", 6: "min_value"}


def _list(c, each):
    h = c.byte()
    size, et = h >> 4, h & 0x0F
    if size == 15:
        size = c.varint()
    for i in range(size):
        each(i, et)


def column_chunk_problem(footer: bytes, leaves) -> str | None:
    """What is wrong with the column chunks of a serialized ``FileMetaData`` (``footer``, the Thrift struct, no
    magic) against ``leaves`` = [(physical type name, FIXED_LEN_BYTE_ARRAY length)] of the schema's leaf
    columns, or None when every chunk's type and encoded statistics are what pyarrow can decode."""
    c = _Cursor(footer)
    problems = []

    def chunk(rg, j):
        # ColumnChunk: 3 = ColumnMetaData { 1: type, 12: statistics }
        def column_chunk(fid, t):
            if fid != 3 or t != _STRUCT:
                return False
            c.struct(column_meta, 2)
            return True

        def column_meta(fid, t):
            if fid == 1 and t == _I32:
                code = c.zigzag()
                want = leaves[j][0] if j < len(leaves) else None
                name = PHYSICAL_TYPES[code] if 0 <= code < len(PHYSICAL_TYPES) else f"unknown type {code}"
                if name != want:
                    problems.append(f"row group {rg} column {j}: chunk type {name}, schema type {want}")
                return True
            if fid == 12 and t == _STRUCT:
                c.struct(statistics, 3)
                return True
            return False

        def statistics(fid, t):
            if fid not in _STAT_VALUES or t != _BINARY:
                return False
            n = c.varint()
            c.skip_bytes(n)
            kind = leaves[j][0] if j < len(leaves) else None
            width = leaves[j][1] if kind == "FIXED_LEN_BYTE_ARRAY" else _WIDTH.get(kind)
            if width is not None and n != width:
                problems.append(f"row group {rg} column {j}: statistics {_STAT_VALUES[fid]} of {n} bytes for "
                                f"{kind}")
            return True

        if j >= len(leaves):
            problems.append(f"row group {rg} has more column chunks than the schema has columns")
        c.struct(column_chunk, 1)

    def row_group(rg, et):
        if et != _STRUCT:
            raise _Bad

        count = [0]

        def fields(fid, t):
            if fid == 1 and t == _LIST:   # RowGroup.columns
                def each(j, ct):
                    if ct != _STRUCT:
                        raise _Bad
                    chunk(rg, j)
                    count[0] = j + 1
                _list(c, each)
                return True
            return False
        c.struct(fields, 1)
        if count[0] < len(leaves):
            problems.append(f"row group {rg} has {count[0]} column chunks for the schema's {len(leaves)} columns")

    def top(fid, t):
        if fid == 4 and t == _LIST:       # FileMetaData.row_groups
            _list(c, row_group)
            return True
        return False

    try:
        c.struct(top)
    except (_Bad, _Short, IndexError, RecursionError):
        return "the footer's Thrift encoding cannot be walked"
    return problems[0] if problems else None
