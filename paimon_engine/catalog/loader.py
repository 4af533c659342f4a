"""``load_catalog``: a catalog by name and properties, as pyiceberg's, with properties also from a YAML config
file and environment variables, and the registry of catalog types.
"""

from __future__ import annotations

import os

from ..errors import InvalidArgumentError
from .base import Catalog

__all__ = ["load_catalog", "catalog_properties", "CATALOG_TYPES", "CONFIG_FILES", "ENV_PREFIXES"]


def _sql_catalog(name, props):
    from .sql import SqlCatalog
    props = dict(props)
    extra = props.pop("properties", None) or {}
    return SqlCatalog(name, uri=props.pop("uri", None), warehouse=props.pop("warehouse", None),
                      io=props.pop("io", None), properties={**props, **extra})


def _fs_catalog(name, props):
    from .filesystem import FileSystemCatalog
    props = dict(props)
    warehouse = props.pop("warehouse", None)
    if not warehouse:
        raise InvalidArgumentError(f"catalog {name!r} of type filesystem needs a warehouse")
    extra = props.pop("properties", None) or {}
    return FileSystemCatalog(warehouse, io=props.pop("io", None), properties={**props, **extra}, name=name)


def _rest_catalog(name, props):
    from .rest import RestCatalog
    props = dict(props)
    known = {k: props.pop(k) for k in ("uri", "warehouse", "token", "credential", "headers", "io", "timeout")
             if k in props}
    extra = props.pop("properties", None) or {}
    return RestCatalog(name, properties={**props, **extra}, **known)


#: catalog ``type`` -> factory(name, properties); other catalog types register here
CATALOG_TYPES = {"sql": _sql_catalog, "sqlite": _sql_catalog, "postgresql": _sql_catalog,
                 "filesystem": _fs_catalog, "fs": _fs_catalog, "hadoop": _fs_catalog, "rest": _rest_catalog}

CONFIG_FILES = (".paimon-engine.yaml", ".pyiceberg.yaml")
ENV_PREFIXES = ("PAIMON_ENGINE_", "PYICEBERG_")


def _config_file_catalogs() -> dict:
    """``catalog:`` sections of the first config file found: in ``$PAIMON_ENGINE_HOME`` / ``$PYICEBERG_HOME``,
    the home directory, then the working directory; our file name before pyiceberg's."""
    dirs = [os.environ.get("PAIMON_ENGINE_HOME"), os.environ.get("PYICEBERG_HOME"), os.path.expanduser("~"),
            os.getcwd()]
    for d in dirs:
        if not d:
            continue
        for fname in CONFIG_FILES:
            path = os.path.join(d, fname)
            if os.path.isfile(path):
                import yaml
                try:
                    with open(path, encoding="utf-8") as f:
                        conf = yaml.safe_load(f) or {}
                except yaml.YAMLError as exc:
                    raise InvalidArgumentError(f"cannot parse catalog configuration {path}: {exc}") from None
                if not isinstance(conf, dict):
                    raise InvalidArgumentError(f"catalog configuration {path} is not a mapping")
                return {str(k).lower(): v for k, v in (conf.get("catalog") or {}).items()}, conf
    return {}, {}


def _env_catalogs() -> dict:
    """``<PREFIX>CATALOG__<NAME>__<PROP>`` variables: ``__`` in a property becomes ``.`` and ``_`` ``-``, as
    pyiceberg reads them (pyiceberg's prefix first, ours wins)."""
    out = {}
    for prefix in reversed(ENV_PREFIXES):
        head = (prefix + "CATALOG__").lower()
        for key, value in os.environ.items():
            low = key.lower()
            if not low.startswith(head):
                continue
            parts = low[len(head):].split("__", 1)
            if len(parts) != 2 or not parts[0] or not parts[1]:
                continue
            prop = parts[1].replace("__", ".").replace("_", "-")
            out.setdefault(parts[0], {})[prop] = value
    return out


def catalog_properties(name: str) -> dict:
    """The configured properties of catalog ``name`` (config file, overridden by environment variables)."""
    files, _ = _config_file_catalogs()
    props = dict(files.get(name.lower()) or {})
    props.update(_env_catalogs().get(name.lower(), {}))
    return {str(k): v for k, v in props.items()}


def _infer_type(name, props):
    uri = str(props.get("uri") or "")
    if uri.startswith(("sqlite", "postgresql")) or uri.endswith(".db"):
        return "sql"
    if uri.startswith(("http://", "https://")):
        return "rest"
    if props.get("warehouse") and not uri:
        return "filesystem"
    raise InvalidArgumentError(f"catalog {name!r}: give a type ({', '.join(sorted(CATALOG_TYPES))}) or a uri")


def load_catalog(name: str | None = None, /, **properties) -> Catalog:
    """A catalog by name, as pyiceberg's ``load_catalog``: ``properties`` (``type``, ``uri``, ``warehouse``, ...)
    merged over the ``catalog.<name>`` section of ``.paimon-engine.yaml`` / ``.pyiceberg.yaml`` and the
    ``PAIMON_ENGINE_CATALOG__<NAME>__<PROP>`` / ``PYICEBERG_CATALOG__<NAME>__<PROP>`` environment variables.
    ``type`` is ``sql`` (SQLite or PostgreSQL, by the ``uri``), ``filesystem`` or ``rest``; without one it is
    inferred from ``uri``.

    The older form ``load_catalog("sql", uri=...)`` / ``load_catalog("fs", warehouse=...)`` (a type as the
    name, no ``type`` property, no configured catalog of that name) still works."""
    files, whole = _config_file_catalogs()
    if name is None:
        name = str(whole.get("default-catalog") or "default")
    props = catalog_properties(name)
    props.update({k: v for k, v in properties.items()})
    kind = props.pop("type", None)
    if kind is None and name.lower() in CATALOG_TYPES and not catalog_properties(name):
        kind, name = name.lower(), ("fs" if name.lower() in ("fs", "filesystem", "hadoop") else "default")
        if "name" in props:
            name = props.pop("name")
    if kind is None:
        kind = _infer_type(name, props)
    factory = CATALOG_TYPES.get(str(kind).lower())
    if factory is None:
        raise InvalidArgumentError(f"unknown catalog type {kind!r}; known: {', '.join(sorted(CATALOG_TYPES))}")
    return factory(name, props)
