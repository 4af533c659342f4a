"""Fast manifest reading for planning: an Avro container parser and a schema-program decoder.

Planning reads many small manifests that share a handful of Avro schemas. Here each distinct writer schema (its
JSON text) is compiled once into a decoding program (cached), and records are decoded by the ``avro`` kernel:
fields the planner does not need (``column_sizes``, ``key_metadata``, metric maps when there is no filter) are
skipped without building objects, and Iceberg's int-keyed maps (arrays of ``{key, value}`` records) decode
straight into dicts. The result is the table layer's :class:`~paimon_engine.table.manifest.ManifestEntry` list,
with the same inheritance rules as :func:`paimon_engine.table.manifest.read_manifest`.
"""

from __future__ import annotations

import decimal
import json
import threading
import zlib

from .. import _speedups
from .. import types as T
from .._pykernels import status
from .._pykernels.avro import (OP_ARRAY, OP_BOOL, OP_BYTES, OP_DOUBLE, OP_ENUM, OP_FIXED, OP_FLOAT, OP_INT,
                               OP_INTMAP, OP_LONG, OP_MAP, OP_NULL, OP_RECORD, OP_STRING, OP_UNION)
from ..errors import CorruptFileError, UnsupportedTypeError

__all__ = ["read_container", "compile_program", "read_manifest_entries", "MANIFEST_FIELDS"]

MAGIC = b"Obj\x01"
_PRIMS = {"null": OP_NULL, "boolean": OP_BOOL, "int": OP_INT, "long": OP_LONG, "float": OP_FLOAT,
          "double": OP_DOUBLE, "bytes": OP_BYTES, "string": OP_STRING}

#: data_file fields the planner uses; metric maps only when a filter or delete index needs them
DATA_FILE_BASE = ("content", "file_path", "file_format", "partition", "record_count", "file_size_in_bytes",
                  "split_offsets", "equality_ids", "referenced_data_file", "pe_writer_schema_id", "pe_file_index")
DATA_FILE_METRICS = ("value_counts", "null_value_counts", "nan_value_counts", "lower_bounds", "upper_bounds")
MANIFEST_FIELDS = ("status", "snapshot_id", "sequence_number", "file_sequence_number", "data_file")


# ---------------------------------------------------------------------------
# container
# ---------------------------------------------------------------------------

def _varint(buf, pos, path):
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


def read_container(data: bytes, path: str = "?"):
    """-> (metadata dict of bytes, list of (record count, decompressed block bytes, block offset))."""
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
            key = data[pos:pos + klen].decode("utf-8", "replace")
            pos += klen
            vlen, pos = _varint(data, pos, path)
            if vlen < 0 or pos + vlen > len(data):
                raise CorruptFileError("bad Avro metadata value length", path=path, offset=pos)
            meta[key] = data[pos:pos + vlen]
            pos += vlen
    if pos + 16 > len(data):
        raise CorruptFileError("Avro header truncated before the sync marker", path=path, offset=pos)
    sync = data[pos:pos + 16]
    pos += 16
    codec = meta.get("avro.codec", b"null").decode("ascii", "replace")
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
        blocks.append((count, _decompress(codec, raw, path, start), start))
    return meta, blocks


def _decompress(codec, raw, path, offset):
    try:
        if codec == "null":
            return raw
        if codec == "deflate":
            return zlib.decompress(raw, -15)
        if codec == "zstandard":
            import zstandard
            return zstandard.ZstdDecompressor().decompress(raw, max_output_size=max(1 << 20, 64 * len(raw)))
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
        node = (OP_FIXED, int(schema["size"]), True)
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


def _program(schema_json: bytes, metrics: bool):
    key = (schema_json, metrics)
    prog = _PROGRAMS.get(key)
    if prog is None:
        schema = json.loads(schema_json)
        df_want = {n: True for n in DATA_FILE_BASE}
        if metrics:
            df_want.update({n: True for n in DATA_FILE_METRICS})
        want = {n: True for n in MANIFEST_FIELDS}
        want["data_file"] = df_want
        prog = compile_program(schema, want)
        part_ids = _partition_field_ids(schema)
        with _LOCK:
            if len(_PROGRAMS) > 512:
                _PROGRAMS.clear()
            _PROGRAMS[key] = prog = (prog, part_ids)
    return prog


def _partition_field_ids(schema):
    """Partition field ids and names in the writer's partition record, in order."""
    try:
        for f in schema["fields"]:
            if f["name"] == "data_file":
                dt = f["type"]
                if isinstance(dt, list):
                    dt = [x for x in dt if x != "null"][0]
                for g in dt["fields"]:
                    if g["name"] == "partition":
                        pt = g["type"]
                        if isinstance(pt, list):
                            pt = [x for x in pt if x != "null"][0]
                        return [(p.get("field-id"), p["name"]) for p in pt.get("fields", [])]
    except (KeyError, TypeError, IndexError):
        return []
    return []


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


# ---------------------------------------------------------------------------
# manifests
# ---------------------------------------------------------------------------

def read_manifest_entries(io, manifest, partition_type: T.RowType | None, metrics: bool = True,
                          include_deleted: bool = False, data: bytes | None = None):
    """Entries of one manifest (``ManifestEntry`` objects of the table layer) with inherited snapshot ids and
    sequence numbers; metric maps are decoded only when ``metrics``. ``data``: the file's bytes if already read."""
    from ..table.manifest import DataFile, ManifestEntry, STATUS_ADDED, STATUS_DELETED
    path = manifest.manifest_path
    if data is None:
        data = io.read_bytes(path)
    meta, blocks = read_container(data, path)
    schema_json = meta.get("avro.schema")
    if schema_json is None:
        raise CorruptFileError("Avro file without avro.schema", path=path)
    try:
        program, part_fields = _program(schema_json, metrics)
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptFileError(f"bad Avro schema in manifest: {exc}", path=path) from None
    records = decode_blocks(blocks, program, path)
    # partition values: by partition field id when the writer recorded ids, else by position
    convert = []
    if partition_type is not None:
        by_id = {f.id: (i, f.type) for i, f in enumerate(partition_type.fields)}
        for pos_in_writer, (fid, name) in enumerate(part_fields):
            target = by_id.get(fid) if fid is not None else None
            if target is None and pos_in_writer < len(partition_type.fields):
                target = (pos_in_writer, partition_type.fields[pos_in_writer].type)
            convert.append((name, target))
        width = len(partition_type.fields)
    else:
        convert = [(name, (i, None)) for i, (fid, name) in enumerate(part_fields)]
        width = len(part_fields)
    inherited_snap = manifest.added_snapshot_id
    manifest_seq = manifest.sequence_number or 0
    spec_id = manifest.partition_spec_id
    out = []
    for i, rec in enumerate(records):
        st = rec.get("status")
        if st not in (0, 1, 2):
            raise CorruptFileError(f"bad manifest entry status {st}", path=path, row=i, field="status")
        if st == STATUS_DELETED and not include_deleted:
            continue
        df = rec.get("data_file")
        if not isinstance(df, dict) or df.get("file_path") is None:
            raise CorruptFileError("manifest entry without a data file", path=path, row=i)
        part_rec = df.get("partition") or {}
        pvals = [None] * width
        for name, target in convert:
            if target is None:
                continue
            v = part_rec.get(name)
            idx, t = target
            if v is not None and isinstance(t, T.DecimalType) and isinstance(v, (bytes, bytearray)):
                v = decimal.Decimal(int.from_bytes(v, "big", signed=True)).scaleb(-t.scale)
            pvals[idx] = v
        content = df.get("content") or 0
        rc, size = df.get("record_count"), df.get("file_size_in_bytes")
        if content not in (0, 1, 2) or rc is None or size is None or rc < 0 or size < 0:
            raise CorruptFileError("bad data file content, record count or size", path=path, row=i)
        eq = df.get("equality_ids")
        datafile = DataFile(
            df["file_path"], df.get("file_format") or "PARQUET", tuple(pvals), rc, size, content=content,
            value_counts=df.get("value_counts"), null_value_counts=df.get("null_value_counts"),
            nan_value_counts=df.get("nan_value_counts"), lower_bounds=df.get("lower_bounds"),
            upper_bounds=df.get("upper_bounds"), split_offsets=df.get("split_offsets"),
            equality_ids=[int(x) for x in eq] if eq is not None else None,
            referenced_data_file=df.get("referenced_data_file"), spec_id=spec_id,
            writer_schema_id=df.get("pe_writer_schema_id"), file_index=df.get("pe_file_index"))
        snap = rec.get("snapshot_id")
        if snap is None:
            snap = inherited_snap
        seq = rec.get("sequence_number")
        fseq = rec.get("file_sequence_number")
        if st == STATUS_ADDED:
            if seq is None:
                seq = manifest_seq
            if fseq is None:
                fseq = manifest_seq
        if seq is None and manifest_seq == 0:
            seq = 0
        out.append(ManifestEntry(st, snap, datafile, seq, fseq))
    return out
