"""paimon_engine: Paimon row files, Paimon file indexes, Fory rows and
Iceberg-style tables for Python, with a Cython core.

Heavy dependencies (pandas, pyspark, fastavro) are imported lazily.
"""

from .errors import (
    AlreadyExistsError,
    CommitConflictError,
    CommitFailedError,
    CorruptFileError,
    InvalidArgumentError,
    InvalidIdentifierError,
    NamespaceNotEmptyError,
    NotFoundError,
    PaimonEngineError,
    SchemaError,
    UnsafeLocationError,
    UnsupportedTypeError,
)

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "PaimonEngineError",
    "CorruptFileError",
    "UnsupportedTypeError",
    "SchemaError",
    "CommitConflictError",
    "CommitFailedError",
    "NotFoundError",
    "AlreadyExistsError",
    "InvalidArgumentError",
    "InvalidIdentifierError",
    "NamespaceNotEmptyError",
    "UnsafeLocationError",
    "kernels_implementation",
    "load_catalog",
]


def load_catalog(name=None, **properties):
    """pyiceberg's ``load_catalog``; see :func:`paimon_engine.catalog.load_catalog`."""
    from .catalog.loader import load_catalog as _load
    return _load(name, **properties)


def kernels_implementation() -> dict:
    """Which implementation each kernel uses: ``{'varint': 'cython', ...}``."""
    from . import _speedups
    return _speedups.report()
