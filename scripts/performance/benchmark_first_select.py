"""Benchmark the first ``benchcast select`` (issue 37, item 7): the call that builds a method's fit
and its calibration, from nothing, for every (dataset, method, budget) cell of the deploy config
(``config/heldout_intervals.yaml``), as a user types it: a new process, ``--data-dir`` a fresh
folder holding only the ingested dataset.

Each cell runs the baseline checkout (``--baseline-src``: another checkout's ``src``, e.g. a git
worktree of the commit before the change) and then this one, back to back on the same machine, so
the two columns are paired. Writes a CSV (dataset, method, budget, before_s, after_s, ratio,
same_items: whether both chose the same items) and prints it as a Markdown table.

Usage: .venv/bin/python scripts/performance/benchmark_first_select.py --baseline-src /path/to/old/src
       [--config config/heldout_intervals.yaml] [--results results] [--budgets 100] [--out first_select.csv]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

from benchcast.data.catalog import load_catalog
from benchcast.studies.heldout_intervals.jobs import Jobs

REPO = Path(__file__).resolve().parents[2]


def first_select(src: Path, results: Path, cell, extra: list[str]) -> tuple[float, str]:
    """Wall seconds of ``benchcast select`` with no fit built, run from ``src``; and its items."""
    with tempfile.TemporaryDirectory(prefix="first-select-") as work:
        data_dir = Path(work) / "results"
        (data_dir / "data").mkdir(parents=True)
        (data_dir / "data" / cell.dataset).symlink_to((results / "data" / cell.dataset).resolve())
        out = Path(work) / "items.csv"
        argv = ["select", cell.dataset, "--method", cell.method, "--budget", str(cell.budget)]
        argv += ["--data-dir", str(data_dir), "--out", str(out), *extra]
        env = {**os.environ, "PYTHONPATH": str(src)}
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "benchcast", *argv], env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            sys.exit(f"{src}: select {cell} failed:\n{proc.stderr}")
        return seconds, out.read_text()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-src", required=True, type=Path, help="the baseline checkout's src folder")
    ap.add_argument("--config", default=REPO / "config" / "heldout_intervals.yaml", type=Path)
    ap.add_argument("--results", default=REPO / "results", type=Path, help="where the datasets are ingested")
    ap.add_argument("--budgets", type=int, nargs="+", help="only these budgets (default: the config's)")
    ap.add_argument("--methods", nargs="+", help="only these methods (default: the config's)")
    ap.add_argument("--out", default="first_select.csv", type=Path)
    args = ap.parse_args()

    config = yaml.safe_load(args.config.read_text())
    catalog = load_catalog(REPO / config.get("catalog", "src/benchcast/data/catalog.yaml"))
    study = config["heldout_intervals"]
    jobs = Jobs(study, catalog)
    folds = ["--folds", str(study.get("folds", 10))]
    rows = []
    for cell in jobs.cells:
        if (args.budgets and cell.budget not in args.budgets) or (args.methods and cell.method not in args.methods):
            continue
        params = jobs.methods[cell.method]
        extra = folds + (["--params", json.dumps(params)] if params else [])
        before, before_items = first_select(args.baseline_src, args.results, cell, extra)
        after, after_items = first_select(REPO / "src", args.results, cell, extra)
        rows.append(
            {
                "dataset": cell.dataset,
                "method": cell.method,
                "budget": cell.budget,
                "before_s": round(before, 1),
                "after_s": round(after, 1),
                "ratio": round(before / after, 2),
                "same_items": before_items == after_items,
            }
        )
        print(rows[-1], file=sys.stderr, flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(args.out, index=False)
    print(table.to_markdown(index=False))


if __name__ == "__main__":
    main()
