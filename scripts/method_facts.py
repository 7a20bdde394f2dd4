"""Write the measured facts `benchcast methods` shows: each method's held-out MAE and interval
coverage per dataset and budget, and the seconds its first fit took, from the held-out test of the
new-model intervals (`snakemake heldout_intervals --cores all --configfile config/heldout_intervals.yaml`).

Reads ``<tables>/heldout.csv`` (dataset, method, budget, models, coverage, mean_width,
conformal_coverage, conformal_width, mae) and, where it is there, ``<tables>/speed.csv`` (fit_seconds,
calibration_seconds), and writes ``src/benchcast/new_model/method_facts.json`` (package data) with a
``provenance`` block: each source file's path, sha256, rows and modification time, the date, the
interval level and this command. The only way that file is made: rerun this after the test has run.

Usage: python scripts/method_facts.py [--tables results/tables/heldout_intervals] [--level 0.9]
       [--out src/benchcast/new_model/method_facts.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import shlex
import sys
from pathlib import Path

import pandas as pd

from benchcast.data.io import write_text_atomic

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TABLES = "results/tables/heldout_intervals"
DEFAULT_OUT = "src/benchcast/new_model/method_facts.json"
RUN_TEST = "snakemake heldout_intervals --cores all --configfile config/heldout_intervals.yaml"
HELDOUT_COLUMNS = ("dataset", "method", "budget", "models", "coverage", "mean_width", "mae")


def source(path: Path, rows: int) -> dict:
    stamp = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    inside = path.resolve().is_relative_to(REPO)  # a path outside the repository means nothing to a reader
    shown = path.resolve().relative_to(REPO).as_posix() if inside else f"<outside the repository>/{path.name}"
    return {"file": shown, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "rows": rows, "modified": stamp}


def facts(tables: Path, level: float, command: str) -> dict:
    heldout_csv, speed_csv = tables / "heldout.csv", tables / "speed.csv"
    if not heldout_csv.is_file():
        sys.exit(f"{heldout_csv}: not found. Fix: run the held-out test first ({RUN_TEST})")
    held = pd.read_csv(heldout_csv)
    missing = [c for c in HELDOUT_COLUMNS if c not in held.columns]
    if missing:
        sys.exit(f"{heldout_csv}: missing column(s) {missing}. Fix: regenerate it with this benchcast's held-out test")
    sources = [source(heldout_csv, len(held))]
    methods: dict[str, dict] = {}
    for r in held.sort_values(["method", "dataset", "budget"]).itertuples(index=False):
        cell = {"dataset": r.dataset, "budget": int(r.budget), "models": int(r.models)}
        cell |= {k: round(float(getattr(r, k)), 4) for k in ("mae", "coverage", "mean_width")}
        methods.setdefault(r.method, {"heldout": [], "first_fit_seconds": []})["heldout"].append(cell)
    if speed_csv.is_file():
        speed = pd.read_csv(speed_csv)
        sources.append(source(speed_csv, len(speed)))
        for r in speed.sort_values(["method", "dataset", "budget"]).itertuples(index=False):
            if r.method in methods:
                seconds = round(float(r.fit_seconds) + float(r.calibration_seconds), 1)
                methods[r.method]["first_fit_seconds"].append(
                    {"dataset": r.dataset, "budget": int(r.budget), "seconds": seconds}
                )
    return {
        "provenance": {
            "what": "the held-out test of the new-model intervals: every model of each dataset plays a new model "
            "once (docs/studies/heldout_intervals.md); mae and mean_width on the 0-1 scale, coverage of the "
            f"{level:.0%} intervals (the command line's default, --interval auto); first_fit_seconds: the fit "
            "and its calibration (the config's folds) as the test's job built them",
            "sources": sources,
            "level": level,
            "generated": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
            "command": command,
        },
        "methods": methods,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tables", default=DEFAULT_TABLES, help=f"the held-out test's tables (default {DEFAULT_TABLES})"
    )
    parser.add_argument("--level", type=float, default=0.9, help="the level of the test's intervals (default 0.9)")
    parser.add_argument("--out", default=DEFAULT_OUT, help=f"the file to write (default {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    given = sys.argv[1:] if argv is None else argv
    shown = [a if not Path(a).is_absolute() else "<outside the repository>" for a in given]
    command = shlex.join(["python", "scripts/method_facts.py", *shown])
    doc = facts(Path(args.tables), args.level, command)
    out = Path(args.out)
    write_text_atomic(out, json.dumps(doc, indent=1, sort_keys=True) + "\n")  # a reader never sees half of it
    cells = sum(len(m["heldout"]) for m in doc["methods"].values())
    print(
        f"wrote {out}: {len(doc['methods'])} methods, {cells} held-out cells, from {doc['provenance']['sources'][0]['file']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
