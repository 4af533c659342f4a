"""The table API: :class:`Table` (reads through ``scan``, writes: append, overwrite, delete, upsert, row deltas,
compaction, maintenance), :class:`Transaction`, schema and spec updates, ``inspect`` tables, data and delete file
writing, and the optimistic commit. The Iceberg spec objects it works on live in :mod:`paimon_engine.spec`; the
catalogs that store tables live in :mod:`paimon_engine.catalog` and are reached only through the small
:class:`~paimon_engine.table.catalog_interface.TableCatalog` interface.

Submodules are imported lazily so ``import paimon_engine.table`` stays fast.
"""

from __future__ import annotations

import importlib

__all__ = ["Table", "TableSnapshot", "Transaction", "TableCatalog"]

_WHERE = {"Table": "table", "TableSnapshot": "table", "Transaction": "transaction",
          "TableCatalog": "catalog_interface"}


def __getattr__(name):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module 'paimon_engine.table' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{mod}", __name__), name)
