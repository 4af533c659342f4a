"""Every input the fuzzers keep under tests/data/fuzz/<target>/ decodes or raises a PaimonEngineError, and the
compiled kernels and their pure-Python twins classify each one the same way.

Inputs still waiting for a decoder fix live in tests/data/fuzz/pending/ and are not replayed here.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fuzz.replay import classify
from paimon_engine import _speedups
from fuzz.targets import TARGETS

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "data" / "fuzz"


def _inputs(target):
    d = CORPUS / target
    return sorted(p for p in d.glob("*.bin")) if d.is_dir() else []


def test_every_corpus_folder_names_a_target():
    folders = {p.name for p in CORPUS.iterdir() if p.is_dir()} - {"pending"}
    assert folders <= set(TARGETS), f"unknown targets: {sorted(folders - set(TARGETS))}"
    assert folders == set(TARGETS), f"targets without kept inputs: {sorted(set(TARGETS) - folders)}"


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_kept_inputs_decode_or_raise_engine_errors(target):
    files = _inputs(target)
    assert files, f"no kept inputs for {target}"
    got = {p.name: classify(target, p.read_bytes()) for p in files}
    bad = {name: c for name, c in got.items() if c.startswith("finding")}
    assert not bad, f"{target}: inputs raised foreign exceptions: {bad}"
    # under the pure-Python kernels every input lands in the same class
    env = dict(os.environ, PAIMON_ENGINE_PUREPYTHON="1")
    proc = subprocess.run([sys.executable, "-m", "fuzz.replay", target, *map(str, files)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    pure = json.loads(proc.stdout)
    assert pure["implementation"] == "python"
    assert _speedups.implementation() == ("python" if _speedups.PURE_PYTHON else "cython")
    assert pure["outcomes"] == got


def test_outcome_classes():
    # the classification itself: a valid seed decodes, garbage is rejected with an engine error
    from fuzz.seeds import build_seeds
    seeds = build_seeds(["puffin_deletion_vector"])["puffin_deletion_vector"]
    assert classify("puffin_deletion_vector", seeds["small"]) == "ok"
    assert classify("puffin_deletion_vector", b"\x00" * 5) == "CorruptFileError"
