"""Catalogs under pyiceberg's import path: ``from paimon_engine.catalog import load_catalog``."""

from ..table.catalog import (CATALOG_TYPES, Catalog, FileSystemCatalog, SqlCatalog, catalog_properties,
                             load_catalog)

__all__ = ["load_catalog", "Catalog", "SqlCatalog", "FileSystemCatalog", "CATALOG_TYPES", "catalog_properties"]
