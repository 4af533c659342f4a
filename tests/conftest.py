import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("PAIMON_ENGINE_SHARED", REPO.parent / "shared"))
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
