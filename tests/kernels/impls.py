"""Both implementations of a kernel, for parametrized tests."""
import pytest

from paimon_engine import _speedups


def implementations(name):
    impls = [pytest.param(_speedups.twin(name), id="python")]
    compiled = None if _speedups.PURE_PYTHON else _speedups.compiled(name)
    if compiled is not None:
        impls.insert(0, pytest.param(compiled, id="cython"))
    return impls


AVX512 = frozenset({"avx512f", "avx512bw", "avx512vl"})
#: carry-less multiplication (hashing's CRC-32)
PCLMUL = frozenset({"pclmulqdq", "sse4_1"})


def avx512_expected(flags=AVX512):
    """Whether the compiled kernels should take their vector paths here: the processor lists ``flags`` (by default
    AVX-512 F, BW and VL) in /proc/cpuinfo (None where there is no /proc/cpuinfo to read)."""
    import platform
    try:
        with open("/proc/cpuinfo") as f:
            have = next((set(line.split(":", 1)[1].split()) for line in f if line.startswith("flags")), set())
    except OSError:
        return None
    return platform.machine() in ("x86_64", "AMD64") and set(flags) <= have


def check_vector_paths_live(modules, flags=AVX512):
    """``modules``: a kernel's implementations (compiled first); the compiled one takes its vector paths exactly
    where the processor has ``flags``, the twin never."""
    if len(modules) < 2:
        pytest.skip("pure-Python build: only the twin")
    want = avx512_expected(flags)
    if want is None:
        pytest.skip("no /proc/cpuinfo to compare with")
    assert modules[0].vector_paths() is want
    assert modules[1].vector_paths() is False
