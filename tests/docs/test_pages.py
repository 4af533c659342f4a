"""Every page of the documentation runs as a reader would paste it.

One test per page (README.md and docs/**.md): its runnable blocks (see ``mdblocks``) run in order in a fresh
interpreter, in a scratch directory of their own. When a block mentions ``warehouse``, the scratch directory
first gets the tables and files that ``paimon-engine demo --warehouse warehouse`` (``make demo``) leaves there.
Pages with a ```python spark block are marked ``spark``; pages with a ```python s3 block run against a local
moto S3 server whose endpoint and bucket reach them through the variables the page tells readers to set
(``S3_ENDPOINT``, ``S3_BUCKET``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``); pages with a
```python postgres block get a fresh database of the suite's throwaway PostgreSQL server through the variables the
page tells readers to set (``CATALOG_USER``, ``CATALOG_PASSWORD``, ``CATALOG_HOST``, ``CATALOG_PORT``,
``CATALOG_DB``).
"""
import json
import os
import subprocess
import sys

import pytest

from .mdblocks import REPO, documentation_pages, runnable_blocks
from .run_page import MARKER

PAGE_TIMEOUT = 900          # seconds: a page that hangs fails instead of stalling the suite
# The demo's steps that leave files in the warehouse (its other steps only read them or print).
DEMO_WAREHOUSE = ("from paimon_engine import demo\n"
                  "demo.row_files('warehouse'); demo.tables('warehouse'); demo.row_table('warehouse')\n")


def _params():
    out = []
    for path in documentation_pages():
        blocks = runnable_blocks(path)
        if not blocks:
            continue
        marks = [pytest.mark.spark] if any("spark" in b.flags for b in blocks) else []
        out.append(pytest.param(path, blocks, marks=marks, id=path.relative_to(REPO).as_posix()))
    return out


def _pg_settings(uri):
    from sqlalchemy.engine import make_url
    url = make_url(uri)
    return {"CATALOG_USER": url.username or "", "CATALOG_PASSWORD": url.password or "",
            "CATALOG_HOST": url.host or "127.0.0.1", "CATALOG_PORT": str(url.port or 5432),
            "CATALOG_DB": url.database or ""}


def _environment(s3=None):
    env = dict(os.environ)
    bindir = os.path.dirname(sys.executable)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    # The checkout under test, not whatever copy of the package the interpreter would find first.
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env["PYTHONUNBUFFERED"] = "1"
    if s3:
        env.update(s3)
    return env


def _block_output(text, index):
    parts = text.split(MARKER)
    for part in parts[1:]:
        head, _, rest = part.partition("\n")
        if head.strip() == str(index):
            return rest.strip()
    return text.strip()


def _s3_settings(endpoint, page):
    import pyarrow.fs as pafs
    bucket = "docs-" + page.replace("/", "-").replace(".", "-").replace("_", "-").lower()
    fs = pafs.S3FileSystem(endpoint_override=endpoint.split("://", 1)[1], scheme="http", access_key="testing",
                           secret_key="testing", region="us-east-1", allow_bucket_creation=True,
                           allow_bucket_deletion=True)
    fs.create_dir(bucket)
    return {"S3_ENDPOINT": endpoint, "S3_BUCKET": bucket, "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}


@pytest.mark.parametrize("path,blocks", _params())
def test_page_runs_as_pasted(path, blocks, tmp_path, request):
    page = path.relative_to(REPO).as_posix()
    s3 = None
    if any("s3" in b.flags for b in blocks):
        s3 = _s3_settings(request.getfixturevalue("docs_s3_endpoint"), page)
    if any("postgres" in b.flags for b in blocks):
        s3 = dict(s3 or {}, **_pg_settings(request.getfixturevalue("pg_uri")))
    env = _environment(s3)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    if any("warehouse" in b.code for b in blocks):
        demo = subprocess.run([sys.executable, "-c", DEMO_WAREHOUSE], cwd=scratch, env=env,
                              capture_output=True, text=True, timeout=PAGE_TIMEOUT)
        assert demo.returncode == 0, f"creating the demo warehouse for {page} failed:\n{demo.stderr}"
    spec = tmp_path / "blocks.json"
    spec.write_text(json.dumps({"page_file": str(path), "blocks": [
        {"line": b.line, "kind": b.kind, "code": b.code, "commands": b.commands} for b in blocks]}))
    done = subprocess.run([sys.executable, str(REPO / "tests" / "docs" / "run_page.py"), str(spec)], cwd=scratch,
                          env=env, capture_output=True, text=True, timeout=PAGE_TIMEOUT)
    if done.returncode != 0:
        failed = max((int(p.split("\n", 1)[0]) for p in done.stderr.split(MARKER)[1:]), default=0)
        block = blocks[failed]
        fence = block.language + "".join(" " + f for f in sorted(block.flags))
        pytest.fail(f"{page}: the ```{fence} block at line {block.line} failed "
                    f"(exit status {done.returncode}):\n{_block_output(done.stderr, failed)}", pytrace=False)
