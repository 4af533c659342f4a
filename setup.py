"""Build script: declares the Cython kernels in paimon_engine/_kernels.

Environment switches:
  PAIMON_ENGINE_PUREPYTHON=1   build no extensions (the pure-Python twins are used)
  PAIMON_ENGINE_CYTHON_DEBUG=1 bounds checks on everywhere, -O0 -g
"""
import os
import sys
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).parent
KERNEL_DIR = HERE / "paimon_engine" / "_kernels"

PURE = os.environ.get("PAIMON_ENGINE_PUREPYTHON", "") not in ("", "0")
DEBUG = os.environ.get("PAIMON_ENGINE_CYTHON_DEBUG", "") not in ("", "0")


def _debug_copy(pyx):
    """Kernels switch bounds checks off per function with decorators, which
    outrank global directives; the debug build compiles a copy with those
    decorators turned back on."""
    out_dir = HERE / "build" / "cython-debug" / "paimon_engine" / "_kernels"
    out_dir.mkdir(parents=True, exist_ok=True)
    for pxd in KERNEL_DIR.glob("*.pxd"):
        (out_dir / pxd.name).write_text(pxd.read_text())
    text = pyx.read_text()
    for directive in ("boundscheck", "wraparound", "initializedcheck"):
        text = text.replace("@cython.%s(False)" % directive, "@cython.%s(True)" % directive)
    target = out_dir / pyx.name
    target.write_text(text)
    return target


def _extensions():
    if PURE:
        return []
    import numpy
    from Cython.Build import cythonize

    directives = {"language_level": "3", "embedsignature": True}
    if DEBUG:
        directives.update({"boundscheck": True, "wraparound": True, "initializedcheck": True})
        extra_compile = ["-O0", "-g"]
    else:
        extra_compile = ["-O3"]
    exts = []
    for pyx in sorted(KERNEL_DIR.glob("*.pyx")):
        name = "paimon_engine._kernels." + pyx.stem
        source = _debug_copy(pyx) if DEBUG else pyx
        exts.append(
            Extension(
                name,
                [str(source.relative_to(HERE))],
                include_dirs=[numpy.get_include()],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                extra_compile_args=extra_compile,
            )
        )
    return cythonize(
        exts,
        compiler_directives=directives,
        annotate=os.environ.get("PAIMON_ENGINE_CYTHON_ANNOTATE", "") not in ("", "0"),
        force=DEBUG,
    )


setup(ext_modules=_extensions())
