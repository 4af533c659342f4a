"""Each refusal of the server, over raw HTTP: the protocol's error model with a message naming the problem, and
the catalog unchanged."""
import json
import threading

import pyarrow as pa
import pytest
import requests

from paimon_engine.rest.server import MAX_BODY_BYTES

from .conftest import TOKEN


def _error(resp, status, kind, words):
    assert resp.status_code == status, resp.text
    err = resp.json()["error"]
    assert err["code"] == status and err["type"] == kind, err
    assert words.lower() in err["message"].lower(), err["message"]
    return err


@pytest.fixture
def table(backing):
    backing.create_namespace("db")
    t = backing.create_table("db.t", pa.schema([("id", pa.int64()), ("cat", pa.string())]))
    t.append(pa.table({"id": pa.array([1, 2], pa.int64()), "cat": ["a", "b"]}))
    return backing.load_table("db.t")


def _commit(server, body, ns="db", name="t", **kw):
    data = json.dumps(body) if isinstance(body, dict) else body
    return requests.post(f"{server.uri}/v1/namespaces/{ns}/tables/{name}", data=data, timeout=30, **kw)


def test_401_without_the_token_and_nothing_else(token_server, backing, table):
    for method, path, body in (("GET", "/v1/config", None), ("GET", "/v1/namespaces", None),
                               ("POST", "/v1/namespaces", {"namespace": ["x"]}),
                               ("DELETE", "/v1/namespaces/db/tables/t", None),
                               ("GET", "/v1/namespaces/nope/tables/none", None)):
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            resp = requests.request(method, token_server.uri + path, json=body, headers=headers, timeout=30)
            err = _error(resp, 401, "NotAuthorizedException", "bearer token")
            assert set(resp.json()) == {"error"} and "db" not in err["message"]
    assert backing.list_namespaces() == [("db",)] and backing.table_exists("db.t")
    ok = requests.get(token_server.uri + "/v1/namespaces", headers={"Authorization": f"Bearer {TOKEN}"},
                      timeout=30)
    assert ok.status_code == 200 and ok.json()["namespaces"] == [["db"]]


@pytest.mark.parametrize("raw", ["%2E%2E", "a%2Fb", "a%5Cb", "a%00b", "x%01", "a.b", "%E2%80%A8"])
def test_400_for_a_bad_name_in_the_path(server, backing, table, raw):
    resp = requests.get(f"{server.uri}/v1/namespaces/{raw}", timeout=30)
    _error(resp, 400, "BadRequestException", "invalid namespace part")
    resp = requests.get(f"{server.uri}/v1/namespaces/db/tables/{raw}", timeout=30)
    _error(resp, 400, "BadRequestException", "invalid table name")
    resp = requests.delete(f"{server.uri}/v1/namespaces/db/tables/{raw}", timeout=30)
    _error(resp, 400, "BadRequestException", "invalid table name")


@pytest.mark.parametrize("bad", ["..", "a/b", "a\\b", "a\nb", ""])
def test_400_for_a_bad_name_in_the_body(server, backing, table, bad):
    resp = requests.post(f"{server.uri}/v1/namespaces", json={"namespace": [bad]}, timeout=30)
    _error(resp, 400, "BadRequestException", "invalid namespace part")
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "x", "type": "long", "required": False}]}
    resp = requests.post(f"{server.uri}/v1/namespaces/db/tables", json={"name": bad, "schema": schema}, timeout=30)
    _error(resp, 400, "BadRequestException", "invalid table name")
    resp = requests.post(f"{server.uri}/v1/tables/rename", timeout=30, json={
        "source": {"namespace": ["db"], "name": "t"}, "destination": {"namespace": ["db"], "name": bad}})
    _error(resp, 400, "BadRequestException", "invalid table name")
    assert backing.list_namespaces() == [("db",)] and backing.list_tables("db") == [("db", "t")]


def test_409_when_a_requirement_does_not_hold(server, backing, table):
    md = table.metadata
    before = md.metadata_location
    cases = [
        ({"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}, "table uuid"),
        ({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 12345}, "points at snapshot"),
        ({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None}, "created concurrently"),
        ({"type": "assert-ref-snapshot-id", "ref": "dev", "snapshot-id": 1}, "does not exist"),
        ({"type": "assert-last-assigned-field-id", "last-assigned-field-id": 99}, "last assigned field id"),
        ({"type": "assert-current-schema-id", "current-schema-id": 7}, "current schema id"),
        ({"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 1}, "partition field id"),
        ({"type": "assert-default-spec-id", "default-spec-id": 3}, "default partition spec id"),
        ({"type": "assert-default-sort-order-id", "default-sort-order-id": 4}, "default sort order id"),
        ({"type": "assert-create"}, "exists already"),
    ]
    for req, words in cases:
        good = {"type": "assert-table-uuid", "uuid": md.table_uuid}
        resp = _commit(server, {"requirements": [good, req],
                                "updates": [{"action": "set-properties", "updates": {"x": "1"}}]})
        err = _error(resp, 409, "CommitFailedException", words)
        assert req["type"] in err["message"]
    after = backing.load_table("db.t").metadata
    assert after.metadata_location == before and "x" not in after.properties
    # the same requirements, true ones, let the commit through
    resp = _commit(server, {"requirements": [
        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": md.current_snapshot_id},
        {"type": "assert-current-schema-id", "current-schema-id": md.current_schema_id},
        {"type": "assert-last-assigned-field-id", "last-assigned-field-id": md.last_column_id},
        {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": md.last_partition_id},
        {"type": "assert-default-spec-id", "default-spec-id": md.default_spec_id},
        {"type": "assert-default-sort-order-id", "default-sort-order-id": md.default_sort_order_id}],
        "updates": [{"action": "set-properties", "updates": {"x": "1"}}]})
    assert resp.status_code == 200, resp.text
    assert backing.load_table("db.t").metadata.properties["x"] == "1"
    assert resp.json()["metadata-location"] == backing.load_table("db.t").metadata.metadata_location


@pytest.mark.parametrize("body,words", [
    (b"{not json", "malformed JSON"),
    (b"\xff\xfe", "malformed JSON"),
    (b"[1, 2]", "must be a JSON object"),
    (b"", "no JSON body"),
    (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
    (json.dumps({"updates": [{"action": "set-snapshot-fairy", "x": 1}]}), "unknown update type 'set-snapshot-fairy'"),
    (json.dumps({"updates": [{"no-action": 1}]}), "missing required field 'action'"),
    (json.dumps({"requirements": [{"type": "assert-weather"}]}), "unknown requirement type 'assert-weather'"),
    (json.dumps({"updates": {"action": "set-properties"}}), "'updates' must be a JSON list"),
    (json.dumps({"updates": [{"action": "set-properties", "updates": {"a": 1}}]}), "map strings to strings"),
    (json.dumps({"updates": [{"action": "set-current-schema", "schema-id": 42}]}), "no schema with id 42"),
    (json.dumps({"updates": [{"action": "add-schema", "schema": {"type": "struct", "fields": [{"id": 1}]}}]}),
     "bad schema"),
    (json.dumps({"updates": [{"action": "set-snapshot-ref", "ref-name": "main", "snapshot-id": 5,
                              "type": "branch"}]}), "no snapshot 5"),
    (json.dumps({"updates": [{"action": "upgrade-format-version", "format-version": 9}]}), "format version 9"),
])
def test_400_for_a_malformed_commit_and_state_unchanged(server, backing, table, body, words):
    before = backing.load_table("db.t").metadata.metadata_location
    _error(_commit(server, body), 400, "BadRequestException", words)
    assert backing.load_table("db.t").metadata.metadata_location == before


def test_413_for_an_oversized_body(server, backing, table):
    before = table.metadata.metadata_location
    big = json.dumps({"updates": [{"action": "set-properties", "updates": {"k": "v" * (MAX_BODY_BYTES + 10)}}]})
    _error(_commit(server, big), 413, "BadRequestException", "larger than the limit")

    def chunks():       # no Content-Length: the limit is enforced while reading
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b" " * 65536
    _error(_commit(server, chunks()), 413, "BadRequestException", "larger than the limit")
    assert backing.load_table("db.t").metadata.metadata_location == before


def test_404_for_unknown_namespaces_tables_and_endpoints(server, backing, table):
    _error(requests.get(f"{server.uri}/v1/namespaces/nope", timeout=30), 404, "NoSuchNamespaceException", "nope")
    _error(requests.get(f"{server.uri}/v1/namespaces/nope/tables", timeout=30), 404,
           "NoSuchNamespaceException", "nope")
    _error(requests.get(f"{server.uri}/v1/namespaces/nope/tables/t", timeout=30), 404,
           "NoSuchNamespaceException", "nope")
    _error(_commit(server, {"updates": []}, ns="nope"), 404, "NoSuchNamespaceException", "nope")
    _error(requests.get(f"{server.uri}/v1/namespaces/db/tables/none", timeout=30), 404,
           "NoSuchTableException", "db.none")
    _error(_commit(server, {"updates": []}, name="none"), 404, "NoSuchTableException", "db.none")
    assert requests.head(f"{server.uri}/v1/namespaces/db/tables/none", timeout=30).status_code == 404
    assert requests.head(f"{server.uri}/v1/namespaces/db/tables/t", timeout=30).status_code == 204
    _error(requests.get(f"{server.uri}/v1/weather", timeout=30), 404, "NoSuchEndpointException", "weather")
    _error(requests.delete(f"{server.uri}/v1/namespaces/db", timeout=30), 409, "NamespaceNotEmptyException",
           "not empty")
    _error(requests.post(f"{server.uri}/v1/namespaces", json={"namespace": ["db"]}, timeout=30), 409,
           "AlreadyExistsException", "exists already")
    assert backing.list_namespaces() == [("db",)]


def test_no_metadata_or_manifest_list_paths_outside_the_warehouse(server, backing, table, tmp_path):
    md = table.metadata
    before = md.metadata_location
    _error(_commit(server, {"updates": [{"action": "set-location", "location": str(tmp_path / "elsewhere")}]}),
           403, "ForbiddenException", "outside the warehouse")
    _error(_commit(server, {"updates": [{"action": "set-location", "location": str(tmp_path / "warehouse")}]}),
           400, "BadRequestException", "cannot be owned by one table")
    snap = {"snapshot-id": 777, "parent-snapshot-id": md.current_snapshot_id,
            "sequence-number": md.last_sequence_number + 1, "timestamp-ms": 1, "summary": {"operation": "append"},
            "manifest-list": str(tmp_path / "evil.avro")}
    _error(_commit(server, {"updates": [{"action": "add-snapshot", "snapshot": snap}]}), 403,
           "ForbiddenException", "outside the table location")
    assert backing.load_table("db.t").metadata.metadata_location == before
    resp = requests.post(f"{server.uri}/v1/namespaces/db/register", timeout=30,
                         json={"name": "copy", "metadata-location": str(tmp_path / "x.metadata.json")})
    _error(resp, 403, "ForbiddenException", "outside the warehouse")
    resp = requests.post(f"{server.uri}/v1/namespaces/db/tables", timeout=30, json={
        "name": "far", "location": str(tmp_path / "far"),
        "schema": {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "x", "type": "long",
                                                                  "required": False}]}})
    _error(resp, 403, "ForbiddenException", "outside the warehouse")
    assert backing.list_tables("db") == [("db", "t")]


def test_register_a_metadata_file_inside_the_warehouse(server, backing, table):
    resp = requests.post(f"{server.uri}/v1/namespaces/db/register", timeout=30,
                         json={"name": "copy", "metadata-location": table.metadata.metadata_location})
    assert resp.status_code == 200, resp.text
    assert resp.json()["metadata"]["table-uuid"] == table.metadata.table_uuid
    assert backing.load_table("db.copy").scan().to_arrow().num_rows == 2


def test_concurrent_commits_through_the_server_lose_nothing(server, backing, table):
    uuid = table.metadata.table_uuid
    errors = []

    def writer(i):
        try:
            for j in range(5):
                resp = _commit(server, {"requirements": [{"type": "assert-table-uuid", "uuid": uuid}],
                                        "updates": [{"action": "set-properties", "updates": {f"w{i}-{j}": "1"}}]})
                assert resp.status_code == 200, resp.text
        except BaseException as exc:     # reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]
    props = backing.load_table("db.t").metadata.properties
    assert {f"w{i}-{j}" for i in range(8) for j in range(5)} <= set(props)


def test_406_for_a_rename_the_file_system_catalog_cannot_do(tmp_path):
    from paimon_engine.rest.server import RestServer
    from paimon_engine.catalog import FileSystemCatalog
    backing = FileSystemCatalog(str(tmp_path / "wh"))
    backing.create_namespace("db")
    backing.create_table("db.t", pa.schema([("id", pa.int64())]))
    with RestServer(backing) as srv:
        resp = requests.post(f"{srv.uri}/v1/tables/rename", timeout=30, json={
            "source": {"namespace": ["db"], "name": "t"}, "destination": {"namespace": ["db"], "name": "u"}})
        _error(resp, 406, "UnsupportedOperationException", "cannot rename")
    assert backing.list_tables("db") == [("db", "t")]
