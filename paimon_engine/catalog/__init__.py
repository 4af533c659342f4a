"""Catalogs, under pyiceberg's import path: ``from paimon_engine.catalog import load_catalog``.

* :mod:`.filesystem` — :class:`FileSystemCatalog`, tables in a warehouse directory;
* :mod:`.sql` — :class:`SqlCatalog`, SQLite or PostgreSQL with the tables of Iceberg's JDBC catalog and
  pyiceberg's ``SqlCatalog``;
* :mod:`.rest` — ``RestCatalog``, an Iceberg REST catalog client (the server is :mod:`paimon_engine.rest.server`);
* :mod:`.base` — what they share; :mod:`.identifiers` — the one check of names; :mod:`.loader` —
  ``load_catalog`` with config files and environment variables.
"""

from .base import Catalog
from .filesystem import FileSystemCatalog
from .identifiers import parse_identifier
from .loader import CATALOG_TYPES, catalog_properties, load_catalog
from .sql import SqlCatalog

__all__ = ["load_catalog", "Catalog", "SqlCatalog", "FileSystemCatalog", "CATALOG_TYPES", "catalog_properties",
           "parse_identifier"]
