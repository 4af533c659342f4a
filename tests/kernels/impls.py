"""Both implementations of a kernel, for parametrized tests."""
import pytest

from paimon_engine import _speedups


def implementations(name):
    impls = [pytest.param(_speedups.twin(name), id="python")]
    compiled = None if _speedups.PURE_PYTHON else _speedups.compiled(name)
    if compiled is not None:
        impls.insert(0, pytest.param(compiled, id="cython"))
    return impls
