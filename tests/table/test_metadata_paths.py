"""Table metadata JSON has two parsing paths: msgspec's one-pass decode of the common document (snapshots and
the snapshot log typed) and the general path (a JSON library, then checks field by field). Whatever the
document, both give the same metadata, the same snapshots and the same errors."""
import copy
import glob
import json
import os

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_engine.errors import CorruptFileError
from paimon_engine.spec import metadata as M
from paimon_engine.spec.metadata import SnapshotList, parse_metadata

from .java_docs import V1_VALID, V2_VALID
from .test_fuzz import mutated
from .test_metadata import _many_snapshots

msgspec = pytest.importorskip("msgspec")   # installed with the test extra; the general path is tested everywhere

PATH = "/t/metadata/v9.metadata.json"


def _v3_many(n=12):
    doc = _many_snapshots(n)
    doc.update({"format-version": 3, "next-row-id": 10 * n})
    for i, s in enumerate(doc["snapshots"]):
        s.update({"first-row-id": 10 * i, "added-rows": 10})
    return doc


def _outcome(data):
    """Everything a reader can get from the document: the load's error, or the metadata as JSON with each
    snapshot (or the error its first use raises) and the snapshot log."""
    try:
        md = parse_metadata(data, PATH)
    except CorruptFileError as exc:
        return ("load error", str(exc), exc.field, exc.path, exc.offset)
    fv = md.format_version
    snaps = []
    for i in range(len(md.snapshots)):
        try:
            s = md.snapshots[i]
            snaps.append(json.dumps(s.to_dict(fv), sort_keys=True) + repr((s.operation, s.first_row_id)))
        except CorruptFileError as exc:
            snaps.append(("snapshot error", str(exc), exc.field, exc.path))
    rest = None
    if all(type(s) is str for s in snaps):
        rest = {k: v for k, v in md.to_dict().items() if k != "snapshots"}
        if rest["table-uuid"].encode() not in data:   # a v1 file without one gets a new random uuid
            del rest["table-uuid"]
    return ("ok", snaps, [e.to_dict() for e in md.snapshot_log], json.dumps(rest, sort_keys=True),
            md.current_snapshot_id, sorted(md.refs), md.metadata_location)


def _general(data, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(M, "_msgspec", None)
        return _outcome(data)


def _same(data, monkeypatch):
    fast = _outcome(data)
    assert fast == _general(data, monkeypatch)
    return fast


def _tables(tmp_path):
    """Metadata files written by this engine (v1, v2, v3: appends, a delete, a partitioned table) and by
    pyiceberg."""
    from paimon_engine.catalog import SqlCatalog
    cat = SqlCatalog("default", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "city": ["a", "b", "c"]})
    for fv in (1, 2, 3):
        t = cat.create_table(f"db.t{fv}", data.schema, [("city", "identity")] if fv == 2 else None,
                             format_version=fv)
        t.append(data)
        t.append(data)
        t.delete("id = 2")
        t.append(data)
    from pyiceberg.catalog.sql import SqlCatalog as PySqlCatalog
    py = PySqlCatalog("py", uri=f"sqlite:///{tmp_path}/py.db", warehouse=f"file://{tmp_path}/pywh")
    py.create_namespace("db")
    pt = py.create_table("db.p", schema=data.schema)
    pt.append(data)
    pt.append(data)
    pt.delete("id = 2")
    files = sorted(glob.glob(f"{tmp_path}/**/*.metadata.json", recursive=True))
    assert len(files) >= 18
    return files


def test_written_tables_parse_the_same_on_both_paths(tmp_path, monkeypatch):
    for path in _tables(tmp_path):
        with open(path, "rb") as f:
            data = f.read()
        out = _same(data, monkeypatch)
        assert out[0] == "ok", (path, out)
        # every snapshot of these files has the common shape, so the fast path must have taken them
        assert M._split(data) is not None, os.path.basename(path)


@pytest.mark.parametrize("doc", [V1_VALID, V2_VALID, _many_snapshots(), _v3_many()],
                         ids=["java-v1", "java-v2", "many-v2", "many-v3"])
def test_documents_parse_the_same_on_both_paths(doc, monkeypatch):
    data = json.dumps(doc).encode()
    assert _same(data, monkeypatch)[0] == "ok"
    assert _same(json.dumps(doc, indent=2).encode(), monkeypatch)[0] == "ok"
    assert M._split(data) is not None   # the shapes Java and this engine write take the one-pass decode


def test_common_documents_take_the_msgspec_path():
    doc = _many_snapshots(30)
    data = json.dumps(doc).encode()
    split = M._split(data)
    assert split is not None and type(split["snapshots"][0]) is M._SnapshotJSON
    md = parse_metadata(data, PATH)
    snaps = md.snapshots
    assert type(snaps) is SnapshotList and snaps._missing == 29   # only the current snapshot made
    cur = md.current_snapshot()
    assert cur.summary == doc["snapshots"][-1]["summary"]
    assert cur.operation == doc["snapshots"][-1]["summary"]["operation"]
    assert type(md._snapshot_log) is M._PendingLog
    assert [(e.timestamp_ms, e.snapshot_id) for e in md.snapshot_log] == \
        [(e["timestamp-ms"], e["snapshot-id"]) for e in doc["snapshot-log"]]
    s = md.snapshots[3]
    s2 = copy.deepcopy(s)
    assert s2.summary == s.summary == doc["snapshots"][3]["summary"]
    s.summary = {"operation": "overwrite"}
    assert s.operation == "overwrite" and s2.operation == doc["snapshots"][3]["summary"]["operation"]


@pytest.mark.parametrize("change", [
    lambda d: d.update({"x-unknown": 1}),                                   # an unknown top-level field
    lambda d: d["snapshots"][2].update({"x-foreign": [1]}),                  # an unknown snapshot field
    lambda d: d["snapshots"][2].update({"sequence-number": "3"}),            # a field of another type
    lambda d: d["snapshots"][2].update({"summary": {"x": "y"}}),             # no operation
    lambda d: d["snapshots"][2].update({"summary": "append"}),               # not an object
    lambda d: d["snapshots"][2].pop("summary"),
    lambda d: d["snapshots"][2].update({"summary": None}),
    lambda d: d["snapshots"][2].update({"manifest-list": None, "manifests": ["m.avro"]}),
    lambda d: d["snapshots"][2].update({"parent-snapshot-id": None, "schema-id": None}),
    lambda d: d["snapshots"][2].update({"snapshot-id": True}),
    lambda d: d["snapshots"][2].update({"snapshot-id": 2**70}),
    lambda d: d["snapshots"][2].update({"timestamp-ms": 1.0}),
    lambda d: d["snapshots"][2]["summary"].update({"operation": None, "n": 1.5}),
    lambda d: d["snapshot-log"][1].update({"timestamp-ms": False}),
    lambda d: d["snapshot-log"][1].update({"extra": "kept nowhere"}),
    lambda d: d["snapshot-log"].append("x"),
    lambda d: d.update({"snapshots": None, "snapshot-log": None, "current-snapshot-id": -1, "refs": {}}),
    lambda d: d.update({"snapshots": {}}),
    lambda d: d.update({"statistics": [{"snapshot-id": 2**80, "x": 1e300}]}),
    lambda d: d["snapshots"][2]["summary"].update({"s": "\ud800"}),
    lambda d: d["snapshots"][2]["summary"].update({"n": 10 ** 300}),        # summary values of other types
    lambda d: d["snapshots"][2]["summary"].update({"x": {"y": [1, None, 2.5]}, "b": True}),
    lambda d: d["snapshots"][2]["summary"].update({"long": "z" * 5000}),     # a summary longer than kept as text
    lambda d: d["snapshots"][2]["summary"].update({"e": "caf\u00e9 \u2028"}),
])
@pytest.mark.parametrize("fv", [1, 2, 3])
def test_uncommon_documents_give_the_same_result_or_error(change, fv, monkeypatch):
    doc = _v3_many(8) if fv == 3 else _many_snapshots(8)
    doc["format-version"] = fv
    change(doc)
    _same(json.dumps(doc).encode(), monkeypatch)


@pytest.mark.parametrize("text", [
    # JSON that one library or another refuses or reads its own way: each goes where the general path goes
    b'{"format-version": 2, "x": NaN}',
    b'{"format-version": 2, "x": 1e999}',
    b'{"format-version": 2, "x": "\xff"}',
    b'{"format-version": 2, "x": 01}',
    b'{"format-version": 2, "x": "a\x01"}',
    b'{"format-version": 2, ',
    b'[1, 2]',
    b'',
    # nesting deeper than either library goes, at the top and inside a summary msgspec would skip
    b'{"format-version": 2, "properties": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'{"format-version": 2, "snapshots": [{"summary": ' + b"[" * 100_000 + b"]" * 100_000 + b"}]}",
    # an integer longer than Python converts (4300 digits), at the top and inside a summary
    b'{"format-version": 2, "x": ' + b"9" * 5000 + b"}",
    b'{"format-version": 2, "snapshots": [{"summary": {"operation": "append", "n": ' + b"9" * 5000 + b"}}]}",
])
def test_malformed_text_gives_the_same_error(text, monkeypatch):
    assert _same(text, monkeypatch)[0] == "load error"


def test_malformed_text_inside_a_summary_is_refused_on_load(monkeypatch):
    # bytes that are not UTF-8 inside a summary are refused when the file is loaded, on both paths
    doc = _many_snapshots(5)
    doc["snapshots"][1]["summary"]["k"] = "SENTINEL"
    data = json.dumps(doc).encode().replace(b"SENTINEL", b"\xff\xfe")
    out = _same(data, monkeypatch)
    assert out[0] == "load error"
    data = json.dumps(doc).encode().replace(b'"SENTINEL"', b"NaN")
    assert _same(data, monkeypatch)[0] == "ok"
    # an integer longer than Python converts inside a summary: refused on load on both paths (the fast path keeps
    # summaries as text until first use, so it must not take this one)
    data = json.dumps(doc).encode().replace(b'"SENTINEL"', b"9" * 5000)
    assert _same(data, monkeypatch)[0] == "load error"
    # a number msgspec refuses (beyond a double) in a summary kept as text: read as the standard library reads it
    data = json.dumps(doc).encode().replace(b'"SENTINEL"', b"1e999")
    assert _same(data, monkeypatch)[0] == "ok" and M._split(data) is not None
    data = json.dumps(doc).encode().replace(b'"SENTINEL"', b'"caf\xc3\xa9"')   # UTF-8 that is right
    assert _same(data, monkeypatch)[0] == "ok" and M._split(data) is not None


def test_summaries_stay_text_until_their_snapshot_is_read():
    doc = _many_snapshots(6)
    doc["snapshots"][4]["summary"]["note"] = "caf\u00e9"
    data = json.dumps(doc, ensure_ascii=False).encode()
    split = M._split(bytearray(data))          # a mutable buffer: the kept text must not point into it
    assert all(type(j.summary) is msgspec.Raw for j in split["snapshots"])
    md = parse_metadata(data, PATH)
    assert type(md.snapshots._raw[2].summary) is msgspec.Raw
    assert md.snapshots[4].summary == doc["snapshots"][4]["summary"]
    assert type(md.snapshots[4].summary) is dict
    buf = bytearray(data)
    md = parse_metadata(buf, PATH)
    buf[:] = b" " * len(buf)
    assert [s.summary for s in md.snapshots] == [s["summary"] for s in doc["snapshots"]]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(base=st.sampled_from([V1_VALID, V2_VALID, _many_snapshots(4), _v3_many(4)]), data=st.data())
def test_mutated_documents_give_the_same_outcome(base, data, monkeypatch):
    _same(json.dumps(mutated(base, data)).encode(), monkeypatch)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(base=st.sampled_from([V2_VALID, _many_snapshots(3), _v3_many(3)]), data=st.data())
def test_damaged_bytes_give_the_same_outcome(base, data, monkeypatch):
    raw = bytearray(json.dumps(base).encode())
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        raw = raw[:data.draw(st.integers(0, len(raw)))]
    _same(bytes(raw), monkeypatch)


# -- writing: with msgspec the long lists are encoded by it, byte for byte what the standard library writes

_TEXT = st.text(st.sampled_from(["a", "Z", "0", " ", '"', "\\", "/", "\n", "\x00", "\x1f", "\x7f", "\x80", "é",
                                 "\u2028", "\ud800", "\U0001f600"]), max_size=5)
_VALUE = st.one_of(_TEXT, st.integers(-2**70, 2**70), st.floats(), st.booleans(), st.none())
_KEY = st.text("ab-_", min_size=1, max_size=3)


class _CountingEncoder:
    def __init__(self, encoder):
        self.encoder, self.calls = encoder, 0

    def encode(self, value):
        self.calls += 1
        return self.encoder.encode(value)


def _written_both_ways(md, monkeypatch):
    want = json.dumps(md.to_dict(), separators=(",", ":")).encode()
    counting = _CountingEncoder(M._ENCODER)
    with monkeypatch.context() as m:
        m.setattr(M, "_ENCODER", counting)
        assert M.serialize_metadata(md) == want
    with monkeypatch.context() as m:
        m.setattr(M, "_msgspec", None)
        assert M.serialize_metadata(md) == want
    return want, counting.calls


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(base=st.sampled_from([V1_VALID, V2_VALID, _many_snapshots(4), _v3_many(4)]), data=st.data())
def test_written_metadata_is_what_the_standard_library_writes(base, data, monkeypatch):
    md = parse_metadata(json.dumps(base).encode(), PATH)
    for s in md.snapshots:
        if data.draw(st.booleans()):    # text of every kind in a summary; values of other types, as another
            s.summary = dict(s.summary, **{data.draw(_KEY): data.draw(_VALUE)})   # writer may have put there
        if data.draw(st.booleans()):
            s.extra = dict(s.extra, **{"x" + data.draw(_KEY): data.draw(_VALUE)})
    md.metadata_log = [M.MetadataLogEntry(i, data.draw(_TEXT)) for i in range(data.draw(st.integers(0, 3)))]
    _written_both_ways(md, monkeypatch)


def test_the_long_lists_are_encoded_by_msgspec_unless_a_snapshot_holds_other_types(monkeypatch):
    md = parse_metadata(json.dumps(_v3_many(30)).encode(), PATH)
    md.metadata_log = [M.MetadataLogEntry(1, "/t/metadata/v1.metadata.json")]
    assert _written_both_ways(md, monkeypatch)[1] == 3        # snapshots, snapshot log, metadata log
    md.snapshots[7].extra = dict(md.snapshots[7].extra, **{"x-float": 1e16})
    text, calls = _written_both_ways(md, monkeypatch)
    assert calls == 2 and b'"x-float":1e+16' in text          # the snapshots went to the standard library
    md.snapshots[7].extra = {}
    md.snapshots[3].summary = dict(md.snapshots[3].summary, note="caf\u00e9")
    text, calls = _written_both_ways(md, monkeypatch)
    assert calls == 3 and b'"note":"caf\\u00e9"' in text      # msgspec's text had a non-ASCII byte: redone



@pytest.mark.parametrize("odd", [None, {"n": 7}, {"operation": None}], ids=["common", "int-value", "null-op"])
def test_making_every_snapshot_at_once_gives_what_one_by_one_gives(odd, monkeypatch):
    doc = _many_snapshots(20)
    for i, s in enumerate(doc["snapshots"]):
        s["summary"] = dict(s["summary"], **{"x-n": str(i)}, **(odd if odd and i == 11 else {}))
    data = json.dumps(doc).encode()

    def every(at_once):
        md = parse_metadata(data, PATH)
        try:
            snaps = list(md.snapshots) if at_once else [md.snapshots[i] for i in range(len(md.snapshots))]
            return [json.dumps(s.to_dict(2), sort_keys=True) for s in snaps]
        except CorruptFileError as exc:
            return ("error", str(exc), exc.field)

    fast = every(True)
    assert fast == every(False)
    with monkeypatch.context() as m:
        m.setattr(M, "_msgspec", None)
        assert fast == every(True) == every(False)
