"""Both implementations of a kernel, for parametrized tests."""
import pytest

from paimon_engine import _speedups


def implementations(name):
    impls = [pytest.param(_speedups.twin(name), id="python")]
    compiled = None if _speedups.PURE_PYTHON else _speedups.compiled(name)
    if compiled is not None:
        impls.insert(0, pytest.param(compiled, id="cython"))
    return impls


def avx512_expected():
    """Whether the compiled kernels should take their AVX-512 paths here: the processor lists AVX-512 F, BW and VL
    in /proc/cpuinfo (None where there is no /proc/cpuinfo to read)."""
    import platform
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((set(line.split(":", 1)[1].split()) for line in f if line.startswith("flags")), set())
    except OSError:
        return None
    return platform.machine() in ("x86_64", "AMD64") and {"avx512f", "avx512bw", "avx512vl"} <= flags


def check_vector_paths_live(modules):
    """``modules``: a kernel's implementations (compiled first); the compiled one takes its AVX-512 paths exactly
    where the processor has them, the twin never."""
    if len(modules) < 2:
        pytest.skip("pure-Python build: only the twin")
    want = avx512_expected()
    if want is None:
        pytest.skip("no /proc/cpuinfo to compare with")
    assert modules[0].vector_paths() is want
    assert modules[1].vector_paths() is False
