"""Keep a small replay corpus: the seeds and the smallest inputs the fuzzer found, for ``tests/data/fuzz/``.

    python -m fuzz.keep [--per-target N] [TARGET...]

Only inputs that decode or raise a PaimonEngineError are kept here (findings go to ``tests/data/fuzz/pending/``
until their decoder is fixed). Each input is named by the SHA-1 of its bytes, so keeping twice adds nothing.
"""
from __future__ import annotations

import argparse
import hashlib
import os

from .run import DEFAULT_FINDINGS, WORK
from .seeds import build_seeds
from .targets import TARGETS, outcome


def keep(target, per_target=24, out_dir=DEFAULT_FINDINGS, max_bytes=4096):
    d = os.path.join(out_dir, target)
    os.makedirs(d, exist_ok=True)
    chosen = list(build_seeds([target]).get(target, {}).values())
    corpus = os.path.join(WORK, "corpus", target)
    found = []
    if os.path.isdir(corpus):
        for n in os.listdir(corpus):
            with open(os.path.join(corpus, n), "rb") as f:
                data = f.read()
            if len(data) <= max_bytes:
                found.append(data)
    found.sort(key=lambda b: (len(b), b))
    # spread the picks over the sizes rather than only the tiniest inputs
    step = max(1, len(found) // per_target) if found else 1
    chosen += found[::step][:per_target]
    kept = 0
    for data in chosen:
        if outcome(target, data)[0] == "finding":
            continue
        with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16] + ".bin"), "wb") as f:
            f.write(data)
        kept += 1
    return kept


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m fuzz.keep")
    p.add_argument("--per-target", type=int, default=24)
    p.add_argument("targets", nargs="*")
    args = p.parse_args(argv)
    for t in args.targets or TARGETS:
        print(f"{t}: {keep(t, args.per_target)} inputs kept")


if __name__ == "__main__":
    main()
