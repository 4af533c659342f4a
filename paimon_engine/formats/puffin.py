"""Puffin files: blobs (statistics, deletion vectors) with a JSON footer that describes them.

Layout (Iceberg's Puffin spec, version 1)::

    Magic Blob_1 ... Blob_n Footer
    Footer = Magic FooterPayload FooterPayloadSize Flags Magic

``Magic`` is ``PFA1`` (``50 46 41 31``). ``FooterPayload`` is the UTF-8 JSON ``FileMetadata`` object
(``{"blobs": [BlobMetadata...], "properties": {...}}``); ``FooterPayloadSize`` its length as a 4-byte signed
little-endian integer; ``Flags`` four bytes whose lowest bit of byte 0 says the payload is compressed (the spec
fixes LZ4 for a compressed footer). Every ``BlobMetadata`` names ``type``, ``fields``, ``snapshot-id``,
``sequence-number``, ``offset``, ``length`` and, optionally, ``compression-codec`` and ``properties``.

Supported blob codecs: none and ``zstd`` (one frame with its content size). ``lz4`` (for blobs or a compressed
footer) is refused with :class:`~paimon_engine.errors.UnsupportedTypeError`. Blob types this module does not know
are kept as opaque bytes; :meth:`PuffinWriter.add_raw` copies a blob through a rewrite byte for byte.

Every length and offset read from a file is checked before it is used: a bad file raises
:class:`~paimon_engine.errors.CorruptFileError` naming the file, the blob (index and type) and the byte offset.
"""

from __future__ import annotations

import json
import struct

from ..errors import CorruptFileError, InvalidArgumentError, UnsupportedTypeError

__all__ = ["MAGIC", "FOOTER_STRUCT_LENGTH", "BlobMetadata", "Blob", "PuffinReader", "PuffinWriter",
           "read_puffin", "DELETION_VECTOR_V1", "THETA_SKETCH_V1", "CODECS"]

MAGIC = b"PFA1"
FOOTER_STRUCT_LENGTH = 12          # FooterPayloadSize (4) + Flags (4) + Magic (4)
FLAG_COMPRESSED = 0x01
DELETION_VECTOR_V1 = "deletion-vector-v1"
THETA_SKETCH_V1 = "apache-datasketches-theta-v1"
CODECS = (None, "zstd")
_MAX_FOOTER = 64 << 20             # a footer of more than 64 MiB of JSON is not a footer
_MAX_BLOB_EXPANSION = 1 << 30      # a zstd blob may not claim more than 1 GiB once decompressed
_INT32_MAX = (1 << 31) - 1
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


class BlobMetadata:
    """One blob as the footer describes it."""

    __slots__ = ("type", "fields", "snapshot_id", "sequence_number", "offset", "length", "compression_codec",
                 "properties")

    def __init__(self, type, fields, snapshot_id, sequence_number, offset, length, compression_codec=None,
                 properties=None):
        self.type = type
        self.fields = list(fields)
        self.snapshot_id = snapshot_id
        self.sequence_number = sequence_number
        self.offset = offset
        self.length = length
        self.compression_codec = compression_codec
        self.properties = dict(properties or {})

    def to_dict(self) -> dict:
        d = {"type": self.type, "fields": list(self.fields), "snapshot-id": self.snapshot_id,
             "sequence-number": self.sequence_number, "offset": self.offset, "length": self.length}
        if self.compression_codec is not None:
            d["compression-codec"] = self.compression_codec
        if self.properties:
            d["properties"] = dict(self.properties)
        return d

    @classmethod
    def from_dict(cls, d, index: int, path):
        def bad(msg):
            return CorruptFileError(f"Puffin footer, blob {index}: {msg}", path=path)

        if not isinstance(d, dict):
            raise bad("blob metadata is not a JSON object")

        def long_(key):
            if key not in d:
                raise bad(f"missing required field {key!r}")
            v = d[key]
            if isinstance(v, bool) or not isinstance(v, int) or not _INT64_MIN <= v <= _INT64_MAX:
                raise bad(f"{key!r} is not a long: {v!r}")
            return v

        t = d.get("type")
        if not isinstance(t, str):
            raise bad(f"'type' is not a string: {t!r}")
        fields = d.get("fields")
        if not isinstance(fields, list) or any(isinstance(f, bool) or not isinstance(f, int)
                                               or not -(1 << 31) <= f <= _INT32_MAX for f in fields):
            raise bad(f"'fields' is not a list of ints: {fields!r}")
        codec = d.get("compression-codec")
        if codec is not None and not isinstance(codec, str):
            raise bad(f"'compression-codec' is not a string: {codec!r}")
        props = d.get("properties", {})
        if props is None:
            props = {}
        if not isinstance(props, dict) or not all(isinstance(v, str) for v in props.values()):
            raise bad("'properties' is not an object of string values")
        return cls(t, fields, long_("snapshot-id"), long_("sequence-number"), long_("offset"), long_("length"),
                   codec, props)

    def __eq__(self, other):
        return isinstance(other, BlobMetadata) and self.to_dict() == other.to_dict()

    def __repr__(self):
        return (f"BlobMetadata({self.type!r}, fields={self.fields}, offset={self.offset}, length={self.length}, "
                f"codec={self.compression_codec!r}, properties={self.properties})")


class Blob:
    """A blob to write: its type, payload (uncompressed), fields, snapshot/sequence ids, codec and properties."""

    __slots__ = ("type", "data", "fields", "snapshot_id", "sequence_number", "compression_codec", "properties")

    def __init__(self, type, data, fields=(), snapshot_id=-1, sequence_number=-1, compression_codec=None,
                 properties=None):
        self.type = type
        self.data = bytes(data)
        self.fields = list(fields)
        self.snapshot_id = int(snapshot_id)
        self.sequence_number = int(sequence_number)
        self.compression_codec = compression_codec
        self.properties = dict(properties or {})


def _refuse_codec(codec, what):
    if codec == "lz4":
        raise UnsupportedTypeError(f"{what} is lz4-compressed; lz4 is not supported (write Puffin with zstd or "
                                   f"no compression)")
    raise UnsupportedTypeError(f"{what} uses the unknown compression codec {codec!r}; supported: none, zstd")


class _BytesSource:
    __slots__ = ("data", "size")

    def __init__(self, data):
        self.data = memoryview(data)
        self.size = len(self.data)

    def read_at(self, offset, length):
        return bytes(self.data[offset:offset + length])


class PuffinReader:
    """The footer of a Puffin file and its blobs.

    ``source`` is the whole file as bytes, or an object with ``size`` and ``read_at(offset, length)`` (an
    :class:`~paimon_engine.io.InputFile`); only the footer is read on construction, each blob on request.
    ``path`` names the file in errors.
    """

    def __init__(self, source, path: str | None = None):
        if isinstance(source, (bytes, bytearray, memoryview)):
            source = _BytesSource(source)
        self._src = source
        self.path = path if path is not None else getattr(source, "path", None)
        self.size = int(source.size)
        self.blobs: list[BlobMetadata] = []
        self.properties: dict = {}
        self.footer_offset = 0
        self._read_footer()

    def _err(self, msg, offset=None):
        return CorruptFileError(msg, path=self.path, offset=offset)

    def _read_footer(self):
        n = self.size
        if n < 4 + 4 + FOOTER_STRUCT_LENGTH:
            raise self._err(f"file of {n} bytes is shorter than a Puffin header and footer", 0)
        head = self._src.read_at(0, 4)
        if head != MAGIC:
            raise self._err(f"bad Puffin magic {head!r} at the start of the file", 0)
        tail = self._src.read_at(n - FOOTER_STRUCT_LENGTH, FOOTER_STRUCT_LENGTH)
        if tail[8:12] != MAGIC:
            raise self._err(f"bad Puffin magic {tail[8:12]!r} at the end of the file", n - 4)
        (payload_size,) = struct.unpack("<i", tail[0:4])
        flags = tail[4:8]
        size_at = n - FOOTER_STRUCT_LENGTH
        if payload_size < 0 or payload_size > _MAX_FOOTER:
            raise self._err(f"footer payload size {payload_size} is out of range", size_at)
        footer_start = n - FOOTER_STRUCT_LENGTH - payload_size - 4
        if footer_start < 4:
            raise self._err(f"footer payload size {payload_size} does not fit in the file ({n} bytes)", size_at)
        fm = self._src.read_at(footer_start, 4)
        if fm != MAGIC:
            raise self._err(f"bad Puffin magic {fm!r} at the start of the footer", footer_start)
        self.footer_offset = footer_start
        if flags[0] & FLAG_COMPRESSED:
            _refuse_codec("lz4", f"the Puffin footer of {self.path}")
        payload = self._src.read_at(footer_start + 4, payload_size)
        try:
            doc = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise self._err(f"footer payload is not UTF-8 JSON: {exc}", footer_start + 4) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("blobs"), list):
            raise self._err("footer payload has no 'blobs' list", footer_start + 4)
        props = doc.get("properties", {})
        if props is None:
            props = {}
        if not isinstance(props, dict) or not all(isinstance(v, str) for v in props.values()):
            raise self._err("footer 'properties' is not an object of string values", footer_start + 4)
        self.properties = props
        blobs = []
        for i, b in enumerate(doc["blobs"]):
            m = BlobMetadata.from_dict(b, i, self.path)
            if m.offset < 4 or m.length < 0 or m.offset + m.length > footer_start:
                raise self._err(f"blob {i} ({m.type}) range {m.offset}+{m.length} lies outside the blob area "
                                f"4..{footer_start}", m.offset)
            blobs.append(m)
        self.blobs = blobs

    def raw(self, blob: BlobMetadata | int) -> bytes:
        """A blob's bytes as stored (still compressed)."""
        i, m = self._resolve(blob)
        if m.offset < 4 or m.length < 0 or m.offset + m.length > self.footer_offset:
            raise self._err(f"blob {i} ({m.type}) range {m.offset}+{m.length} lies outside the blob area", m.offset)
        return self._src.read_at(m.offset, m.length)

    def read(self, blob: BlobMetadata | int) -> bytes:
        """A blob's payload, decompressed."""
        i, m = self._resolve(blob)
        raw = self.raw(m)
        codec = m.compression_codec
        if codec is None:
            return raw
        if codec != "zstd":
            _refuse_codec(codec, f"blob {i} ({m.type}) of {self.path}")
        return _zstd_decompress(raw, self.path, i, m)

    def _resolve(self, blob):
        if isinstance(blob, int):
            if not 0 <= blob < len(self.blobs):
                raise InvalidArgumentError(f"no blob {blob} in {self.path} ({len(self.blobs)} blobs)")
            return blob, self.blobs[blob]
        for i, m in enumerate(self.blobs):
            if m is blob:
                return i, m
        return -1, blob

    def __iter__(self):
        return iter(self.blobs)

    def __len__(self):
        return len(self.blobs)


def _zstd_decompress(raw, path, i, m):
    import zstandard
    try:
        declared = zstandard.frame_content_size(raw)
    except zstandard.ZstdError as exc:
        raise CorruptFileError(f"blob {i} ({m.type}): not a zstd frame: {exc}", path=path, offset=m.offset) from None
    if declared < 0:
        raise CorruptFileError(f"blob {i} ({m.type}): zstd frame without its content size", path=path,
                               offset=m.offset)
    if declared > _MAX_BLOB_EXPANSION or declared > max(len(raw), 1) * 32768:
        raise CorruptFileError(f"blob {i} ({m.type}): zstd frame claims {declared} bytes", path=path,
                               offset=m.offset)
    try:
        out = zstandard.ZstdDecompressor().decompress(raw, max_output_size=declared)
    except zstandard.ZstdError as exc:
        raise CorruptFileError(f"blob {i} ({m.type}): zstd: {exc}", path=path, offset=m.offset) from None
    if len(out) != declared:
        raise CorruptFileError(f"blob {i} ({m.type}): zstd frame gave {len(out)} bytes, declared {declared}",
                               path=path, offset=m.offset)
    return out


def read_puffin(io, path: str) -> PuffinReader:
    """Open the Puffin file at ``path`` through a :class:`~paimon_engine.io.FileIO` (footer read now; the
    returned reader keeps the file's bytes)."""
    return PuffinReader(io.read_bytes(path), path)


class PuffinWriter:
    """Builds a Puffin file in memory: ``add`` blobs, then ``finish()`` returns the file's bytes.

    ``created_by`` goes to the footer's ``created-by`` property. ``compress_footer=True`` is refused (the spec's
    footer codec is LZ4, which is not supported).
    """

    def __init__(self, created_by: str | None = None, properties: dict | None = None, compress_footer=False):
        if compress_footer:
            _refuse_codec("lz4", "a compressed Puffin footer")
        self._parts = [MAGIC]
        self._pos = len(MAGIC)
        self.blobs: list[BlobMetadata] = []
        self.properties = dict(properties or {})
        if created_by is not None:
            self.properties["created-by"] = created_by
        self._finished = None

    def add(self, blob: Blob) -> BlobMetadata:
        """Append a blob (compressed with its codec) and return its metadata."""
        codec = blob.compression_codec
        if codec is None:
            stored = blob.data
        elif codec == "zstd":
            import zstandard
            stored = zstandard.ZstdCompressor(level=3, write_content_size=True).compress(blob.data)
        else:
            _refuse_codec(codec, f"blob {blob.type!r}")
        return self._append(blob.type, stored, blob.fields, blob.snapshot_id, blob.sequence_number, codec,
                            blob.properties)

    def add_raw(self, meta: BlobMetadata, stored: bytes) -> BlobMetadata:
        """Copy a blob read from another Puffin file byte for byte (any type, any codec): its metadata is kept,
        only the offset changes."""
        if len(stored) != meta.length:
            raise InvalidArgumentError(f"blob {meta.type!r}: {len(stored)} bytes given, its metadata says "
                                       f"{meta.length}")
        return self._append(meta.type, stored, meta.fields, meta.snapshot_id, meta.sequence_number,
                            meta.compression_codec, meta.properties)

    def _append(self, type_, stored, fields, snapshot_id, sequence_number, codec, properties):
        if self._finished is not None:
            raise InvalidArgumentError("the Puffin file is finished")
        if not isinstance(type_, str) or not type_:
            raise InvalidArgumentError(f"blob type must be a non-empty string: {type_!r}")
        for k, v in (properties or {}).items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise InvalidArgumentError(f"blob property {k!r}: keys and values must be strings")
        m = BlobMetadata(type_, [int(f) for f in fields], int(snapshot_id), int(sequence_number), self._pos,
                         len(stored), codec, properties)
        self._parts.append(bytes(stored))
        self._pos += len(stored)
        self.blobs.append(m)
        return m

    def finish(self) -> bytes:
        """The complete file."""
        if self._finished is None:
            doc = {"blobs": [m.to_dict() for m in self.blobs]}
            if self.properties:
                doc["properties"] = self.properties
            payload = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
            if len(payload) > _INT32_MAX:
                raise InvalidArgumentError("Puffin footer larger than 2 GiB")
            self._parts += [MAGIC, payload, struct.pack("<i", len(payload)), b"\x00\x00\x00\x00", MAGIC]
            self._finished = b"".join(self._parts)
            self._parts = None
        return self._finished

    @property
    def footer_offset(self) -> int:
        """Where the footer starts (the end of the last blob)."""
        return self._pos
