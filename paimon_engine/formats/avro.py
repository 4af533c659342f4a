"""Avro object container files: the one decoder for every Avro file the engine reads (manifests, manifest lists).

:func:`read_container` parses the header and the blocks (sync markers checked, every length checked against the
bytes there are, decompressed sizes bounded); :func:`compile_program` turns a writer schema (parsed JSON) into a
decoding program, cached per distinct schema text by :func:`program`; :func:`decode_blocks` runs the ``avro``
kernel over the blocks. Fields a caller does not want are skipped without building objects, and Iceberg's
int-keyed maps (arrays of ``{key, value}`` records) decode straight into dicts. Values are the raw Avro values
(logical types are not applied: a ``date`` is its day count, a ``decimal`` its unscaled big-endian bytes).
Bad bytes raise :class:`~paimon_engine.errors.CorruptFileError` naming the file and the offset.
"""

from __future__ import annotations

import json
import threading
import zlib

from .. import _speedups
from .._pykernels import status
from .._pykernels.avro import (OP_ARRAY, OP_BOOL, OP_BYTES, OP_DOUBLE, OP_ENUM, OP_FIXED, OP_FLOAT, OP_INT,
                               OP_INTMAP, OP_LONG, OP_MAP, OP_NULL, OP_RECORD, OP_STRING, OP_UNION)
from ..errors import CorruptFileError, UnsupportedTypeError

__all__ = ["read_container", "compile_program", "program", "decode_blocks", "read_records", "MAX_EXPANSION"]

MAGIC = b"Obj\x01"
_PRIMS = {"null": OP_NULL, "boolean": OP_BOOL, "int": OP_INT, "long": OP_LONG, "float": OP_FLOAT,
          "double": OP_DOUBLE, "bytes": OP_BYTES, "string": OP_STRING}

#: a compressed block may expand to at most this many times its size (and at least to MIN_BLOCK_LIMIT bytes);
#: manifests compress 3-10x, so this only stops a block crafted to exhaust memory
MAX_EXPANSION = 256
#: the codecs the Avro specification defines, and lz4, which some writers (fastavro) add; any other name in a
#: header is damage, not a choice of the writer
KNOWN_CODECS = frozenset({"null", "deflate", "snappy", "bzip2", "xz", "zstandard", "lz4"})
MIN_BLOCK_LIMIT = 16 << 20


# ---------------------------------------------------------------------------
# container
# ---------------------------------------------------------------------------

def _varint(buf, pos, path):
    if pos < len(buf) and buf[pos] < 0x80:   # one byte: most lengths and counts
        b = buf[pos]
        return (b >> 1) ^ -(b & 1), pos + 1
    v = shift = 0
    n = len(buf)
    while True:
        if pos >= n:
            raise CorruptFileError("Avro header truncated", path=path, offset=pos)
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift > 63:
            raise CorruptFileError("overlong varint in Avro header", path=path, offset=pos)
    return (v >> 1) ^ -(v & 1), pos


#: recently parsed metadata maps: header bytes (magic to the end of the map) -> (metadata, length). Files of one
#: writer repeat them (a table's manifests differ only in their sync markers and blocks), so a file that starts
#: with the very same bytes has the very same metadata.
_HEADERS: dict = {}


def _cached_header(data):
    if type(data) is bytes:
        for head, hit in list(_HEADERS.items()):
            if data.startswith(head):
                return hit
    return None


def read_container(data: bytes, path: str = "?"):
    """-> (metadata dict of bytes, list of (record count, decompressed block bytes, block offset))."""
    hit = _cached_header(data)
    if hit is not None:
        meta, pos = dict(hit[0]), hit[1]
    else:
        meta, pos = _read_meta(data, path)
        if type(data) is bytes and pos <= 65536:
            with _LOCK:
                if len(_HEADERS) >= 8:
                    _HEADERS.pop(next(iter(_HEADERS)))
                _HEADERS[data[:pos]] = (dict(meta), pos)
    return meta, _read_blocks(data, meta, pos, path)


def _read_meta(data, path):
    if data[:4] != MAGIC:
        raise CorruptFileError("not an Avro container file (bad magic)", path=path, offset=0)
    pos = 4
    meta = {}
    while True:
        count, pos = _varint(data, pos, path)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, pos = _varint(data, pos, path)
        if count > len(data):
            raise CorruptFileError(f"Avro header claims {count} metadata entries", path=path, offset=pos)
        for _ in range(count):
            klen, pos = _varint(data, pos, path)
            if klen < 0 or pos + klen > len(data):
                raise CorruptFileError("bad Avro metadata key length", path=path, offset=pos)
            try:
                key = data[pos:pos + klen].decode("utf-8")
            except UnicodeDecodeError:
                raise CorruptFileError("Avro metadata key is not UTF-8", path=path, offset=pos) from None
            pos += klen
            vlen, pos = _varint(data, pos, path)
            if vlen < 0 or pos + vlen > len(data):
                raise CorruptFileError("bad Avro metadata value length", path=path, offset=pos)
            meta[key] = data[pos:pos + vlen]
            pos += vlen
    return meta, pos


def _read_blocks(data, meta, pos, path):
    if pos + 16 > len(data):
        raise CorruptFileError("Avro header truncated before the sync marker", path=path, offset=pos)
    sync = data[pos:pos + 16]
    pos += 16
    try:
        codec = meta.get("avro.codec", b"null").decode("ascii")
    except UnicodeDecodeError:
        raise CorruptFileError("Avro codec name is not ASCII", path=path, offset=pos) from None
    if codec not in KNOWN_CODECS:   # the offset is the end of the header, whose metadata names the codec
        raise CorruptFileError(f"Avro header names an unknown codec {codec!r}", path=path, offset=pos - 16)
    blocks = []
    n = len(data)
    while pos < n:
        start = pos
        count, pos = _varint(data, pos, path)
        size, pos = _varint(data, pos, path)
        if count < 0 or size < 0 or pos + size + 16 > n:
            raise CorruptFileError(f"bad Avro block (count {count}, size {size})", path=path, offset=start)
        raw = data[pos:pos + size]
        pos += size
        if data[pos:pos + 16] != sync:
            raise CorruptFileError("Avro sync marker mismatch", path=path, offset=pos)
        pos += 16
        body = _decompress(codec, raw, path, start)
        if count > len(body) and count > 0:
            # every record of a manifest or manifest list takes at least one byte
            raise CorruptFileError(f"Avro block claims {count} records in {len(body)} bytes", path=path,
                                   offset=start)
        blocks.append((count, body, start))
    return blocks


def _decompress(codec, raw, path, offset):
    try:
        if codec == "null":
            return raw
        limit = max(MIN_BLOCK_LIMIT, MAX_EXPANSION * len(raw))
        if codec == "deflate":
            d = zlib.decompressobj(-15)
            out = d.decompress(raw, limit)
            if d.unconsumed_tail:
                raise CorruptFileError(f"Avro block expands to more than {limit} bytes", path=path, offset=offset)
            if not d.eof:
                raise CorruptFileError("Avro deflate block is truncated", path=path, offset=offset)
            return out
        if codec == "zstandard":
            import zstandard
            return zstandard.ZstdDecompressor().decompress(raw, max_output_size=limit)
        if codec == "snappy":
            try:
                import cramjam
                body = bytes(cramjam.snappy.decompress_raw(raw[:-4]))
            except ImportError:
                raise UnsupportedTypeError("Avro snappy codec needs the cramjam package") from None
            if zlib.crc32(body) & 0xFFFFFFFF != int.from_bytes(raw[-4:], "big"):
                raise CorruptFileError("Avro snappy block checksum mismatch", path=path, offset=offset)
            return body
    except (zlib.error, ValueError, RuntimeError) as exc:
        raise CorruptFileError(f"cannot decompress Avro block ({codec}): {exc}", path=path, offset=offset) from None
    except Exception as exc:
        if type(exc).__module__.startswith("zstandard"):
            raise CorruptFileError(f"cannot decompress Avro block: {exc}", path=path, offset=offset) from None
        raise
    raise UnsupportedTypeError(f"unsupported Avro codec {codec!r} in {path}")


# ---------------------------------------------------------------------------
# programs
# ---------------------------------------------------------------------------

def compile_program(schema, want=None, names=None):
    """Compile an Avro schema (parsed JSON) to a program node ``(op, arg, keep)``.

    ``want``: for a record, a dict field name -> nested ``want`` (``True`` = keep everything below); fields not
    named are skipped. ``None`` keeps everything.
    """
    names = {} if names is None else names
    keep_all = want is None or want is True

    if isinstance(schema, str):
        if schema in _PRIMS:
            return (_PRIMS[schema], None, True)
        if schema in names:
            node = names[schema]
            return node if keep_all else _rekeep(node, want)
        raise UnsupportedTypeError(f"unknown Avro type {schema!r}")
    if isinstance(schema, list):
        return (OP_UNION, tuple(compile_program(s, want, names) for s in schema), True)
    if not isinstance(schema, dict):
        raise UnsupportedTypeError(f"bad Avro schema node {schema!r}")
    t = schema.get("type")
    if t in _PRIMS:
        return (_PRIMS[t], None, True)
    if t == "fixed":
        size = int(schema["size"])
        if not 0 <= size < 2 ** 31:
            raise ValueError(f"bad fixed size {size}")
        node = (OP_FIXED, size, True)
        names[schema.get("name", "")] = node
        return node
    if t == "enum":
        node = (OP_ENUM, tuple(schema["symbols"]), True)
        names[schema.get("name", "")] = node
        return node
    if t == "array":
        items = schema["items"]
        item_rec = items if isinstance(items, dict) else None
        if item_rec is not None and item_rec.get("type") == "record" and \
                [f["name"] for f in item_rec.get("fields", [])] == ["key", "value"]:
            fk, fv = item_rec["fields"]
            names[item_rec.get("name", "")] = (OP_RECORD, (("key", compile_program(fk["type"], None, names)),
                                                           ("value", compile_program(fv["type"], None, names))),
                                               True)
            return (OP_INTMAP, (compile_program(fk["type"], None, names), compile_program(fv["type"], None, names)),
                    True)
        return (OP_ARRAY, compile_program(items, None, names), True)
    if t == "map":
        return (OP_MAP, compile_program(schema["values"], None, names), True)
    if t == "record":
        fields = []
        for f in schema.get("fields", []):
            sub = None if keep_all else want.get(f["name"], False)
            if sub is False:
                node = _skip(compile_program(f["type"], None, names))
            else:
                node = compile_program(f["type"], sub, names)
            fields.append((f["name"], node))
        node = (OP_RECORD, tuple(fields), True)
        if schema.get("name"):
            names[schema["name"]] = node
        return node
    if isinstance(t, (dict, list)) or (isinstance(t, str) and t in names):
        return compile_program(t, want, names)
    raise UnsupportedTypeError(f"unsupported Avro type {t!r}")


def _skip(node):
    op, arg, _ = node
    if op == OP_UNION:
        return (op, tuple(_skip(a) for a in arg), False)
    if op == OP_RECORD:
        return (op, tuple((n, _skip(c)) for n, c in arg), False)
    if op == OP_INTMAP:
        return (op, (_skip(arg[0]), _skip(arg[1])), False)
    if op in (OP_ARRAY, OP_MAP):
        return (op, _skip(arg), False)
    return (op, arg, False)


def _rekeep(node, want):
    return node


_PROGRAMS: dict = {}
_LOCK = threading.Lock()


def program(schema_json: bytes, want=None, key=None, path: str = "?"):
    """``(compiled program, parsed schema)`` for a writer schema's JSON text, cached per ``(schema_json, key)``;
    ``key`` names the ``want`` (fields kept) so that one schema can be decoded several ways."""
    cache_key = (schema_json, key)
    hit = _PROGRAMS.get(cache_key)
    if hit is None:
        try:
            schema = json.loads(schema_json)
            hit = (compile_program(schema, want), schema)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise CorruptFileError(f"bad Avro schema: {type(exc).__name__}: {exc}", path=path) from None
        with _LOCK:
            if len(_PROGRAMS) > 512:
                _PROGRAMS.clear()
            _PROGRAMS[cache_key] = hit
    return hit


def decode_blocks(blocks, program, path):
    k = _speedups.kernel("avro")
    out = []
    for count, body, offset in blocks:
        rc = k.decode_records(body, count, program, out)
        if rc < 0:
            raise CorruptFileError(f"bad Avro data: {status.describe(rc)}", path=path, offset=offset,
                                   block=offset)
        if rc != len(body):
            raise CorruptFileError(f"Avro block has {len(body) - rc} bytes after its {count} records", path=path,
                                   offset=offset)
    return out


def read_records(data: bytes, path: str = "?", want=None, key=None):
    """Every record of an Avro container file: ``(metadata, writer schema (parsed JSON), records)``; ``want`` and
    ``key`` as for :func:`program`."""
    meta, blocks = read_container(data, path)
    schema_json = meta.get("avro.schema")
    if schema_json is None:
        raise CorruptFileError("Avro file without avro.schema", path=path)
    prog, schema = program(schema_json, want, key, path)
    return meta, schema, decode_blocks(blocks, prog, path)
