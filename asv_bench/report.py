"""Render the asv comparison (engine vs peers) as a PNG chart: ``make bench-report``.

Reads the newest result file of each machine under ``.asv/results`` (asv's JSON, any benchmark with an ``impl``
parameter), draws one horizontal bar group per benchmark case (log-scale time, one bar per implementation, the
ratio to ``paimon_engine`` written on each peer bar; memory benchmarks only in the table) and writes ``docs/bench-report.png`` plus a Markdown table
``docs/bench-report.md``. Offline; needs matplotlib (the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import sys

ENGINE = "paimon_engine"


def _runs(results_dir):
    """-> [(machine, [result documents, oldest first])] for every machine folder under ``results_dir``."""
    out = []
    for machine in sorted(os.listdir(results_dir)) if os.path.isdir(results_dir) else []:
        mdir = os.path.join(results_dir, machine)
        if not os.path.isdir(mdir):
            continue
        runs = []
        for name in os.listdir(mdir):
            if not name.endswith(".json") or name == "machine.json":
                continue
            try:
                with open(os.path.join(mdir, name)) as f:
                    d = json.load(f)
            except (OSError, ValueError):
                continue
            if isinstance(d.get("results"), dict):
                runs.append(d)
        out.append((machine, sorted(runs, key=lambda d: d.get("date", 0) or 0)))
    return out


def _merge(docs):
    """Every benchmark's newest result over ``docs`` (oldest first), so a partial run (``--bench X``) updates X
    and keeps the rest."""
    merged = {}
    for d in docs:
        cols = d.get("result_columns") or ["result", "params"]
        for bench, row in d["results"].items():
            merged[bench] = row if isinstance(row, dict) else dict(zip(cols, row))
    return merged


def newest_results(results_dir):
    """-> (machine, results) per machine: every benchmark's newest result over all runs of that machine."""
    return [(machine, {"results": _merge(docs)}) for machine, docs in _runs(results_dir) if docs]


def results_by_commit(results_dir, prefix):
    """-> {"results": ...} merging (oldest first) every run of any machine whose commit hash starts with
    ``prefix`` (or with one of several comma-separated prefixes: benchmarks measured at different commits of one
    side); None when there is none."""
    prefixes = tuple(x for x in prefix.split(",") if x)
    docs = [d for _, runs in _runs(results_dir) for d in runs
            if prefixes and str(d.get("commit_hash", "")).startswith(prefixes)]
    return {"results": _merge(docs)} if docs else None


def before_after(before, after):
    """Markdown table: the engine's value per benchmark case before and after, with each peer's value from the
    *after* run and its ratio to the engine in each run; only cases measured in both runs."""
    b = dict(scaled(comparisons(before)))
    a = scaled(comparisons(after))
    lines = ["| benchmark | before | after | after / before | peers (after run; peer / paimon_engine, before -> "
             "after where the before run had the peer) |",
             "|---|---|---|---|---|"]
    for label, d in a:
        if ENGINE not in d or label not in b or ENGINE not in b[label]:
            continue
        old, new = b[label][ENGINE], d[ENGINE]
        # a peer's ratio in each run: the machine's speed moves both sides of a run together, so a ratio that
        # holds where the engine's own time moved points at the machine, not the engine
        was = b[label]
        peers = ", ".join(f"{i} {_fmt_value(label, v)} ("
                          + (f"{was[i] / old:.2g}x -> " if was.get(i) else "") + f"{v / new:.2g}x)"
                          for i, v in sorted(d.items()) if i != ENGINE)
        lines.append(f"| {label.replace('|', '/')} | {_fmt_value(label, old)} | {_fmt_value(label, new)} | "
                     f"{new / old:.2f} | {peers} |")
    return "\n".join(lines) + "\n"


def comparisons(result):
    """-> list of (benchmark case label, {impl: seconds}) for benchmarks with an ``impl`` parameter."""
    cols = result.get("result_columns") or ["result", "params"]
    out = []
    for bench, row in sorted(result["results"].items()):
        if isinstance(row, dict):
            rec = row
        else:
            rec = dict(zip(cols, row))
        values, params = rec.get("result"), rec.get("params") or []
        if values is None or not params:
            continue
        names = [p if isinstance(p, str) else str(p) for p in (rec.get("param_names") or [])]
        combos = list(itertools.product(*params))
        if len(combos) != len(values):
            continue
        impl_axis = None
        for i, vals in enumerate(params):
            clean = [str(v).strip("'\"") for v in vals]
            if ENGINE in clean or (names and i < len(names) and names[i] == "impl"):
                impl_axis = i
                break
        if impl_axis is None:
            continue
        groups = {}
        for combo, v in zip(combos, values):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                continue
            impl = str(combo[impl_axis]).strip("'\"")
            rest = tuple(str(c).strip("'\"") for j, c in enumerate(combo) if j != impl_axis)
            groups.setdefault(rest, {})[impl] = float(v)
        short = bench.split(".", 1)[-1]
        for rest, impls in groups.items():
            if len(impls) >= 2:
                out.append((short + (f" [{', '.join(rest)}]" if rest else ""), impls))
    return out


def _is_mem(label):
    return ".peakmem_" in label or label.startswith("peakmem_") or ".mem_" in label


def _is_track(label):
    return ".track_" in label or label.startswith("track_")


def _scale(impl):
    """A peer named ``<name>_x<K>`` ran on 1/K of the rows: its times are multiplied by K."""
    m = re.search(r"_x(\d+)$", impl)
    return int(m.group(1)) if m else 1


def scaled(cases):
    """Times of ``_x<K>`` peers scaled to the full workload (memory and tracked values are left as measured)."""
    out = []
    for label, d in cases:
        if _is_mem(label) or _is_track(label):
            out.append((label, d))
        else:
            out.append((label, {i: v * _scale(i) for i, v in d.items()}))
    return out


def _fmt_value(label, v):
    if _is_mem(label):
        return f"{v / 2**20:.3g} MiB"
    if _is_track(label):
        return f"{v:.3g}"
    return _fmt_time(v)


def _fmt_time(s):
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s * 1e9:.3g} ns"


def render(cases, png, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    impls = sorted({i for _, d in cases for i in d}, key=lambda i: (i != ENGINE, i))
    palette = ["#1b7f5a", "#d1495b", "#edae49", "#00798c", "#30638e", "#8d6a9f", "#6b4226", "#7a7a7a"]
    colors = {i: c for i, c in zip(impls, itertools.cycle(palette))}
    widest = max(len(d) for _, d in cases)
    height = 0.8 / max(1, widest)
    fig, ax = plt.subplots(figsize=(10, 1.0 + 0.3 * len(cases) * widest + 0.5))
    labelled = set()
    for row, (label, d) in enumerate(cases):
        base = d.get(ENGINE)
        present = [i for i in impls if i in d]
        for k, impl in enumerate(present):
            y = row + (k - (len(present) - 1) / 2) * height
            ax.barh(y, d[impl], height=height * 0.9, color=colors[impl],
                    label=None if impl in labelled else impl)
            labelled.add(impl)
            text = _fmt_time(d[impl])
            if base and impl != ENGINE:
                text += f"  ({d[impl] / base:.2g}x)"
            ax.text(d[impl] * 1.05, y, text, va="center", fontsize=7)
    ax.set_yticks(range(len(cases)))
    ax.set_yticklabels([c[0] for c in cases], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("time per call (log scale; lower is better)")
    ax.set_title(title, fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    seen = {}
    for h, lab in zip(handles, labels):
        seen.setdefault(lab, h)
    ax.legend(seen.values(), seen.keys(), loc="lower right", fontsize=8)
    lo = min(v for _, d in cases for v in d.values())
    hi = max(v for _, d in cases for v in d.values())
    ax.set_xlim(lo / 2, hi * 20)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def markdown(cases):
    impls = sorted({i for _, d in cases for i in d}, key=lambda i: (i != ENGINE, i))
    lines = ["| benchmark | " + " | ".join(impls) + " |", "|---|" + "---|" * len(impls)]
    for label, d in cases:
        base = d.get(ENGINE)
        cells = []
        for i in impls:
            if i not in d:
                cells.append("")
            elif i == ENGINE or not base:
                cells.append(_fmt_value(label, d[i]))
            else:
                cells.append(f"{_fmt_value(label, d[i])} ({d[i] / base:.2g}x)")
        lines.append(f"| {label.replace('|', '/')} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--results", default=".asv/results")
    p.add_argument("--png", default="docs/bench-report.png")
    p.add_argument("--markdown", default="docs/bench-report.md")
    p.add_argument("--before", metavar="COMMIT", help="also write a before/after table: the engine's results "
                   "at this commit (hash prefix; several, comma-separated, merge) against those at --after")
    p.add_argument("--compare-results", metavar="DIR", help="the asv results folder --before and --after are "
                   "taken from (default: --results), such as runs of one benchmark suite at both commits")
    p.add_argument("--after", metavar="COMMIT", help="the commit for --before's comparison (hash prefix; several, "
                   "comma-separated, merge, the newest result of each benchmark winning)")
    args = p.parse_args(argv)
    if args.before or args.after:
        if not (args.before and args.after):
            print("bench-report: --before and --after go together", file=sys.stderr)
            return 2
        where = args.compare_results or args.results
        old, new = results_by_commit(where, args.before), results_by_commit(where, args.after)
        for name, res in ((args.before, old), (args.after, new)):
            if res is None:
                print(f"bench-report: no asv results for commit {name} under {where}", file=sys.stderr)
                return 1
    runs = newest_results(args.results)
    cases, machines = [], []
    for machine, res in runs:
        c = comparisons(res)
        if c:
            machines.append(machine)
            cases.extend(c)
    if not cases:
        print(f"bench-report: no asv results with an 'impl' parameter under {args.results}; run `make bench` "
              "first", file=sys.stderr)
        return 1
    cases = scaled(cases)
    timed = [c for c in cases if not _is_mem(c[0]) and not _is_track(c[0])]
    if not timed:
        print("bench-report: no timing results to chart", file=sys.stderr)
        return 1
    render(timed, args.png, f"paimon_engine vs peers (asv, machine {', '.join(machines)})")
    with open(args.markdown, "w") as f:
        f.write("# Benchmark report\n\nGenerated by `make bench-report` from the newest asv results "
                f"(machine {', '.join(machines)}); ratios are peer time / paimon_engine time. A peer named "
                "`<name>_x<K>` ran on 1/K of the rows and its times are shown multiplied by K; memory and "
                "`track_*` values are as measured.\n\n"
                "![asv comparison](bench-report.png)\n\n" + markdown(cases))
        if args.before:
            origin = f" (results under `{args.compare_results}`)" if args.compare_results else ""
            f.write(f"\n## Before and after\n\nThe engine's results at commit `{args.before}` (before) and "
                    f"`{args.after}` (after){origin}, from the same machine; times are per call, lower is "
                    "better, and an after / before below 1 is a speed-up. Peers' values are from the after run, "
                    "their ratios to the engine from each run.\n\n"
                    + before_after(old, new))
    print(f"bench-report: {len(cases)} comparisons -> {args.png}, {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
