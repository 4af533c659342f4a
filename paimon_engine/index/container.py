"""The file-index container: every index of one data file in one blob.

Layout (all integers big-endian)::

    magic (int64 1493475289347502) | version (int32 1) | head length (int32)
    column count (int32)
      per column: name (Java modified UTF-8, uint16 length) | index count (int32)
        per index: type name (modified UTF-8) | start (int32, absolute) | length (int32)
    redundant length (int32 0) | redundant bytes
    bodies

``head length`` covers everything from the magic through the redundant bytes. An
empty index is recorded as ``start = -1, length = 0``. Columns and index types keep
the order in which they were added. Index types this reader does not know are kept
(their bytes are reachable with :meth:`FileIndexReader.index_bytes`) and skipped when
answering predicates.
"""
from __future__ import annotations

import struct

from ..errors import CorruptFileError, InvalidArgumentError

MAGIC = 1493475289347502
VERSION = 1

__all__ = ["FileIndexWriter", "FileIndexReader", "load_file_index", "EMBEDDED_INDEX_PREFIX", "MAGIC", "VERSION",
           "encode_modified_utf8", "decode_modified_utf8"]


def encode_modified_utf8(text: str) -> bytes:
    """Java ``DataOutput.writeUTF`` body bytes (without the length prefix)."""
    out = bytearray()
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        c = (data[i] << 8) | data[i + 1]
        if 0x0001 <= c <= 0x007F:
            out.append(c)
        elif c <= 0x07FF:
            out += bytes((0xC0 | (c >> 6), 0x80 | (c & 0x3F)))
        else:
            out += bytes((0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)))
    return bytes(out)


def decode_modified_utf8(data: bytes, path=None, offset=None) -> str:
    units = []
    i, n = 0, len(data)
    try:
        while i < n:
            b = data[i]
            if b < 0x80:
                units.append(b)
                i += 1
            elif b & 0xE0 == 0xC0:
                if i + 1 >= n or data[i + 1] & 0xC0 != 0x80:
                    raise ValueError
                units.append(((b & 0x1F) << 6) | (data[i + 1] & 0x3F))
                i += 2
            elif b & 0xF0 == 0xE0:
                if i + 2 >= n or data[i + 1] & 0xC0 != 0x80 or data[i + 2] & 0xC0 != 0x80:
                    raise ValueError
                units.append(((b & 0x0F) << 12) | ((data[i + 1] & 0x3F) << 6) | (data[i + 2] & 0x3F))
                i += 3
            else:
                raise ValueError
        raw = b"".join(struct.pack(">H", u) for u in units)
        return raw.decode("utf-16-be", "surrogatepass").encode("utf-16", "surrogatepass").decode("utf-16")
    except (ValueError, UnicodeError):
        raise CorruptFileError("malformed modified UTF-8 name", path=path, offset=offset) from None


def _utf(text: str) -> bytes:
    body = encode_modified_utf8(text)
    if len(body) > 0xFFFF:
        raise InvalidArgumentError(f"name too long for the file index: {text[:40]!r}...")
    return struct.pack(">H", len(body)) + body


class FileIndexWriter:
    """Collects ``(column, index type) -> bytes`` and serializes the container."""

    def __init__(self):
        self._columns: dict[str, dict[str, bytes]] = {}

    def add(self, column: str, index_type: str, data: bytes | None) -> None:
        """Add one serialized index (``None`` or ``b""`` records an empty index)."""
        per = self._columns.setdefault(column, {})
        if index_type in per:
            raise InvalidArgumentError(f"index {index_type!r} of column {column!r} added twice")
        per[index_type] = bytes(data) if data else b""

    def __len__(self):
        return sum(len(v) for v in self._columns.values())

    def to_bytes(self) -> bytes:
        head = bytearray()
        head += struct.pack(">i", len(self._columns))
        entries = []
        for column, per in self._columns.items():
            head += _utf(column) + struct.pack(">i", len(per))
            for index_type, data in per.items():
                head += _utf(index_type)
                entries.append((len(head), data))
                head += b"\0" * 8
        head += struct.pack(">i", 0)  # redundant length
        head_length = 16 + len(head)
        body = bytearray()
        for pos, data in entries:
            if data:
                struct.pack_into(">ii", head, pos, head_length + len(body), len(data))
                body += data
            else:
                struct.pack_into(">ii", head, pos, -1, 0)
        if head_length + len(body) > 0x7FFFFFFF:
            raise InvalidArgumentError("file index larger than 2 GiB")
        return struct.pack(">qii", MAGIC, VERSION, head_length) + bytes(head) + bytes(body)


class FileIndexReader:
    """Reads a container's header; bodies are sliced on demand.

    ``source`` is ``bytes``/``memoryview`` or an object with ``read_at(offset, n)``
    and ``size`` (an :class:`~paimon_engine.io.InputFile`): only the header and the
    indexes actually used are read.
    """

    def __init__(self, source, path=None, schema=None):
        self.schema = schema
        self._opened = {}
        self.path = path if path is not None else getattr(source, "location", None)
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._buf = memoryview(bytes(source))
            self._file = None
            self.size = len(self._buf)
        else:
            self._buf = None
            self._file = source
            self.size = int(source.size)
        self._cache = {}
        self.entries: dict[str, dict[str, tuple[int, int]]] = {}
        self._read_header()

    def close(self):
        """Close the file this reader reads (nothing for bytes); the indexes opened from it stay usable only while
        it is open."""
        f, self._file = self._file, None
        if f is not None and hasattr(f, "close"):
            f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _read(self, off, n):
        if off < 0 or n < 0 or off + n > self.size:
            raise CorruptFileError(f"range [{off}, {off + n}) outside the {self.size}-byte file index",
                                   path=self.path, offset=off)
        if self._buf is not None:
            return self._buf[off:off + n]
        if self._file is None:
            raise InvalidArgumentError(f"the file index reader of {self.path} is closed")
        data = self._file.read_at(off, n)
        if len(data) != n:
            raise CorruptFileError("short read", path=self.path, offset=off)
        return memoryview(data)

    def _read_header(self):
        p = self.path
        first = self._read(0, 16) if self.size >= 16 else None
        if first is None:
            raise CorruptFileError(f"file index of {self.size} bytes is shorter than its header", path=p, offset=0)
        magic, version, head_length = struct.unpack(">qii", first)
        if magic != MAGIC:
            raise CorruptFileError(f"bad file index magic {magic:#x}", path=p, offset=0)
        if version != VERSION:
            raise CorruptFileError(f"unsupported file index version {version}", path=p, offset=8)
        if head_length < 24 or head_length > self.size:
            raise CorruptFileError(f"bad file index head length {head_length}", path=p, offset=12)
        head = bytes(self._read(0, head_length))
        pos = 16

        def need(n):
            if pos + n > head_length:
                raise CorruptFileError("truncated file index header", path=p, offset=pos)

        def utf():
            nonlocal pos
            need(2)
            n = struct.unpack_from(">H", head, pos)[0]
            pos += 2
            need(n)
            s = decode_modified_utf8(head[pos:pos + n], p, pos)
            pos += n
            return s

        need(4)
        ncols = struct.unpack_from(">i", head, pos)[0]
        pos += 4
        if ncols < 0 or ncols * 6 > head_length:
            raise CorruptFileError(f"bad column count {ncols}", path=p, offset=pos - 4)
        for _ in range(ncols):
            column = utf()
            need(4)
            nidx = struct.unpack_from(">i", head, pos)[0]
            if nidx < 0 or nidx * 10 > head_length:
                raise CorruptFileError(f"bad index count {nidx}", path=p, offset=pos)
            pos += 4
            per = self.entries.setdefault(column, {})
            for _ in range(nidx):
                index_type = utf()
                need(8)
                start, length = struct.unpack_from(">ii", head, pos)
                if not (start == -1 and length == 0):
                    if start < head_length or length < 0 or start + length > self.size:
                        raise CorruptFileError(
                            f"index {index_type!r} of column {column!r} at [{start}, {start + length}) "
                            f"is outside the body", path=p, offset=pos)
                per[index_type] = (start, length)
                pos += 8
        need(4)
        redundant = struct.unpack_from(">i", head, pos)[0]
        if redundant < 0 or pos + 4 + redundant > head_length:
            raise CorruptFileError(f"bad redundant length {redundant}", path=p, offset=pos)
        self.head_length = head_length

    def columns(self):
        return list(self.entries)

    def index_types(self, column: str):
        return list(self.entries.get(column, {}))

    def index_bytes(self, column: str, index_type: str):
        """Raw bytes of one index (``b""`` for an empty one); KeyError if absent."""
        start, length = self.entries[column][index_type]
        if start == -1:
            return b""
        return bytes(self._read(start, length))

    def index_range(self, column: str, index_type: str):
        return self.entries[column][index_type]

    def read_range(self, offset: int, n: int):
        return self._read(offset, n)

    # -- typed access ---------------------------------------------------------
    def open_index(self, column: str, index_type: str, data_type):
        """A query object for one index (bitmap indexes are read lazily); None for
        an unknown index type."""
        key = (column, index_type)
        if key in self._opened:
            return self._opened[key]
        from .bitmap import BitmapIndex
        from .bloom import BloomFilterIndex
        from .bsi import BsiIndex
        start, length = self.entries[column][index_type]
        if start == -1:
            idx = None  # an empty index says nothing
        elif index_type == "bitmap":
            idx = BitmapIndex.open(lambda off, n, s=start: self._read(s + off, n), length, data_type,
                                   path=self.path, offset=start)
        elif index_type == "bloom-filter":
            idx = BloomFilterIndex.from_bytes(self._read(start, length), data_type, self.path, start)
        elif index_type == "bsi":
            idx = BsiIndex.from_bytes(self._read(start, length), data_type, self.path, start)
        else:
            idx = None
        self._opened[key] = idx
        return idx

    def indexes_for(self, column: str, data_type):
        """Query objects of every known index of ``column``."""
        out = []
        for index_type in self.entries.get(column, {}):
            idx = self.open_index(column, index_type, data_type)
            if idx is not None:
                out.append(idx)
        return out


#: a manifest entry's ``file_index`` value that holds the index itself (base64) instead of naming a file
EMBEDDED_INDEX_PREFIX = "base64:"


def load_file_index(io, file_index: str, path=None):
    """A :class:`FileIndexReader` for a manifest entry's ``file_index`` value; it owns the file it opened (close it,
    or use it in a ``with`` block)."""
    import base64
    import binascii

    if file_index.startswith(EMBEDDED_INDEX_PREFIX):
        try:
            raw = base64.b64decode(file_index[len(EMBEDDED_INDEX_PREFIX):], validate=True)
        except (binascii.Error, ValueError) as e:
            raise CorruptFileError(f"embedded file index is not base64: {e}", path=path) from None
        return FileIndexReader(raw, path=path)
    f = io.open_input(file_index)
    try:
        return FileIndexReader(f, path=file_index)
    except BaseException:
        f.close()
        raise
