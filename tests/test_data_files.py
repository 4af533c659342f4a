"""The suite's reference bytes are inside the checkout, unchanged, and nothing reads beside it."""
import hashlib
import subprocess
import sys

import pytest

from . import conftest
from .conftest import GOLDEN, REPO, OutsideCheckoutError, outside_checkout


def test_golden_files_match_their_recorded_digests():
    listed = {}
    for line in (GOLDEN / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split()
        listed[name] = digest
    on_disk = {p.name for p in GOLDEN.iterdir() if p.name not in ("SHA256SUMS", "README.md")}
    assert on_disk == set(listed), "every reference file has a digest line and every line a file"
    for name, digest in listed.items():
        assert hashlib.sha256((GOLDEN / name).read_bytes()).hexdigest() == digest, name
    readme = (GOLDEN / "README.md").read_text()
    for name in listed:
        assert f"`{name}`" in readme, f"{name} is not described in tests/data/golden/README.md"


def test_opening_a_file_beside_the_checkout_fails_with_what_to_copy():
    beside = REPO.parent / "shared" / "golden" / "java_small.row"
    with pytest.raises(OutsideCheckoutError, match="Copy it byte for byte into tests/data/"):
        open(beside, "rb")
    # This refusal was the point of the test; it must not fail the session.
    assert conftest._SEEN.pop() == str(beside)


def test_the_guard_allows_the_checkout_and_the_temporary_directory(tmp_path):
    assert not outside_checkout(GOLDEN / "java_small.row")
    assert not outside_checkout(tmp_path / "x")
    assert not outside_checkout(sys.prefix)
    assert outside_checkout(REPO.parent / "shared" / "golden" / "x")


def test_no_test_source_names_a_folder_beside_the_checkout():
    out = subprocess.run(["git", "grep", "-n", "-e", "../shared", "-e", "shared/golden", "--", "tests", "Makefile",
                          ".ci"], cwd=REPO, capture_output=True, text=True)
    hits = [line for line in out.stdout.splitlines() if not line.startswith("tests/test_data_files.py")]
    assert not hits, hits
