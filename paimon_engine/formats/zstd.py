"""The zstd codec of the ``zstandard`` package, shared by the readers of ``.row`` blocks and Parquet pages."""
from __future__ import annotations

import threading

_MODULE = None
_LOCAL = threading.local()


def zstandard():
    """The zstandard module (imported on first use)."""
    global _MODULE
    if _MODULE is None:
        import zstandard as module
        _MODULE = module
    return _MODULE


def thread_decompressor():
    """The calling thread's zstd decompressor, shared by every reader (a decompressor is not thread-safe; one
    per thread keeps its window buffers allocated between blocks, pages and readers)."""
    d = getattr(_LOCAL, "dctx", None)
    if d is None:
        d = _LOCAL.dctx = zstandard().ZstdDecompressor()
    return d
