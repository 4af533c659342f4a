import io

import fastavro
import pytest
from hypothesis import given, settings, strategies as st

from paimon_engine.errors import CorruptFileError
from paimon_engine.formats.avro import compile_program, decode_blocks, read_container

from .impls import implementations

IMPLS = [p.values[0] for p in implementations("avro")]

SCHEMA = {
    "type": "record", "name": "e", "fields": [
        {"name": "a", "type": "int"},
        {"name": "b", "type": ["null", "long"]},
        {"name": "s", "type": "string"},
        {"name": "raw", "type": "bytes"},
        {"name": "f", "type": "float"}, {"name": "d", "type": "double"}, {"name": "t", "type": "boolean"},
        {"name": "fx", "type": {"type": "fixed", "name": "f4", "size": 4}},
        {"name": "en", "type": {"type": "enum", "name": "en", "symbols": ["X", "Y"]}},
        {"name": "arr", "type": {"type": "array", "items": "long"}},
        {"name": "m", "type": {"type": "map", "values": "string"}},
        {"name": "im", "type": ["null", {"type": "array", "logicalType": "map", "items": {
            "type": "record", "name": "k1_v2", "fields": [{"name": "key", "type": "int"},
                                                          {"name": "value", "type": "bytes"}]}}]},
        {"name": "sub", "type": ["null", {"type": "record", "name": "r", "fields": [{"name": "x", "type": "int"}]}]},
    ]}

REC = st.fixed_dictionaries({
    "a": st.integers(-2**31, 2**31 - 1), "b": st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)),
    "s": st.text(max_size=5), "raw": st.binary(max_size=5),
    "f": st.just(1.5), "d": st.floats(allow_nan=False), "t": st.booleans(), "fx": st.binary(min_size=4, max_size=4),
    "en": st.sampled_from(["X", "Y"]), "arr": st.lists(st.integers(-5, 5), max_size=3),
    "m": st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
    "im": st.one_of(st.none(), st.lists(st.tuples(st.integers(0, 9), st.binary(max_size=3)), max_size=3)),
    "sub": st.one_of(st.none(), st.fixed_dictionaries({"x": st.integers(0, 9)})),
})


def container(records, codec="deflate"):
    buf = io.BytesIO()
    recs = [dict(r, im=None if r["im"] is None else [{"key": k, "value": v} for k, v in r["im"]]) for r in records]
    fastavro.writer(buf, fastavro.parse_schema(SCHEMA), recs, codec=codec, sync_interval=200)
    return buf.getvalue()


def expected(r):
    r = dict(r)
    if r["im"] is not None:
        r["im"] = dict(r["im"])
    return r


@settings(max_examples=60, deadline=None)
@given(st.lists(REC, max_size=12), st.sampled_from(["null", "deflate"]))
def test_decode_matches_fastavro_input(records, codec):
    data = container(records, codec)
    meta, blocks = read_container(data)
    prog = compile_program(SCHEMA)
    for k in IMPLS:
        out = []
        for count, body, _ in blocks:
            assert k.decode_records(body, count, prog, out) == len(body)
        assert out == [expected(r) for r in records]


def test_projection_skips_fields():
    recs = [{"a": 1, "b": 2, "s": "x", "raw": b"r", "f": 1.5, "d": 2.0, "t": True, "fx": b"abcd", "en": "Y",
             "arr": [1], "m": {"k": "v"}, "im": [(3, b"z")], "sub": {"x": 4}}]
    meta, blocks = read_container(container(recs))
    prog = compile_program(SCHEMA, {"a": True, "im": True, "sub": {"x": True}})
    for k in IMPLS:
        out = []
        count, body, _ = blocks[0]
        assert k.decode_records(body, count, prog, out) == len(body)
        assert out == [{"a": 1, "im": {3: b"z"}, "sub": {"x": 4}}]


def test_malformed_blocks_return_status_not_crash():
    recs = [{"a": 1, "b": None, "s": "hello", "raw": b"r" * 10, "f": 1.5, "d": 2.0, "t": True, "fx": b"abcd",
             "en": "X", "arr": [1, 2, 3], "m": {}, "im": [(1, b"a")], "sub": None}] * 3
    meta, blocks = read_container(container(recs, "null"))
    count, body, _ = blocks[0]
    prog = compile_program(SCHEMA)
    for k in IMPLS:
        for cut in range(0, len(body) - 1, 3):
            rc = k.decode_records(body[:cut], count, prog, [])
            assert rc < 0 or rc <= cut
        for i in range(len(body)):
            mutated = bytearray(body)
            mutated[i] ^= 0xFF
            rc = k.decode_records(bytes(mutated), count, prog, [])
            assert rc < 0 or rc <= len(body)
        assert k.decode_records(b"\xff" * 11, 1, prog, []) == -2 or k.decode_records(b"\xff" * 11, 1, prog, []) < 0
        assert k.decode_records(body, -1, prog, []) == -4
        # an absurd array block count
        arr_prog = compile_program({"type": "array", "items": "null"})
        assert k.decode_records(b"\xfe\xff\xff\xff\x0f", 1, arr_prog, []) == -4


def test_container_errors():
    data = container([])
    with pytest.raises(CorruptFileError):
        read_container(b"Obj\x02" + data[4:])
    with pytest.raises(CorruptFileError):
        read_container(data[:10])
    full = container([{"a": 1, "b": None, "s": "", "raw": b"", "f": 1.5, "d": 2.0, "t": True, "fx": b"abcd",
                       "en": "X", "arr": [], "m": {}, "im": None, "sub": None}])
    with pytest.raises(CorruptFileError):
        read_container(full[:-3])                 # sync marker cut
    bad = bytearray(full)
    bad[-20] ^= 0xFF                              # inside the compressed block
    with pytest.raises(CorruptFileError):
        meta, blocks = read_container(bytes(bad))
        decode_blocks(blocks, compile_program(SCHEMA), "x")


@pytest.mark.parametrize("codec", ["snappy", "zstandard", "deflate", "null"])
def test_container_codecs(codec):
    recs = [{"a": i, "b": None, "s": "x" * i, "raw": b"", "f": 1.5, "d": 2.0, "t": True, "fx": b"abcd",
             "en": "X", "arr": [i], "m": {}, "im": None, "sub": None} for i in range(50)]
    try:
        data = container(recs, codec)
    except (ValueError, ImportError) as exc:
        pytest.skip(f"fastavro cannot write {codec}: {exc}")
    meta, blocks = read_container(data)
    out = decode_blocks(blocks, compile_program(SCHEMA, {"a": True, "s": True}), "x")
    assert out == [{"a": i, "s": "x" * i} for i in range(50)]


def test_map_key_with_invalid_utf8_is_corrupt():
    # a map key is an Avro string: bytes that are not UTF-8 are a bad value (status -5), like a string value,
    # in the compiled kernel and its twin alike; decode_blocks turns it into a CorruptFileError
    prog = compile_program({"type": "map", "values": "int"})
    good = b"\x02" + b"\x02" + b"k" + b"\x02" + b"\x00"     # one block of 1 entry: "k" -> 1, then the end
    bad = b"\x02" + b"\x02" + b"\xff" + b"\x02" + b"\x00"
    for k in IMPLS:
        out = []
        assert k.decode_records(good, 1, prog, out) == len(good)
        assert out == [{"k": 1}]
        assert k.decode_records(bad, 1, prog, []) == -5
    with pytest.raises(CorruptFileError):
        decode_blocks([(1, bad, 0)], prog, "x.avro")
    # a projection that skips the map never decodes its keys
    rec = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"},
                                                     {"name": "m", "type": {"type": "map", "values": "int"}}]}
    skip = compile_program(rec, {"a": True})
    for k in IMPLS:
        out = []
        assert k.decode_records(b"\x04" + bad, 1, skip, out) == len(bad) + 1
        assert out == [{"a": 2}]
