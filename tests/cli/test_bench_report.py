"""``make bench-report``: asv results -> PNG chart and Markdown table."""

import importlib.util
import json
from pathlib import Path

import pytest

REPORT = Path(__file__).resolve().parents[2] / "asv_bench" / "report.py"


def _load():
    spec = importlib.util.spec_from_file_location("bench_report", REPORT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_report_from_asv_results(tmp_path):
    pytest.importorskip("matplotlib")
    mod = _load()
    res = tmp_path / "results" / "m1"
    res.mkdir(parents=True)
    (res / "machine.json").write_text("{}")
    cols = ["result", "params", "version"]
    doc = {"date": 2, "result_columns": cols, "results": {
        "bench_x.Read.time_read": [[0.01, 0.05, 0.02, 0.03], [["'paimon_engine'", "'pyiceberg'"], ["'a'", "'b'"]],
                                   "v"],
        "bench_x.Read.peakmem_read": [[1 << 20, 3 << 20], [["'paimon_engine'", "'pyiceberg'"]], "v"],
        "bench_x.Kernel.time_k": [[0.001], [["'int64'"]], "v"],
    }}
    (res / "abc-env.json").write_text(json.dumps(doc))
    (res / "old-env.json").write_text(json.dumps({**doc, "date": 1, "results": {}}))
    png, md = tmp_path / "r.png", tmp_path / "r.md"
    assert mod.main(["--results", str(tmp_path / "results"), "--png", str(png), "--markdown", str(md)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = md.read_text()
    # params are a product: (engine, a), (engine, b), (pyiceberg, a), (pyiceberg, b)
    assert "| Read.time_read [a] | 10 ms | 20 ms (2x) |" in text
    assert "| Read.time_read [b] | 50 ms | 30 ms (0.6x) |" in text
    assert "| Read.peakmem_read | 1 MiB | 3 MiB (3x) |" in text
    assert "Kernel" not in text


def test_report_without_results_fails_clearly(tmp_path, capsys):
    mod = _load()
    assert mod.main(["--results", str(tmp_path / "none"), "--png", str(tmp_path / "x.png"),
                     "--markdown", str(tmp_path / "x.md")]) == 1
    assert "no asv results" in capsys.readouterr().err


def test_scaled_peers_and_tracked_values(tmp_path):
    pytest.importorskip("matplotlib")
    mod = _load()
    res = tmp_path / "results" / "m1"
    res.mkdir(parents=True)
    cols = ["result", "params", "version"]
    doc = {"date": 1, "result_columns": cols, "results": {
        "bench_x.Read.time_read": [[0.01, 0.004], [["'paimon_engine'", "'peer_x50'"]], "v"],
        "bench_x.Read.track_blocks": [[1, 519], [["'paimon_engine'", "'full_scan'"]], "v"],
    }}
    (res / "abc-env.json").write_text(json.dumps(doc))
    png, md = tmp_path / "r.png", tmp_path / "r.md"
    assert mod.main(["--results", str(tmp_path / "results"), "--png", str(png), "--markdown", str(md)]) == 0
    text = md.read_text()
    # columns: paimon_engine, full_scan, peer_x50
    assert "| Read.time_read | 10 ms |  | 200 ms (20x) |" in text
    assert "| Read.track_blocks | 1 | 519 (5.2e+02x) |  |" in text


def test_partial_runs_are_merged_newest_first(tmp_path):
    pytest.importorskip("matplotlib")
    mod = _load()
    res = tmp_path / "results" / "m1"
    res.mkdir(parents=True)
    cols = ["result", "params", "version"]
    impls = [["'paimon_engine'", "'peer'"]]
    old = {"date": 1, "result_columns": cols, "results": {
        "bench_x.A.time_a": [[0.01, 0.02], impls, "v"], "bench_x.B.time_b": [[0.01, 0.04], impls, "v"]}}
    new = {"date": 2, "result_columns": cols, "results": {"bench_x.B.time_b": [[0.02, 0.04], impls, "v"]}}
    (res / "c1-env.json").write_text(json.dumps(old))
    (res / "c2-env.json").write_text(json.dumps(new))
    md = tmp_path / "r.md"
    assert mod.main(["--results", str(tmp_path / "results"), "--png", str(tmp_path / "r.png"),
                     "--markdown", str(md)]) == 0
    text = md.read_text()
    assert "| A.time_a | 10 ms | 20 ms (2x) |" in text
    assert "| B.time_b | 20 ms | 40 ms (2x) |" in text


def test_before_after_table(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    mod = _load()
    res = tmp_path / "results" / "m1"
    res.mkdir(parents=True)
    cols = ["result", "params", "version"]
    impls = [["'paimon_engine'", "'peer'"]]
    old = {"date": 1, "commit_hash": "aaaa1111", "result_columns": cols, "results": {
        "bench_x.A.time_a": [[0.04, 0.02], impls, "v"], "bench_x.Gone.time_g": [[0.01, 0.02], impls, "v"],
        "bench_x.C.time_c": [[0.01, 0.02], impls, "v"]}}
    new = {"date": 2, "commit_hash": "bbbb2222", "result_columns": cols, "results": {
        "bench_x.A.time_a": [[0.01, 0.03], impls, "v"], "bench_x.New.time_n": [[0.01, 0.02], impls, "v"],
        "bench_x.C.time_c": [[0.02, 0.04, 0.01], [["'paimon_engine'", "'peer'", "'floor'"]], "v"]}}
    (res / "aaaa1111-env.json").write_text(json.dumps(old))
    (res / "bbbb2222-env.json").write_text(json.dumps(new))
    md = tmp_path / "r.md"
    args = ["--results", str(tmp_path / "results"), "--png", str(tmp_path / "r.png"), "--markdown", str(md)]
    assert mod.main(args + ["--before", "aaaa", "--after", "bbbb"]) == 0
    text = md.read_text()
    after = text.split("## Before and after", 1)[1]
    # the peer's ratio in each run (0.02 / 0.04, then 0.03 / 0.01)
    assert "| A.time_a | 40 ms | 10 ms | 0.25 | peer 30 ms (0.5x -> 3x) |" in after
    # a peer the before run did not have: its after-run ratio alone
    assert "| C.time_c | 10 ms | 20 ms | 2.00 | floor 10 ms (0.5x), peer 40 ms (2x -> 2x) |" in after
    # only cases measured at both commits
    assert "Gone" not in after and "New" not in after
    assert mod.main(args + ["--before", "aaaa"]) == 2
    assert mod.main(args + ["--before", "cccc", "--after", "bbbb"]) == 1
    assert "no asv results for commit cccc" in capsys.readouterr().err


def test_before_after_from_another_results_folder(tmp_path):
    # the chart and main table from --results; the before/after table from --compare-results (runs of one suite
    # at both commits, kept apart from the main results)
    pytest.importorskip("matplotlib")
    mod = _load()
    cols = ["result", "params", "version"]
    impls = [["'paimon_engine'", "'peer'"]]
    main = tmp_path / "results" / "m1"
    main.mkdir(parents=True)
    (main / "cccc3333-env.json").write_text(json.dumps({"date": 3, "commit_hash": "cccc3333", "result_columns": cols,
                                                        "results": {"bench_x.Now.time_n": [[0.01, 0.05], impls, "v"]}}))
    other = tmp_path / "suite" / "m1"
    other.mkdir(parents=True)
    for commit, date, v in (("aaaa1111", 1, 0.04), ("bbbb2222", 2, 0.02)):
        (other / f"{commit}-env.json").write_text(json.dumps({
            "date": date, "commit_hash": commit, "result_columns": cols,
            "results": {"bench_x.Old.time_o": [[v, 0.08], impls, "v"]}}))
    md = tmp_path / "r.md"
    args = ["--results", str(tmp_path / "results"), "--png", str(tmp_path / "r.png"), "--markdown", str(md),
            "--before", "aaaa", "--after", "bbbb"]
    assert mod.main(args) == 1      # neither commit is under --results
    assert mod.main(args + ["--compare-results", str(tmp_path / "suite")]) == 0
    main_part, after = md.read_text().split("## Before and after", 1)
    assert "| Now.time_n | 10 ms | 50 ms (5x) |" in main_part and "Old" not in main_part
    assert f"(results under `{tmp_path / 'suite'}`)" in after
    assert "| Old.time_o | 40 ms | 20 ms | 0.50 | peer 80 ms (2x -> 4x) |" in after
