import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _find_shared():
    # shared/ sits beside the checkout; a checkout nested deeper finds it further up.
    env = os.environ.get("PAIMON_ENGINE_SHARED")
    if env:
        return Path(env)
    for parent in REPO.parents:
        if (parent / "shared" / "golden").is_dir():
            return parent / "shared"
    return REPO.parent / "shared"


SHARED = _find_shared()
GOLDEN = SHARED / "golden"


@pytest.fixture(scope="session")
def golden_dir():
    if not GOLDEN.is_dir():
        pytest.fail(f"golden vectors not found at {GOLDEN} (set PAIMON_ENGINE_SHARED)")
    return GOLDEN


def java_vectors():
    """Lines of paimon-java-vectors.txt as lists of tokens."""
    out = []
    for line in (GOLDEN / "paimon-java-vectors.txt").read_text().splitlines():
        if line.strip():
            out.append(line.split(" "))
    return out
