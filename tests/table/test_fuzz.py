"""Random damage to metadata JSON and manifests raises CorruptFileError (or parses), never anything else."""
import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_engine.errors import CorruptFileError
from paimon_engine.io import FileIO
from paimon_engine.spec.metadata import parse_metadata

from .java_docs import V1_VALID, V2_VALID

json_values = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
                           | st.text(max_size=8),
                           lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                           max_leaves=6)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


def mutated(base, data):
    """A copy of the JSON document ``base`` with one to three values replaced by random JSON or removed."""
    doc = copy.deepcopy(base)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        path = data.draw(st.sampled_from(paths))
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(json_values)
    return doc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from([V1_VALID, V2_VALID]), data=st.data())
def test_mutated_metadata(base, data):
    doc = mutated(base, data)
    try:
        md = parse_metadata(json.dumps(doc).encode(), "m.json")
    except CorruptFileError:
        return
    # whatever parsed must serialize and parse again; a malformed snapshot that is not the current one is found
    # when it is first used (here: by to_dict), with the same error
    try:
        out = md.to_dict()
    except CorruptFileError as exc:
        assert exc.path == "m.json"
        return
    parse_metadata(json.dumps(out).encode(), "m2.json")


@pytest.fixture(scope="module")
def manifest_bytes(tmp_path_factory):
    from paimon_engine.spec.manifest import DataFile, ManifestWriter
    from .test_manifest import SCHEMA, SPEC
    d = tmp_path_factory.mktemp("m")
    w = ManifestWriter(SPEC, SCHEMA, 2, snapshot_id=5)
    for i in range(3):
        w.add(DataFile(f"/d/{i}.parquet", "PARQUET", (i, i, None, i, "ab"), 10, 100, value_counts={1: 10}))
    mf = w.write(FileIO(), str(d / "m.avro"))
    return (d / "m.avro").read_bytes(), mf, d


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_damaged_manifest(manifest_bytes, data):
    from paimon_engine.spec.manifest import read_manifest
    raw, mf, d = manifest_bytes
    b = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(b) - 1))
        b[i] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        b = b[: data.draw(st.integers(0, len(b)))]
    path = d / "bad.avro"
    path.write_bytes(bytes(b))
    mf.manifest_path = str(path)
    try:
        read_manifest(FileIO(), mf)
    except CorruptFileError as exc:
        assert "bad.avro" in str(exc)
