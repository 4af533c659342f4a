"""The one place that picks compiled kernels or their pure-Python twins.

``PAIMON_ENGINE_PUREPYTHON=1`` forces the twins. Otherwise the compiled
module is used when it imports, and the twin when it does not (the failure is
kept in :data:`load_errors` so tests and ``paimon-engine demo`` can show it).

Use ``kernel("varint")`` or the module attributes (``_speedups.varint``).
"""

from __future__ import annotations

import importlib
import os

def _discover():
    # Every module in _pykernels (but the status codes) is a kernel with a twin. The folder is listed directly
    # (pkgutil's import alone costs a first scan more than half a millisecond).
    from . import _pykernels
    names = set()
    for folder in _pykernels.__path__:
        for entry in os.listdir(folder):
            stem, _, ext = entry.partition(".")
            if ext in ("py", "pyc") and stem.isidentifier() and stem not in ("__init__", "status"):
                names.add(stem)
    return tuple(sorted(names))


#: Every kernel module name; each exists in ``_kernels`` (.pyx) and ``_pykernels`` (.py).
KERNELS = _discover()

PURE_PYTHON = os.environ.get("PAIMON_ENGINE_PUREPYTHON", "") not in ("", "0")

_loaded: dict = {}
#: name -> repr of the ImportError that made a kernel fall back to its twin
load_errors: dict = {}


def twin(name: str):
    """The pure-Python twin of kernel ``name``."""
    return importlib.import_module("paimon_engine._pykernels." + name)


def compiled(name: str):
    """The compiled kernel ``name``, or None if it is not built."""
    try:
        return importlib.import_module("paimon_engine._kernels." + name)
    except ImportError as exc:
        load_errors[name] = repr(exc)
        return None


def kernel(name: str):
    """The live implementation of kernel ``name``."""
    mod = _loaded.get(name)
    if mod is None:
        if name not in KERNELS:
            raise KeyError("unknown kernel %r" % name)
        mod = None if PURE_PYTHON else compiled(name)
        if mod is None:
            mod = twin(name)
        _loaded[name] = mod
    return mod


def implementation(name: str | None = None) -> str:
    """'cython' or 'python' for one kernel; for all kernels, 'cython' only if every one is compiled."""
    names = (name,) if name else KERNELS
    kinds = {("cython" if kernel(n).__name__.startswith("paimon_engine._kernels.") else "python") for n in names}
    return "cython" if kinds == {"cython"} else "python"


def report() -> dict:
    """name -> 'cython' | 'python' for every kernel."""
    return {n: implementation(n) for n in KERNELS}


def __getattr__(name):
    if name in KERNELS:
        return kernel(name)
    raise AttributeError(name)
