"""Building a data file's indexes alongside its rows.

Options (table options, validated when the builder is created)::

    file-index.<type>.columns              comma-separated columns to index with <type>
    file-index.<type>.<column>.<option>    one option of one column's index
    file-index.<type>.<option>             an option for every column of <type>
    file-index.in-manifest-threshold       embed containers up to this size (default 500 bytes)

Types: ``bloom-filter`` (options ``items``, ``fpp``), ``bitmap`` (``version``,
``index-block-size``), ``bsi`` (none).
"""
from __future__ import annotations

from .. import types as T
from ..errors import InvalidArgumentError, SchemaError
from .bitmap import BitmapIndex, _parse_size
from .bitmap import OPTIONS as BITMAP_OPTIONS
from .bloom import OPTIONS as BLOOM_OPTIONS
from .bloom import BloomFilterIndex
from .bsi import BsiIndex
from .container import FileIndexWriter

__all__ = ["FileIndexBuilder", "INDEX_TYPES", "DEFAULT_IN_MANIFEST_THRESHOLD", "index_file_name",
           "should_embed"]

PREFIX = "file-index."
THRESHOLD_KEY = "file-index.in-manifest-threshold"
DEFAULT_IN_MANIFEST_THRESHOLD = 500
INDEX_TYPES = {
    "bloom-filter": (BloomFilterIndex, BLOOM_OPTIONS),
    "bitmap": (BitmapIndex, BITMAP_OPTIONS),
    "bsi": (BsiIndex, ()),
}
# table-level options with the file-index prefix that are not index definitions
_OTHER_KEYS = {THRESHOLD_KEY, "file-index.read.enabled"}


def index_file_name(data_file_name: str) -> str:
    """The name of the index file beside a data file."""
    return data_file_name + ".index"


def should_embed(container: bytes, threshold: int = DEFAULT_IN_MANIFEST_THRESHOLD) -> bool:
    """True when the container goes into the manifest entry rather than a file."""
    return len(container) <= threshold


class FileIndexBuilder:
    """Per data file: ``add(batch)`` for every batch the row writer gets, then ``finish()``."""

    def __init__(self, schema: T.RowType, options: dict | None = None):
        self.schema = schema
        options = {k: v for k, v in (options or {}).items() if k.startswith(PREFIX)}
        self.threshold = DEFAULT_IN_MANIFEST_THRESHOLD
        if THRESHOLD_KEY in options:
            self.threshold = _parse_size(options[THRESHOLD_KEY])
        columns: dict[str, list[str]] = {}
        per_type: dict[str, dict] = {}
        per_column: dict[tuple, dict] = {}
        names = {f.name for f in schema.fields}
        for key, value in options.items():
            if key in _OTHER_KEYS:
                continue
            rest = key[len(PREFIX):]
            itype = next((t for t in INDEX_TYPES if rest.startswith(t + ".")), None)
            if itype is None:
                raise InvalidArgumentError(f"unknown file index option {key!r} "
                                           f"(index types: {', '.join(INDEX_TYPES)})")
            tail = rest[len(itype) + 1:]
            known = INDEX_TYPES[itype][1]
            if tail == "columns":
                cols = [c.strip() for c in str(value).split(",") if c.strip()]
                for c in cols:
                    if c not in names:
                        raise SchemaError(f"{key}: no column {c!r} in the schema")
                columns[itype] = cols
            elif tail in known:
                per_type.setdefault(itype, {})[tail] = value
            elif "." in tail:
                col, opt = tail.rsplit(".", 1)
                if opt not in known:
                    raise InvalidArgumentError(f"unknown {itype} option {opt!r} in {key!r}"
                                               f" (known: {', '.join(known) or 'none'})")
                per_column.setdefault((itype, col), {})[opt] = value
            else:
                raise InvalidArgumentError(f"unknown {itype} option {tail!r} in {key!r}"
                                           f" (known: columns{''.join(', ' + k for k in known)})")
        for (itype, col) in per_column:
            if col not in columns.get(itype, []):
                raise InvalidArgumentError(f"options given for {itype} index of column {col!r}, "
                                           f"which is not in file-index.{itype}.columns")
        self.indexes = []  # (column, type, writer)
        fields = {f.name: f for f in schema.fields}
        for itype, cols in columns.items():
            cls = INDEX_TYPES[itype][0]
            for c in cols:
                opts = dict(per_type.get(itype, {}))
                opts.update(per_column.get((itype, c), {}))
                self.indexes.append((c, itype, cls(fields[c].type, opts)))
        self.row_count = 0

    @property
    def enabled(self) -> bool:
        return bool(self.indexes)

    def add(self, batch) -> None:
        """Feed one :class:`~paimon_engine.batch.ColumnBatch` (the same the row writer gets)."""
        for column, _, writer in self.indexes:
            writer.add_column(batch.column(column))
        self.row_count += batch.num_rows

    def finish(self) -> bytes:
        """The container bytes (``b""`` when no index is configured)."""
        if not self.indexes:
            return b""
        w = FileIndexWriter()
        # group by column, keeping the order columns were first named
        order = []
        for column, _, _ in self.indexes:
            if column not in order:
                order.append(column)
        for column in order:
            for c, itype, writer in self.indexes:
                if c == column:
                    w.add(c, itype, writer.to_bytes())
        return w.to_bytes()

    def embed(self, container: bytes) -> bool:
        return should_embed(container, self.threshold)

    def write(self, file_io, data_file_location: str):
        """Finish and store: returns ``(embedded bytes or None, index file location or None)``."""
        data = self.finish()
        if not data:
            return None, None
        if self.embed(data):
            return data, None
        loc = index_file_name(data_file_location)
        file_io.write_bytes(loc, data)
        return None, loc
