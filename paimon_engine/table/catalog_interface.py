"""What a :class:`~paimon_engine.table.table.Table` needs from the catalog that stores it.

The catalogs (:mod:`paimon_engine.catalog`: file system, SQL, REST) implement this interface; the table layer
only calls it, so ``table/`` never imports ``catalog/``.
"""

from __future__ import annotations

__all__ = ["TableCatalog"]


class TableCatalog:
    """The commit interface of a catalog, as seen from one of its tables."""

    #: the warehouse root no single table may own (None when the catalog has none)
    warehouse = None

    def refresh_table(self, table):
        """The table's current metadata, loaded again from the catalog."""
        raise NotImplementedError

    def commit_table(self, table, base, new):
        """Atomically replace ``base`` by ``new`` as the table's current metadata -> the committed metadata (with
        its ``metadata_location``). CommitConflictError when ``base`` is no longer current."""
        raise NotImplementedError

    def table_directory(self, table):
        """The directory this catalog keeps the table in when the catalog decides it (a file-system catalog);
        None when the metadata's location is the table's. Maintenance refuses to delete anything when the
        metadata names another location."""
        return None
