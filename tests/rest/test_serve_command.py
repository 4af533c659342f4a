"""``paimon-engine serve`` as a process: it serves the catalog named on the command line, with the token."""
import os
import subprocess
import sys
import time
from pathlib import Path

import requests

from paimon_engine.catalog import FileSystemCatalog, SqlCatalog
from tests.net import free_port as _free_port

REPO = Path(__file__).resolve().parents[2]


def _serve(*args):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "paimon_engine", "serve", *args, "--port", str(port)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    uri = f"http://127.0.0.1:{port}"
    for _ in range(600):
        if proc.poll() is not None:
            raise AssertionError(proc.stderr.read().decode())
        try:
            requests.get(uri + "/v1/config", timeout=1)
            return proc, uri
        except requests.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    raise AssertionError("paimon-engine serve did not start")


def _stop(proc):
    proc.terminate()
    proc.wait(timeout=60)
    proc.stdout.close()
    proc.stderr.close()


def test_serve_a_sqlite_catalog_with_a_token(tmp_path):
    uri = f"sqlite:///{tmp_path}/c.db"
    proc, base = _serve("--catalog", uri, "--warehouse", str(tmp_path / "wh"), "--token", "tok")
    try:
        assert requests.get(base + "/v1/namespaces", timeout=30).status_code == 401
        auth = {"Authorization": "Bearer tok"}
        resp = requests.post(base + "/v1/namespaces", json={"namespace": ["db"]}, headers=auth, timeout=30)
        assert resp.status_code == 200, resp.text
    finally:
        _stop(proc)
    assert SqlCatalog("default", uri=uri).namespace_exists("db")


def test_serve_a_file_system_warehouse(tmp_path):
    proc, base = _serve("--catalog", str(tmp_path / "wh"))
    try:
        resp = requests.post(base + "/v1/namespaces", json={"namespace": ["db"]}, timeout=30)
        assert resp.status_code == 200, resp.text
        assert requests.get(base + "/v1/namespaces", timeout=30).json()["namespaces"] == [["db"]]
    finally:
        _stop(proc)
    assert FileSystemCatalog(str(tmp_path / "wh")).namespace_exists("db")
