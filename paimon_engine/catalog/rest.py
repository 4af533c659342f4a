"""A catalog behind an Iceberg REST catalog server (ours, ``paimon-engine serve``, or any other).

``RestCatalog(uri=..., warehouse=..., token=... | credential="id:secret", headers={...})``. On creation it asks
``/v1/config`` (with ``?warehouse=``) and merges the server's defaults, our properties and the server's
overrides, in that order; the ``prefix`` override goes into every path. With ``credential`` the client exchanges
it for a token (OAuth2 client credentials) at ``oauth2-server-uri`` (default ``<uri>/v1/oauth/tokens``) and
exchanges it again before the token expires or when the server answers 401.

Tables are our :class:`~paimon_engine.table.table.Table`: data and manifests are written by this process through
its FileIO, and every table operation commits through :meth:`RestCatalog.commit`, which sends the change as the
protocol's requirements and updates (:func:`~paimon_engine.rest.updates.commit_changes`). A 409 becomes a
:class:`~paimon_engine.errors.CommitConflictError`, so the operation refreshes and tries again as it does with
the local catalogs.
"""

from __future__ import annotations

import threading
import time
from urllib.parse import quote

from ..errors import (AlreadyExistsError, CommitConflictError, CommitFailedError, InvalidArgumentError,
                      NamespaceNotEmptyError, NotFoundError, PaimonEngineError)
from ..rest.updates import commit_changes
from ..spec.metadata import TableMetadata
from .base import Catalog, _new_metadata
from .identifiers import check_namespace, parse_identifier

__all__ = ["RestCatalog"]

NAMESPACE_SEPARATOR = "\x1f"


def _metadata(result) -> TableMetadata:
    if not isinstance(result, dict) or not isinstance(result.get("metadata"), dict):
        raise PaimonEngineError("the REST catalog answered without table metadata")
    md = TableMetadata.from_dict(result["metadata"])
    md.metadata_location = result.get("metadata-location")
    return md


class RestCatalog(Catalog):
    """Namespaces and tables of an Iceberg REST catalog."""

    def __init__(self, name: str = "rest", uri: str | None = None, warehouse: str | None = None,
                 token: str | None = None, credential: str | None = None, headers: dict | None = None,
                 io=None, properties: dict | None = None, timeout: float = 60.0):
        props = dict(properties or {})
        uri = uri or props.get("uri")
        if not uri:
            raise InvalidArgumentError("RestCatalog needs a uri (http://host:port)")
        try:
            import requests
        except ImportError:
            raise PaimonEngineError("the REST catalog client needs requests: pip install "
                                    "'paimon_engine[rest]'") from None
        self.name = name
        self.uri = uri.rstrip("/")
        self.timeout = timeout
        self._session = requests.Session()
        self._session.headers.update({"Content-Type": "application/json", **dict(headers or {})})
        self._lock = threading.Lock()
        self._token = token or props.get("token")
        self._token_expires = None
        self._credential = credential or props.get("credential")
        self._oauth_uri = props.get("oauth2-server-uri") or f"{self.uri}/v1/oauth/tokens"
        self._scope = props.get("scope", "catalog")
        if self._credential:
            self._exchange_credential()
        warehouse = warehouse or props.get("warehouse")
        config = self._request("GET", "v1/config", params={"warehouse": warehouse} if warehouse else None)
        if not isinstance(config, dict):
            raise PaimonEngineError("the REST catalog's /v1/config answer is not a JSON object")
        merged = {**dict(config.get("defaults") or {}), **props,
                  **({"warehouse": warehouse} if warehouse else {}), **dict(config.get("overrides") or {})}
        merged["uri"] = uri
        super().__init__(io, {str(k): str(v) for k, v in merged.items()})
        self.prefix = merged.get("prefix") or None
        self.warehouse = None       # the server owns table locations; it checks them itself

    # -- HTTP ------------------------------------------------------------------------------------
    def _exchange_credential(self):
        import requests
        client_id, sep, secret = str(self._credential).partition(":")
        if not sep:
            client_id, secret = None, client_id
        data = {"grant_type": "client_credentials", "client_secret": secret, "scope": self._scope}
        if client_id:
            data["client_id"] = client_id
        try:
            resp = requests.post(self._oauth_uri, data=data, timeout=self.timeout)
        except requests.RequestException as exc:
            raise PaimonEngineError(f"cannot reach the token endpoint {self._oauth_uri}: {exc}") from None
        try:
            body = resp.json()
        except ValueError:
            body = {}
        if resp.status_code != 200 or not isinstance(body, dict) or not body.get("access_token"):
            detail = body.get("error_description") or body.get("error") if isinstance(body, dict) else None
            raise PaimonEngineError(f"the token endpoint {self._oauth_uri} refused the credential "
                                    f"({resp.status_code}{': ' + str(detail) if detail else ''})")
        self._token = str(body["access_token"])
        expires = body.get("expires_in")
        self._token_expires = time.monotonic() + float(expires) if isinstance(expires, (int, float)) else None

    def _headers(self):
        with self._lock:
            if self._credential and self._token_expires is not None and \
                    time.monotonic() > self._token_expires - 30:
                self._exchange_credential()
            return {"Authorization": f"Bearer {self._token}"} if self._token else {}

    def _path(self, *parts):
        base = ["v1"] + ([quote(self.prefix, safe="")] if self.prefix else [])
        return "/".join(base + [quote(p, safe="") for p in parts])

    def _request(self, method, path, *, json=None, params=None, not_found=NotFoundError, ok_missing=False):
        import requests
        for attempt in (0, 1):
            try:
                resp = self._session.request(method, f"{self.uri}/{path}", json=json, params=params,
                                             headers=self._headers(), timeout=self.timeout)
            except requests.RequestException as exc:
                raise PaimonEngineError(f"REST catalog {self.uri} unreachable: {exc}") from None
            if resp.status_code == 401 and self._credential and attempt == 0:
                with self._lock:
                    self._exchange_credential()      # the token may have been revoked or expired early
                continue
            break
        if resp.status_code in (200, 204) or (ok_missing and resp.status_code == 404):
            if resp.status_code != 200 or not resp.content:
                return resp.status_code
            try:
                return resp.json()
            except ValueError:
                raise PaimonEngineError(f"REST catalog {self.uri} answered {method} {path} with invalid "
                                        f"JSON") from None
        raise self._error(resp, method, path, not_found)

    @staticmethod
    def _error(resp, method, path, not_found):
        kind, message = "", resp.reason or ""
        try:
            err = resp.json().get("error", {})
            kind, message = str(err.get("type", "")), str(err.get("message", message))
        except (ValueError, AttributeError):
            pass
        text = f"{message} (HTTP {resp.status_code}{', ' + kind if kind else ''}; {method} /{path})"
        status = resp.status_code
        if status == 404:
            return not_found(text)
        if status == 409:
            if "NamespaceNotEmpty" in kind:
                return NamespaceNotEmptyError(text)
            if "CommitFailed" in kind:
                return CommitConflictError(text)
            return AlreadyExistsError(text)
        if status in (400, 406, 413, 422):
            return InvalidArgumentError(text)
        return PaimonEngineError(text)

    # -- namespaces ------------------------------------------------------------------------------------
    @staticmethod
    def _ns(namespace):
        return NAMESPACE_SEPARATOR.join(check_namespace(namespace))

    def create_namespace(self, namespace, properties=None):
        ns = check_namespace(namespace)
        self._request("POST", self._path("namespaces"),
                      json={"namespace": list(ns), "properties": dict(properties or {})})

    def list_namespaces(self, namespace=None):
        """The namespaces directly below ``namespace`` (the top level without it)."""
        params = {"parent": self._ns(namespace)} if namespace else None
        out = self._request("GET", self._path("namespaces"), params=params)
        return [tuple(ns) for ns in out.get("namespaces", [])]

    def namespace_exists(self, namespace) -> bool:
        return self._request("HEAD", self._path("namespaces", self._ns(namespace)), ok_missing=True) == 204

    def load_namespace_properties(self, namespace) -> dict:
        return dict(self._request("GET", self._path("namespaces", self._ns(namespace))).get("properties") or {})

    def update_namespace_properties(self, namespace, removals=(), updates=None) -> dict:
        return self._request("POST", self._path("namespaces", self._ns(namespace), "properties"),
                             json={"removals": sorted(set(removals)), "updates": dict(updates or {})})

    def drop_namespace(self, namespace):
        self._request("DELETE", self._path("namespaces", self._ns(namespace)))

    # -- tables ----------------------------------------------------------------------------------------
    def _table_path(self, identifier):
        ns, name = parse_identifier(identifier)
        return ns, name, self._path("namespaces", NAMESPACE_SEPARATOR.join(ns), "tables", name)

    def list_tables(self, namespace):
        out = self._request("GET", self._path("namespaces", self._ns(namespace), "tables"))
        return sorted(tuple(i["namespace"]) + (i["name"],) for i in out.get("identifiers", []))

    def _load_metadata(self, namespace, name):
        return _metadata(self._request("GET", self._path("namespaces", NAMESPACE_SEPARATOR.join(namespace),
                                                         "tables", name)))

    def table_exists(self, identifier) -> bool:
        return self._request("HEAD", self._table_path(identifier)[2], ok_missing=True) == 204

    def default_location(self, namespace, name):
        raise PaimonEngineError("a REST catalog's server chooses table locations")

    def create_table(self, identifier, schema, partition_spec=None, *, location=None, properties=None,
                     sort_order=None, format_version: int = 2, stage: bool = False):
        """Create a table on the server. With ``stage=True`` nothing is created yet: the returned table's first
        commit (an append, say) creates it with its data (create-table-as-select)."""
        from ..table.table import Table
        ns, name = parse_identifier(identifier)
        md = _new_metadata(schema, partition_spec, location or "/unused", properties, sort_order, format_version)
        body = {"name": name, "schema": md.schema().to_dict(), "partition-spec": md.spec().to_dict(),
                "write-order": md.sort_order().to_dict(), "stage-create": bool(stage),
                "properties": {**md.properties, "format-version": str(md.format_version)}}
        if location:
            body["location"] = location
        result = self._request("POST", self._path("namespaces", NAMESPACE_SEPARATOR.join(ns), "tables"),
                               json=body)
        md = _metadata(result)
        if stage:
            md.metadata_location = None
        return Table(ns + (name,), md, self.io, self)

    def commit(self, identifier, base, new):
        """Send ``base -> new`` as requirements and updates; 409 -> CommitConflictError (refresh and retry)."""
        ns, name, path = self._table_path(identifier)
        requirements, updates = commit_changes(base if base.metadata_location else None, new)
        body = {"identifier": {"namespace": list(ns), "name": name}, "requirements": requirements,
                "updates": updates}
        try:
            result = self._request("POST", path, json=body)
        except CommitConflictError as exc:
            if base.metadata_location is None:      # a staged create lost to another create: not retryable
                raise CommitFailedError(f"cannot create {'.'.join(ns + (name,))}: {exc}") from None
            raise
        except (InvalidArgumentError, NotFoundError):
            raise
        except PaimonEngineError as exc:
            raise CommitFailedError(f"commit to {'.'.join(ns + (name,))}: the outcome is unknown: {exc}") from None
        return _metadata(result)

    def drop_table(self, identifier, purge: bool = False):
        self._request("DELETE", self._table_path(identifier)[2],
                      params={"purgeRequested": "true" if purge else "false"})

    def rename_table(self, from_identifier, to_identifier):
        fns, fname = parse_identifier(from_identifier)
        tns, tname = parse_identifier(to_identifier)
        self._request("POST", self._path("tables", "rename"),
                      json={"source": {"namespace": list(fns), "name": fname},
                            "destination": {"namespace": list(tns), "name": tname}})
        return self.load_table(tns + (tname,))

    def register_table(self, identifier, metadata_location: str):
        from ..table.table import Table
        ns, name = parse_identifier(identifier)
        md = _metadata(self._request("POST", self._path("namespaces", NAMESPACE_SEPARATOR.join(ns), "register"),
                                     json={"name": name, "metadata-location": metadata_location}))
        return Table(ns + (name,), md, self.io, self)
