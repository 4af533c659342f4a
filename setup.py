"""Build script: declares the Cython kernels in paimon_engine/_kernels.

Environment switches:
  PAIMON_ENGINE_PUREPYTHON=1   build no extensions (the pure-Python twins are used)
  PAIMON_ENGINE_CYTHON_DEBUG=1 bounds checks on everywhere, -O0 -g
  PAIMON_ENGINE_BUILD_JOBS=N   compile N kernels at a time (default: one per CPU)
  PAIMON_ENGINE_CFLAGS="..."   extra compiler flags, after the defaults (e.g. "-O0" for a quick build)

A source distribution carries the .pyx sources only; the C files are generated when the kernels are built.
"""
import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext as _build_ext

HERE = Path(__file__).parent
KERNEL_DIR = HERE / "paimon_engine" / "_kernels"

PURE = os.environ.get("PAIMON_ENGINE_PUREPYTHON", "") not in ("", "0")
DEBUG = os.environ.get("PAIMON_ENGINE_CYTHON_DEBUG", "") not in ("", "0")
JOBS = int(os.environ.get("PAIMON_ENGINE_BUILD_JOBS", "") or os.cpu_count() or 1)
# Commands that only describe or pack the sources: the kernels are declared with their .pyx sources and not
# translated to C (a source distribution ships no generated C).
_SOURCE_ONLY = {"sdist", "egg_info", "dist_info", "check"}
_BUILDS = {"build", "build_ext", "bdist_wheel", "bdist", "bdist_egg", "install", "develop", "editable_wheel"}


#: flags added where the compiler takes them. The kernels' per-value loops (a dictionary index unpacked and its
#: value moved, a row kept or dropped by its flag) are a dozen instructions each. Rolled, their speed moved by up
#: to half with where the loop happened to land in the module (a change elsewhere in it was enough): they are
#: unrolled and aligned. A helper holding such a loop and called from one place was inlined into its caller, the
#: large function that checks a kernel's arguments, and there ran short of registers (its constants reloaded
#: from the stack for every value): such helpers stay functions of their own.
LOOP_FLAGS = ["-funroll-loops", "-falign-loops=32", "-fno-inline-functions-called-once"]


def _takes(compiler, flag):
    """Whether ``compiler`` compiles a small C file with ``flag`` (an unknown flag is an error for some)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write("int probe(int x) { return x + 1; }\n")
        try:
            compiler.compile([src], output_dir=tmp, extra_postargs=[flag, "-Werror"])
        except Exception:
            return False
    return True


class build_ext(_build_ext):
    """Compiles the kernels in parallel unless ``-j``/``--parallel`` says otherwise."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = JOBS

    def build_extensions(self):
        if not DEBUG and self.compiler.compiler_type == "unix":
            extra = [f for f in LOOP_FLAGS if _takes(self.compiler, f)]
            for ext in self.extensions:
                # before the user's PAIMON_ENGINE_CFLAGS, which come last and so may override them
                ext.extra_compile_args = ext.extra_compile_args[:1] + extra + ext.extra_compile_args[1:]
        super().build_extensions()


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
    args = set(sys.argv[1:])
    if args & _SOURCE_ONLY and not args & _BUILDS:
        return [Extension("paimon_engine._kernels." + pyx.stem, [str(pyx.relative_to(HERE))])
                for pyx in sorted(KERNEL_DIR.glob("*.pyx"))]
    import numpy
    from Cython.Build import cythonize

    directives = {"language_level": "3", "embedsignature": True}
    if DEBUG:
        directives.update({"boundscheck": True, "wraparound": True, "initializedcheck": True})
        extra_compile = ["-O0", "-g"]
    else:
        extra_compile = ["-O3"]
    extra_compile += os.environ.get("PAIMON_ENGINE_CFLAGS", "").split()
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


setup(ext_modules=_extensions(), cmdclass={"build_ext": build_ext})
