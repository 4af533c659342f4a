"""The documentation site builds with ``mkdocs build --strict`` (no network: fonts off, offline plugin), so a
broken link, a missing page in the nav or an API reference to something that does not exist fails the suite."""
import os
import subprocess
import sys

from .mdblocks import REPO


def test_site_builds_strict(tmp_path):
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           str(REPO / "mkdocs.yml"), "--site-dir", str(site)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-6000:]}"
    assert (site / "index.html").is_file()
    # Every public area has a generated API page with documented members.
    for page in ("catalogs", "table", "scans", "expressions", "row", "fory", "file-indexes", "deletion-vectors",
                 "batch", "spark", "errors", "types", "io"):
        html = (site / "reference" / f"{page}.html").read_text(encoding="utf-8")
        assert html.count("doc doc-heading") >= 2, f"reference/{page} documents nothing"
    # Offline: no page pulls fonts or scripts from the network.
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis" not in index and "fonts.gstatic" not in index


def test_every_python_block_of_the_docs_is_collected():
    """The runner sees every fenced Python block of README.md and docs/ (a typo in a fence is not a silent skip)."""
    from .mdblocks import documentation_pages, parse_blocks
    for path in documentation_pages():
        text = path.read_text(encoding="utf-8")
        fences = sum(1 for line in text.splitlines() if line.strip().startswith("```python"))
        runnable = [b for b in parse_blocks(path) if b.language == "python"]
        assert len(runnable) == fences, path
