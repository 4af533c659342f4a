import os
import subprocess
import sys

import pytest

from paimon_engine import _speedups


@pytest.mark.skipif(_speedups.PURE_PYTHON, reason="this run forces the pure-Python twins on purpose")
def test_compiled_kernels_are_loaded_in_a_normal_install():
    for name in _speedups.KERNELS:
        assert _speedups.implementation(name) == "cython", _speedups.load_errors.get(name)
        assert _speedups.kernel(name).__file__.endswith((".so", ".pyd"))


def test_environment_override_forces_the_twins():
    env = dict(os.environ, PAIMON_ENGINE_PUREPYTHON="1")
    out = subprocess.run([sys.executable, "-c", "import paimon_engine as p; print(p.kernels_implementation())"],
                         env=env, capture_output=True, text=True, check=True).stdout
    assert "cython" not in out and "python" in out


def test_twins_have_the_same_functions_as_kernels():
    for name in _speedups.KERNELS:
        compiled = _speedups.compiled(name)
        if compiled is None:
            pytest.skip("compiled kernels not built in this run")
        public = {n for n in dir(compiled) if not n.startswith("_") and callable(getattr(compiled, n))}
        twin = _speedups.twin(name)
        missing = {n for n in public if not hasattr(twin, n)}
        assert not missing, f"{name}: twin lacks {missing}"


def test_unknown_kernel_is_an_error():
    with pytest.raises(KeyError):
        _speedups.kernel("nope")


def test_every_kernel_is_discovered():
    """The kernels listed from _pykernels are exactly the Cython sources in _kernels: each has both."""
    from pathlib import Path
    sources = {p.stem for p in (Path(_speedups.__file__).parent / "_kernels").glob("*.pyx")}
    assert sources, "the checkout's kernel sources"
    assert set(_speedups.KERNELS) == sources
