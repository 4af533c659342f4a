"""The asv benchmarks: paimon_engine and its peers doing the same work in the same run.

asv imports this package before any benchmark module, in every benchmark process. It byte-compiles the checkout's
``paimon_engine`` (only the sources whose compiled form is missing or out of date), as an installed wheel is: the
cold benchmarks (``timeraw_*``, a fresh interpreter) must not count compiling the package's sources, which the
peers' installed packages never do, however asv was started (``make bench`` compiles too)."""
import compileall as _compileall
import os as _os

_compileall.compile_dir(
    _os.path.join(_os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))), "paimon_engine"),
    quiet=1)
