"""In-place views of single Fory rows (``RowView``, ``ArrayView``, ``MapView``).

The classes come from the ``foryview`` kernel (compiled, or its pure-Python
twin); the per-layout ``ViewSchema`` they read with is built by
:func:`paimon_engine.formats.fory.schema.view_schema`.
"""

from __future__ import annotations

from ... import _speedups


def __getattr__(name):
    if name in ("RowView", "ArrayView", "MapView", "ViewSchema"):
        return getattr(_speedups.kernel("foryview"), name)
    raise AttributeError(name)
