"""Suite-wide fixtures, and the guard that keeps the tests inside the checkout.

Reference bytes live in ``tests/data/`` (see ``tests/data/golden/README.md``). A fresh clone must pass with
nothing beside it, so an ``open`` of a path that sits beside the checkout (a sibling folder of the repository,
such as a ``shared/`` directory) fails the test that made it, with the name of the file to copy.
"""
import os
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
GOLDEN = DATA / "golden"


class OutsideCheckoutError(RuntimeError):
    """A test opened a file beside the checkout instead of a copy under tests/data/."""


_PARENT = os.path.realpath(REPO.parent) + os.sep
_REPO = os.path.realpath(REPO) + os.sep


def _roots_allowed():
    # the interpreter's prefixes and the temporary directory, unless one of them holds the checkout itself (a
    # clone under /tmp): then it would allow everything beside the checkout
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, tempfile.gettempdir()}
    full = (os.path.realpath(r) + os.sep for r in roots)
    return tuple(r for r in full if not _REPO.startswith(r))


_ALLOWED = _roots_allowed()
#: names of temporary folders (tempfile's, pytest's) that may sit beside a checkout made in the temp directory
_TEMP_NAMES = ("tmp", "pytest-of-")
_SEEN = []


def outside_checkout(path) -> bool:
    """True when ``path`` lies in the folder that holds the checkout but not inside the checkout itself.

    Hidden folders there (tool caches, a home directory's dot-folders) and the interpreter's own prefix and the
    temporary directory are not the project's data and stay allowed.
    """
    full = os.path.realpath(path)
    if os.path.isdir(full):
        full += os.sep
    if not full.startswith(_PARENT) or full.startswith(_REPO) or full.startswith(_ALLOWED):
        return False
    first = full[len(_PARENT):].split(os.sep, 1)[0]
    if not first or first.startswith("."):
        return False
    return not (_PARENT == os.path.realpath(tempfile.gettempdir()) + os.sep and first.startswith(_TEMP_NAMES))


def _guard(event, args):
    if event != "open":
        return
    path = args[0]
    if isinstance(path, int):
        return
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    elif not isinstance(path, str):
        path = os.fspath(path)
    if not os.path.isabs(path):
        path = os.path.join(os.getcwd(), path)
    if not path.startswith(_PARENT) or path.startswith(_REPO):
        return
    if outside_checkout(path):
        _SEEN.append(path)
        raise OutsideCheckoutError(
            f"tests must not read {path}: it lies outside the checkout. Copy it byte for byte into tests/data/ "
            f"(with a line in tests/data/golden/README.md) and read it from there.")


sys.addaudithook(_guard)


def pytest_sessionfinish(session, exitstatus):
    # An open refused inside code that swallowed the error still fails the run.
    if _SEEN and session.exitstatus == 0:
        session.exitstatus = 1
        sys.stderr.write("\nfiles outside the checkout were opened by tests:\n  " + "\n  ".join(_SEEN) + "\n")


@pytest.fixture(scope="session")
def golden_dir():
    return GOLDEN


def java_vectors():
    """Lines of paimon-java-vectors.txt as lists of tokens."""
    out = []
    for line in (GOLDEN / "paimon-java-vectors.txt").read_text().splitlines():
        if line.strip():
            out.append(line.split(" "))
    return out
