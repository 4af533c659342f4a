"""Puffin files: the layout field by field, round trips, pyiceberg reading our files, and bad input."""
import json
import struct

import pytest
import zstandard

from paimon_engine.errors import CorruptFileError, InvalidArgumentError, UnsupportedTypeError
from paimon_engine.formats.puffin import (MAGIC, Blob, BlobMetadata, PuffinReader, PuffinWriter, read_puffin)


def _two_blob_file():
    w = PuffinWriter(created_by="paimon_engine test")
    a = w.add(Blob("some-blob", b"abcdefghi", fields=[1], snapshot_id=2, sequence_number=1))
    b = w.add(Blob("some-other-blob", b"some blob \x00 binary data" * 10, fields=[2, 1], snapshot_id=2,
                   sequence_number=1, compression_codec="zstd", properties={"ndv": "3"}))
    return w.finish(), a, b


def test_layout_field_by_field():
    data, a, b = _two_blob_file()
    # Magic Blob1 Blob2 Footer; Footer = Magic FooterPayload FooterPayloadSize Flags Magic
    assert data[:4] == b"\x50\x46\x41\x31" == MAGIC
    assert (a.offset, a.length) == (4, 9)
    assert data[4:13] == b"abcdefghi"
    assert b.offset == 13
    stored = data[b.offset:b.offset + b.length]
    assert zstandard.frame_content_size(stored) == len(b"some blob \x00 binary data" * 10)  # content size present
    assert data[-4:] == MAGIC
    assert data[-8:-4] == b"\x00\x00\x00\x00"                    # flags: not compressed, reserved bits zero
    (size,) = struct.unpack("<i", data[-12:-8])                 # 4-byte signed little-endian
    footer_start = len(data) - 16 - size
    assert footer_start == b.offset + b.length                   # the footer follows the last blob
    assert data[footer_start:footer_start + 4] == MAGIC
    doc = json.loads(data[footer_start + 4:footer_start + 4 + size].decode("utf-8"))
    assert doc == {
        "blobs": [
            {"type": "some-blob", "fields": [1], "snapshot-id": 2, "sequence-number": 1, "offset": 4, "length": 9},
            {"type": "some-other-blob", "fields": [2, 1], "snapshot-id": 2, "sequence-number": 1,
             "offset": 13, "length": b.length, "compression-codec": "zstd", "properties": {"ndv": "3"}},
        ],
        "properties": {"created-by": "paimon_engine test"},
    }


def test_round_trip_and_opaque_blobs():
    data, a, b = _two_blob_file()
    r = PuffinReader(data, "t.puffin")
    assert r.properties == {"created-by": "paimon_engine test"}
    assert [m.type for m in r] == ["some-blob", "some-other-blob"]
    assert r.blobs[0] == a and r.blobs[1] == b
    assert r.read(0) == b"abcdefghi"
    assert r.read(r.blobs[1]) == b"some blob \x00 binary data" * 10
    # a rewrite copies unknown blobs byte for byte (statistics blobs survive rewrites unchanged)
    w = PuffinWriter()
    w.add(Blob("x", b"first"))
    for m in r:
        w.add_raw(m, r.raw(m))
    r2 = PuffinReader(w.finish())
    assert r2.properties == {}
    assert [r2.read(i) for i in range(3)] == [b"first", b"abcdefghi", b"some blob \x00 binary data" * 10]
    assert r2.raw(2) == r.raw(1) and r2.blobs[2].compression_codec == "zstd"
    assert r2.blobs[2].properties == {"ndv": "3"} and r2.blobs[2].offset == 4 + 5 + 9


def test_empty_file_and_file_io(tmp_path):
    from paimon_engine.io import FileIO
    data = PuffinWriter().finish()
    assert data == MAGIC + MAGIC + b'{"blobs":[]}' + struct.pack("<i", 12) + b"\0\0\0\0" + MAGIC
    p = tmp_path / "e.puffin"
    p.write_bytes(_two_blob_file()[0])
    r = read_puffin(FileIO(), str(p))
    assert len(r) == 2 and r.path == str(p)
    with FileIO().open_input(str(p)) as f:           # ranged reads: footer first, blobs on request
        assert PuffinReader(f).read(0) == b"abcdefghi"


def test_pyiceberg_reads_our_puffin():
    from pyiceberg.table.puffin import PuffinFile
    data, a, b = _two_blob_file()
    pf = PuffinFile(data)
    assert [x.type for x in pf.footer.blobs] == ["some-blob", "some-other-blob"]
    assert pf.footer.properties == {"created-by": "paimon_engine test"}
    assert pf.get_blob_payload(pf.footer.blobs[0]) == b"abcdefghi"
    assert pf.get_blob_payload(pf.footer.blobs[1]) == b"some blob \x00 binary data" * 10


def test_lz4_refused():
    with pytest.raises(UnsupportedTypeError, match="lz4"):
        PuffinWriter().add(Blob("t", b"x", compression_codec="lz4"))
    with pytest.raises(UnsupportedTypeError, match="lz4"):
        PuffinWriter(compress_footer=True)
    # a file with an lz4 blob reads its footer; the blob is refused clearly
    w = PuffinWriter()
    w.add_raw(BlobMetadata("t", [], -1, -1, 0, 3, "lz4"), b"abc")
    r = PuffinReader(w.finish(), "l.puffin")
    assert r.raw(0) == b"abc"
    with pytest.raises(UnsupportedTypeError, match="lz4"):
        r.read(0)
    w = PuffinWriter()
    w.add_raw(BlobMetadata("t", [], -1, -1, 0, 3, "snappy"), b"abc")
    with pytest.raises(UnsupportedTypeError, match="snappy"):
        PuffinReader(w.finish()).read(0)
    # a compressed footer (flag bit 0) is LZ4 by the spec
    data = bytearray(PuffinWriter().finish())
    data[-8] = 1
    with pytest.raises(UnsupportedTypeError, match="lz4"):
        PuffinReader(bytes(data), "c.puffin")


def _with_footer(doc, blobs=b"", raw_payload=None):
    payload = raw_payload if raw_payload is not None else json.dumps(doc).encode()
    return MAGIC + blobs + MAGIC + payload + struct.pack("<i", len(payload)) + b"\0\0\0\0" + MAGIC


def _blob(**kw):
    d = {"type": "t", "fields": [], "snapshot-id": -1, "sequence-number": -1, "offset": 4, "length": 3}
    d.update(kw)
    return d


@pytest.mark.parametrize("data, offset, words", [
    (b"", 0, "shorter"),
    (b"PFA1" * 4, 0, "shorter"),
    (b"XXXX" + PuffinWriter().finish()[4:], 0, "magic"),
    (PuffinWriter().finish()[:-1] + b"X", None, "magic"),
    (PuffinWriter().finish()[:4] + b"XXXX" + PuffinWriter().finish()[8:], 4, "magic"),
    (MAGIC + MAGIC + b"{}" + struct.pack("<i", -1) + b"\0\0\0\0" + MAGIC, None, "out of range"),
    (MAGIC + MAGIC + b"{}" + struct.pack("<i", 1000) + b"\0\0\0\0" + MAGIC, None, "does not fit"),
    (_with_footer(None, raw_payload=b"\xff\xfe"), 8, "UTF-8 JSON"),
    (_with_footer(None, raw_payload=b"[1]"), 8, "blobs"),
    (_with_footer({"blobs": [], "properties": {"a": 1}}), 8, "properties"),
])
def test_bad_footer(data, offset, words):
    with pytest.raises(CorruptFileError, match=words) as ei:
        PuffinReader(data, "bad.puffin")
    assert ei.value.path == "bad.puffin"
    if offset is not None:
        assert ei.value.offset == offset
    assert isinstance(ei.value, ValueError)


@pytest.mark.parametrize("blob, words", [
    (_blob(offset=2), "outside"),
    (_blob(length=4), "outside"),
    (_blob(length=-1), "outside"),
    (_blob(offset=2 ** 70), "not a long"),
    (_blob(offset=True), "not a long"),
    (_blob(fields=["a"]), "fields"),
    (_blob(type=None), "type"),
    (_blob(properties={"x": 2}), "properties"),
    ({"type": "t", "fields": [], "snapshot-id": 1, "offset": 4, "length": 3}, "sequence-number"),
])
def test_bad_blob_metadata(blob, words):
    data = _with_footer({"blobs": [_blob(), blob]}, blobs=b"abc")
    with pytest.raises(CorruptFileError, match=words) as ei:
        PuffinReader(data, "bad.puffin")
    assert "blob 1" in str(ei.value) and ei.value.path == "bad.puffin"


def test_bad_zstd_blob():
    frame = zstandard.ZstdCompressor().compress(b"x" * 100)
    for stored, words in ((b"not zstd", "zstd"), (frame[:-3], "zstd"),
                          (zstandard.ZstdCompressor(write_content_size=False).compress(b"abc"), "content size")):
        w = PuffinWriter()
        w.add_raw(BlobMetadata("t", [], -1, -1, 0, len(stored), "zstd"), stored)
        r = PuffinReader(w.finish(), "z.puffin")
        with pytest.raises(CorruptFileError, match=words) as ei:
            r.read(0)
        assert ei.value.offset == 4 and "blob 0 (t)" in str(ei.value)


def test_writer_argument_checks():
    w = PuffinWriter()
    with pytest.raises(InvalidArgumentError):
        w.add(Blob("", b""))
    with pytest.raises(InvalidArgumentError):
        w.add(Blob("t", b"", properties={"k": 1}))
    with pytest.raises(InvalidArgumentError):
        w.add_raw(BlobMetadata("t", [], -1, -1, 0, 5), b"abc")
    w.finish()
    with pytest.raises(InvalidArgumentError):
        w.add(Blob("t", b""))
