"""An Iceberg REST catalog server in front of any of our catalogs (SQLite or file system).

:func:`create_app` builds the ASGI application (Starlette), :func:`serve` runs it with uvicorn,
:class:`RestServer` runs it in a background thread on a loopback port (tests, notebooks).

* Every name in a path is checked by :mod:`paimon_engine.catalog.identifiers` before the catalog sees it; the path
  is split on its raw bytes, so an encoded ``/`` inside a name is refused (400), never routed.
* A commit (``POST .../tables/{table}``) checks every requirement against the table's current metadata, applies
  the updates to a copy and swaps it in through the catalog's atomic commit; when another commit won the race it
  starts again from the new metadata, so concurrent commits lose nothing, and a requirement that no longer holds
  answers 409 ``CommitFailedException``.
* The server writes every metadata file itself. Clients never name a metadata file, except to register a table,
  and that file must lie inside the warehouse.
* With a token, every request without ``Authorization: Bearer <token>`` gets 401 and nothing else.
* Errors are the protocol's error model: ``{"error": {"message", "type", "code"}}``.
"""

from __future__ import annotations

import hmac
import json
import threading
from urllib.parse import parse_qs, unquote

from ..errors import (AlreadyExistsError, CommitConflictError, CommitFailedError, CorruptFileError,
                      InvalidArgumentError, NamespaceNotEmptyError, NotFoundError, PaimonEngineError,
                      UnsafeLocationError)
from ..catalog.identifiers import check_namespace, check_part
from .updates import apply_updates, check_requirements, empty_metadata

__all__ = ["create_app", "serve", "RestServer", "MAX_BODY_BYTES", "NAMESPACE_SEPARATOR"]

MAX_BODY_BYTES = 8 * 1024 * 1024
NAMESPACE_SEPARATOR = "\x1f"
COMMIT_ATTEMPTS = 50

ENDPOINTS = [
    "GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces", "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}", "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties", "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables", "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register", "POST /v1/{prefix}/tables/rename",
]


class RestError(Exception):
    """An error response: HTTP status, the protocol's exception type name, a message."""

    def __init__(self, status: int, kind: str, message: str):
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message


def _bad(message):
    return RestError(400, "BadRequestException", message)


def _error_body(status, kind, message):
    return {"error": {"message": message, "type": kind, "code": status}}


def _as_rest_error(exc, not_found="NoSuchTableException") -> RestError:
    if isinstance(exc, RestError):
        return exc
    msg = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, CommitFailedError):
        return RestError(409, "CommitFailedException", msg)
    if isinstance(exc, CommitConflictError):
        return RestError(409, "CommitFailedException", msg)
    if isinstance(exc, NamespaceNotEmptyError):
        return RestError(409, "NamespaceNotEmptyException", msg)
    if isinstance(exc, AlreadyExistsError):
        return RestError(409, "AlreadyExistsException", msg)
    if isinstance(exc, NotFoundError):
        return RestError(404, not_found, msg)
    if isinstance(exc, UnsafeLocationError):
        return RestError(403, "ForbiddenException", msg)
    if isinstance(exc, CorruptFileError):
        return RestError(500, "ServiceFailureException", f"table metadata is unreadable: {msg}")
    if isinstance(exc, (InvalidArgumentError, ValueError)):
        return _bad(msg)
    if isinstance(exc, PaimonEngineError):
        return RestError(500, "ServiceFailureException", msg)
    return RestError(500, "ServiceFailureException", f"internal error: {type(exc).__name__}")


def _field(body, key, kind, optional=False, default=None):
    if key not in body or body[key] is None:
        if optional:
            return default
        raise _bad(f"request is missing required field {key!r}")
    v = body[key]
    ok = (isinstance(v, int) and not isinstance(v, bool)) if kind is int else isinstance(v, kind)
    if not ok:
        raise _bad(f"field {key!r} must be a {_KIND_NAMES.get(kind, kind.__name__)}, got {v!r:.80}")
    return v


_KIND_NAMES = {dict: "JSON object", list: "JSON list", str: "string", int: "integer", bool: "boolean"}


def _namespace_levels(value, what="namespace"):
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise _bad(f"{what} must be a list of strings, got {value!r:.80}")
    return check_namespace(tuple(value))


class CatalogService:
    """The protocol's operations on one catalog; every method takes and returns JSON-shaped values."""

    def __init__(self, catalog, *, prefix: str | None = None):
        self.catalog = catalog
        self.prefix = prefix

    # -- helpers -------------------------------------------------------------------------
    def _require_namespace(self, ns):
        if not self.catalog.namespace_exists(ns):
            raise RestError(404, "NoSuchNamespaceException", f"namespace {'.'.join(ns)} does not exist")

    def _load_result(self, md):
        return {"metadata-location": md.metadata_location, "metadata": md.to_dict(), "config": {}}

    def _check_table_location(self, ident, md, base=None):
        """A table's location must be one a table may own (inside the warehouse, not the warehouse itself)."""
        from ..table.locations import check_deletable_root, is_within
        warehouse = getattr(self.catalog, "warehouse", None)
        if base is not None and md.location == base.location:
            return
        try:
            check_deletable_root(self.catalog.io, md.location, warehouse, f"use {md.location!r} for table "
                                                                          f"{'.'.join(ident)}")
        except UnsafeLocationError as exc:
            raise _bad(f"table location {md.location!r} cannot be owned by one table: {exc}") from None
        if warehouse and not is_within(self.catalog.io, md.location, warehouse):
            raise RestError(403, "ForbiddenException",
                            f"table location {md.location!r} lies outside the warehouse {warehouse}")

    def _check_snapshot_files(self, base, md):
        """Manifest lists of added snapshots lie inside the table location."""
        from ..table.locations import is_within
        old = set() if base is None else {s.snapshot_id for s in base.snapshots}
        for s in md.snapshots:
            if s.snapshot_id in old:
                continue
            for path in ([s.manifest_list] if s.manifest_list else []) + list(s.manifests or []):
                if not isinstance(path, str) or not is_within(self.catalog.io, path, md.location):
                    raise RestError(403, "ForbiddenException",
                                    f"snapshot {s.snapshot_id} names {path!r}, outside the table location "
                                    f"{md.location}")

    # -- config ------------------------------------------------------------------------------
    def config(self, query):
        overrides = {}
        if self.prefix:
            overrides["prefix"] = self.prefix
        defaults = {}
        if getattr(self.catalog, "warehouse", None):
            defaults["warehouse"] = self.catalog.warehouse
        return 200, {"defaults": defaults, "overrides": overrides, "endpoints": ENDPOINTS}

    # -- namespaces ----------------------------------------------------------------------------
    def list_namespaces(self, query):
        parent = query.get("parent")
        levels = check_namespace(tuple(parent.split(NAMESPACE_SEPARATOR))) if parent else ()
        if levels:
            self._require_namespace(levels)
        found = set()
        for ns in self.catalog.list_namespaces():
            ns = tuple(ns)
            if len(ns) > len(levels) and ns[:len(levels)] == levels:
                found.add(ns[:len(levels) + 1])
        return 200, {"namespaces": [list(ns) for ns in sorted(found)]}

    def create_namespace(self, body):
        ns = _namespace_levels(_field(body, "namespace", list))
        props = _field(body, "properties", dict, optional=True, default={})
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in props.items()):
            raise _bad("namespace properties must map strings to strings")
        if props and not hasattr(self.catalog, "load_namespace_properties"):
            raise RestError(406, "UnsupportedOperationException",
                            "this catalog keeps no namespace properties")
        self.catalog.create_namespace(ns, props or None)
        return 200, {"namespace": list(ns), "properties": self._namespace_properties(ns)}

    def _namespace_properties(self, ns):
        if hasattr(self.catalog, "load_namespace_properties"):
            return self.catalog.load_namespace_properties(ns)
        self._require_namespace(ns)
        return {}

    def load_namespace(self, ns):
        self._require_namespace(ns)
        return 200, {"namespace": list(ns), "properties": self._namespace_properties(ns)}

    def namespace_exists(self, ns):
        self._require_namespace(ns)
        return 204, None

    def drop_namespace(self, ns):
        self._require_namespace(ns)
        self.catalog.drop_namespace(ns)
        return 204, None

    def update_namespace_properties(self, ns, body):
        removals = _field(body, "removals", list, optional=True, default=[])
        updates = _field(body, "updates", dict, optional=True, default={})
        if not all(isinstance(k, str) for k in removals) or \
                not all(isinstance(k, str) and isinstance(v, str) for k, v in updates.items()):
            raise _bad("'removals' must be a list of strings and 'updates' map strings to strings")
        both = sorted(set(removals) & set(updates))
        if both:
            raise RestError(422, "UnprocessableEntityException",
                            f"properties both removed and updated: {', '.join(both)}")
        self._require_namespace(ns)
        if not hasattr(self.catalog, "update_namespace_properties"):
            raise RestError(406, "UnsupportedOperationException", "this catalog keeps no namespace properties")
        result = self.catalog.update_namespace_properties(ns, removals, updates)
        return 200, result

    # -- tables ------------------------------------------------------------------------------------
    def list_tables(self, ns):
        self._require_namespace(ns)
        return 200, {"identifiers": [{"namespace": list(i[:-1]), "name": i[-1]}
                                     for i in self.catalog.list_tables(ns)]}

    def create_table(self, ns, body):
        from ..catalog.base import _new_metadata
        from ..spec.partitioning import PartitionSpec
        from ..spec.schema import Schema
        from ..spec.sorting import SortOrder
        name = check_part(_field(body, "name", str), "table name")
        self._require_namespace(ns)
        location = _field(body, "location", str, optional=True)
        try:
            schema = Schema.from_dict(_field(body, "schema", dict), 0)
            spec_d = _field(body, "partition-spec", dict, optional=True)
            spec = PartitionSpec.from_dict(spec_d) if spec_d is not None else None
            order_d = _field(body, "write-order", dict, optional=True)
            order = SortOrder.from_dict(order_d) if order_d is not None else None
        except RestError:
            raise
        except (PaimonEngineError, TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
            raise _bad(f"bad table definition: {' '.join(str(exc).split())}") from None
        props = _field(body, "properties", dict, optional=True, default={})
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in props.items()):
            raise _bad("table properties must map strings to strings")
        stage = _field(body, "stage-create", bool, optional=True, default=False)
        ident = ns + (name,)
        if stage:
            if self.catalog.table_exists(ident):
                raise RestError(409, "AlreadyExistsException", f"table {'.'.join(ident)} exists already")
            loc = location.rstrip("/") if location else self.catalog.default_location(ns, name)
            md = _new_metadata(schema, spec, loc, props, order, 2)
            self._check_table_location(ident, md)
            md.metadata_location = None
            return 200, self._load_result(md)
        if location:
            md = _new_metadata(schema, spec, location.rstrip("/"), props, order, 2)
            self._check_table_location(ident, md)
        table = self.catalog.create_table(ident, schema, spec, location=location, properties=props,
                                          sort_order=order)
        return 200, self._load_result(table.metadata)

    def load_table(self, ns, name):
        self._require_namespace(ns)
        return 200, self._load_result(self.catalog.refresh(ns + (name,)))

    def table_exists(self, ns, name):
        self._require_namespace(ns)
        self.catalog.refresh(ns + (name,))
        return 204, None

    def drop_table(self, ns, name, query):
        self._require_namespace(ns)
        purge = query.get("purgeRequested", "false").lower() == "true"
        self.catalog.drop_table(ns + (name,), purge=purge)
        return 204, None

    def register_table(self, ns, body):
        from ..table.locations import is_within
        name = check_part(_field(body, "name", str), "table name")
        path = _field(body, "metadata-location", str)
        self._require_namespace(ns)
        warehouse = getattr(self.catalog, "warehouse", None)
        if not warehouse or not is_within(self.catalog.io, path, warehouse):
            raise RestError(403, "ForbiddenException",
                            f"metadata file {path!r} lies outside the warehouse {warehouse}; only files inside "
                            f"it can be registered")
        if not hasattr(self.catalog, "register_table"):
            raise RestError(406, "UnsupportedOperationException", "this catalog cannot register tables")
        table = self.catalog.register_table(ns + (name,), path)
        return 200, self._load_result(table.metadata)

    def rename_table(self, body):
        src = _field(body, "source", dict)
        dst = _field(body, "destination", dict)
        s_ns = _namespace_levels(_field(src, "namespace", list), "source namespace")
        d_ns = _namespace_levels(_field(dst, "namespace", list), "destination namespace")
        s_name = check_part(_field(src, "name", str), "table name")
        d_name = check_part(_field(dst, "name", str), "table name")
        self._require_namespace(s_ns)
        self._require_namespace(d_ns)
        from ..catalog.filesystem import FileSystemCatalog
        if isinstance(self.catalog, FileSystemCatalog):
            raise RestError(406, "UnsupportedOperationException", "a file-system catalog cannot rename tables "
                                                                  "(the location is the table's identity)")
        self.catalog.rename_table(s_ns + (s_name,), d_ns + (d_name,))
        return 204, None

    def commit_table(self, ns, name, body):
        requirements = _field(body, "requirements", list, optional=True, default=[])
        updates = _field(body, "updates", list, optional=True, default=[])
        ident_d = body.get("identifier")
        if ident_d is not None:
            if not isinstance(ident_d, dict):
                raise _bad("field 'identifier' must be a JSON object")
            if (_namespace_levels(_field(ident_d, "namespace", list)), check_part(_field(ident_d, "name", str))) \
                    != (ns, name):
                raise _bad("the identifier in the body does not name the table in the path")
        self._require_namespace(ns)
        ident = ns + (name,)
        creates = any(isinstance(r, dict) and r.get("type") == "assert-create" for r in requirements)
        last = None
        for _ in range(COMMIT_ATTEMPTS):
            try:
                base = self.catalog.refresh(ident)
            except NotFoundError:
                if not creates:
                    raise
                base = None
            check_requirements(base, requirements)
            if base is None:
                new = apply_updates(empty_metadata(self.catalog.default_location(ns, name)), updates)
                self._check_table_location(ident, new)
                self._check_snapshot_files(None, new)
                try:
                    md = self.catalog._create(ns, name, new)
                except AlreadyExistsError as exc:
                    last = exc
                    continue            # created concurrently: assert-create now fails with a clear message
                return 200, {"metadata-location": md.metadata_location, "metadata": md.to_dict()}
            new = apply_updates(base, updates)
            self._check_table_location(ident, new, base)
            self._check_snapshot_files(base, new)
            try:
                md = self._commit(ident, base, new)
            except CommitConflictError as exc:
                last = exc
                continue
            return 200, {"metadata-location": md.metadata_location, "metadata": md.to_dict()}
        raise RestError(409, "CommitFailedException", f"commit to {'.'.join(ident)} lost the race "
                                                      f"{COMMIT_ATTEMPTS} times: {last}")

    def _commit(self, ident, base, new):
        from ..catalog.filesystem import FileSystemCatalog
        if isinstance(self.catalog, FileSystemCatalog):
            return self.catalog.commit_at(base.location, base, new)
        return self.catalog.commit(ident, base, new)


# -- HTTP ---------------------------------------------------------------------------------------
def _route(service, method, parts, query, body):
    """Dispatch on the decoded path segments after ``/v1`` (and the prefix)."""
    n = len(parts)
    if n >= 1 and parts[0] == "namespaces":
        if n == 1:
            if method == "GET":
                return service.list_namespaces(query)
            if method == "POST":
                return service.create_namespace(body())
        else:
            ns = check_namespace(tuple(parts[1].split(NAMESPACE_SEPARATOR)))
            if n == 2:
                if method == "GET":
                    return service.load_namespace(ns)
                if method == "HEAD":
                    return service.namespace_exists(ns)
                if method == "DELETE":
                    return service.drop_namespace(ns)
            elif n == 3 and parts[2] == "properties" and method == "POST":
                return service.update_namespace_properties(ns, body())
            elif n == 3 and parts[2] == "register" and method == "POST":
                return service.register_table(ns, body())
            elif n == 3 and parts[2] == "tables":
                if method == "GET":
                    return service.list_tables(ns)
                if method == "POST":
                    return service.create_table(ns, body())
            elif n == 4 and parts[2] == "tables":
                name = check_part(parts[3], "table name")
                if method == "GET":
                    return service.load_table(ns, name)
                if method == "HEAD":
                    return service.table_exists(ns, name)
                if method == "POST":
                    return service.commit_table(ns, name, body())
                if method == "DELETE":
                    return service.drop_table(ns, name, query)
    elif parts == ["tables", "rename"] and method == "POST":
        return service.rename_table(body())
    raise RestError(404 if method in ("GET", "HEAD", "POST", "DELETE") else 405, "NoSuchEndpointException",
                    f"no endpoint {method} /v1/{'/'.join(parts)}")


def _not_found_kind(parts):
    return "NoSuchTableException" if len(parts) >= 4 or parts[:2] == ["tables", "rename"] \
        else "NoSuchNamespaceException"


def handle(service, method, raw_path: bytes, raw_query: bytes, headers: dict, body: bytes | None):
    """One request -> (status, JSON value or None). Never raises."""
    parts = []
    try:
        segments = raw_path.decode("latin-1").split("/")
        if segments[:1] == [""]:
            segments = segments[1:]
        if segments and segments[-1] == "":
            segments = segments[:-1]
        try:
            decoded = [unquote(s, errors="strict") for s in segments]
        except UnicodeDecodeError:
            raise _bad("the request path is not valid UTF-8") from None
        query = {k: v[-1] for k, v in parse_qs(raw_query.decode("latin-1"), keep_blank_values=True).items()}
        if decoded[:1] != ["v1"]:
            raise RestError(404, "NoSuchEndpointException", f"no endpoint {method} /{'/'.join(decoded)}")
        parts = decoded[1:]
        if parts == ["config"] and method == "GET":
            return service.config(query)
        if service.prefix:
            if not parts or parts[0] != service.prefix:
                raise RestError(404, "NoSuchEndpointException",
                                f"no endpoint {method} /v1/{'/'.join(parts)} (the prefix is {service.prefix!r})")
            parts = parts[1:]

        def parsed_body():
            if not body:
                raise _bad("the request has no JSON body")
            try:
                value = json.loads(body)
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise _bad(f"malformed JSON in the request body: {exc}") from None
            except RecursionError:
                raise _bad("the JSON request body is nested too deeply") from None
            if not isinstance(value, dict):
                raise _bad(f"the request body must be a JSON object, not {type(value).__name__}")
            return value

        return _route(service, method, parts, query, parsed_body)
    except Exception as exc:       # every failure becomes an error response, never a dropped connection
        err = _as_rest_error(exc, _not_found_kind(parts))
        return err.status, _error_body(err.status, err.kind, err.message)


def create_app(catalog, *, token: str | None = None, prefix: str | None = None,
               max_body_bytes: int = MAX_BODY_BYTES, credential: str | None = None):
    """The ASGI application serving ``catalog`` over the Iceberg REST catalog protocol. With ``credential``
    (``"id:secret"``, needs ``token``) ``POST /v1/oauth/tokens`` hands out ``token`` to that client (OAuth2
    client credentials)."""
    if credential and not token:
        raise InvalidArgumentError("a credential needs a token to hand out")
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    service = CatalogService(catalog, prefix=prefix)
    expected = f"Bearer {token}".encode() if token else None

    def reply(status, value):
        if value is None:
            return Response(status_code=status)
        return JSONResponse(value, status_code=status)

    def refuse(status, kind, message):
        return reply(status, _error_body(status, kind, message))

    async def endpoint(request):
        if credential and request.method == "POST" and \
                request.url.path.rstrip("/") == "/v1/oauth/tokens":
            return await token_endpoint(request)
        if expected is not None:
            given = request.headers.get("authorization", "").encode("latin-1", "replace")
            if not hmac.compare_digest(given, expected):
                return refuse(401, "NotAuthorizedException", "a valid bearer token is required")
        body = None
        if request.method in ("POST", "PUT"):
            declared = request.headers.get("content-length")
            if declared is not None and (not declared.isdigit() or int(declared) > max_body_bytes):
                return refuse(413, "BadRequestException",
                              f"the request body is larger than the limit of {max_body_bytes} bytes")
            chunks, size = [], 0
            async for chunk in request.stream():
                size += len(chunk)
                if size > max_body_bytes:
                    return refuse(413, "BadRequestException",
                                  f"the request body is larger than the limit of {max_body_bytes} bytes")
                chunks.append(chunk)
            body = b"".join(chunks)
        status, value = await run_in_threadpool(handle, service, request.method, request.scope.get(
            "raw_path") or request.scope["path"].encode(), request.scope.get("query_string", b""),
            request.headers, body)
        return reply(status, value)

    async def token_endpoint(request):
        """OAuth2 client credentials: the configured ``id:secret`` gets the server's token."""
        from urllib.parse import parse_qs as _qs
        raw = await request.body()
        if len(raw) > 65536:
            return reply(400, {"error": "invalid_request", "error_description": "request too large"})
        form = {k: v[-1] for k, v in _qs(raw.decode("latin-1")).items()}
        want_id, _, want_secret = credential.partition(":")
        if form.get("grant_type") != "client_credentials":
            return reply(400, {"error": "unsupported_grant_type",
                               "error_description": "only client_credentials is supported"})
        if not (hmac.compare_digest(form.get("client_id", "").encode(), want_id.encode())
                and hmac.compare_digest(form.get("client_secret", "").encode(), want_secret.encode())):
            return reply(401, {"error": "invalid_client", "error_description": "unknown client or wrong secret"})
        return reply(200, {"access_token": token, "token_type": "bearer", "expires_in": 3600,
                           "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})

    methods = ["GET", "HEAD", "POST", "DELETE", "PUT"]
    return Starlette(routes=[Route("/{path:path}", endpoint, methods=methods)])


def serve(catalog, host: str = "127.0.0.1", port: int = 8181, *, token: str | None = None,
          prefix: str | None = None, credential: str | None = None, log_level: str = "warning"):
    """Serve ``catalog`` until interrupted."""
    import uvicorn
    uvicorn.run(create_app(catalog, token=token, prefix=prefix, credential=credential), host=host, port=port,
                log_level=log_level)


class RestServer:
    """The server in a background thread on ``host`` and a free port (or ``port``): ``start()``, ``uri``,
    ``stop()``; also a context manager."""

    def __init__(self, catalog, host: str = "127.0.0.1", port: int = 0, *, token: str | None = None,
                 prefix: str | None = None, credential: str | None = None):
        self.credential = credential
        self.catalog = catalog
        self.host = host
        self.port = port
        self.token = token
        self.prefix = prefix
        self._server = None
        self._thread = None

    @property
    def uri(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> "RestServer":
        import socket
        import time

        import uvicorn
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(create_app(self.catalog, token=self.token, prefix=self.prefix,
                                           credential=self.credential),
                                log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name="paimon-engine-rest", daemon=True)
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise PaimonEngineError("the REST catalog server failed to start")
            time.sleep(0.01)
        self._socket = sock
        return self

    def stop(self):
        if self._server is not None:
            self._server.should_exit = True
            self._thread.join()
            self._socket.close()
            self._server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
