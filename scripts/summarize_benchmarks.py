"""Wall time and peak memory per method from the Snakemake ``benchmark:`` files of a "misses the mark" run.

    python scripts/summarize_benchmarks.py [benchmarks/misses_the_mark/run] [config.yaml]

Prints one row per method, plus
- ``irt``: the shared per-trial IRT fits (and k-means anchors) of P-IRT and GP-IRT, and
- ``<Lasso label> path``: the per-trial regularisation paths every Lasso budget reads, both from
  the sibling ``prefit/`` benchmark folder (``prefit/<dataset>/<split>/<fit>.tsv``);
- ``workflow (ingest, splits, tables)``: every other benchmarked job of the grid (ingest, splits,
  metrics, similarity).

Columns: jobs, summed wall seconds and CPU seconds (= CPU-bound job time; the workflow's wall time on
k cores is roughly this sum / k), the longest job, the peak resident memory of any job (max_rss, MB)
and each row's share of the summed job time. With a config, only that config's (dataset, split,
method, n) jobs count.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import yaml

WORKFLOW_ROW = "workflow (ingest, splits, tables)"


def _row(f: Path, dataset: str, split: str, method: str, n: int) -> dict:
    b = pd.read_csv(f, sep="\t").iloc[-1]
    return {
        "dataset": dataset,
        "split": split,
        "method": method,
        "n": n,
        "seconds": float(b["s"]),
        "cpu_seconds": float(b["cpu_time"]),
        "max_rss_mb": float(b["max_rss"]),
    }


def main(root: str = "benchmarks/misses_the_mark/run", config: str | None = None) -> pd.DataFrame:
    run_root = Path(root)
    mtm_root = run_root.parent
    keep = labels = config_datasets = None
    if config:
        mtm = yaml.safe_load(open(config))["misses_the_mark"]
        labels = {m.get("label", m["name"]) for m in mtm["methods"]}
        config_datasets = set(mtm["datasets"])
        keep = {
            (d, s, label, int(n))
            for d in mtm["datasets"]
            for s in mtm["splits"]
            for label in labels
            for n in mtm["budgets"]
        }
    rows = []
    for f in sorted(run_root.rglob("n=*.tsv")):
        dataset, split, method = f.parts[-4], f.parts[-3], f.parts[-2]
        n = int(f.stem.split("=")[1])
        if keep is None or (dataset, split, method, n) in keep:
            rows.append(_row(f, dataset, split, method, n))
    if not rows:
        raise SystemExit(
            f"{run_root}: no run-job benchmark files (n=*.tsv) -- run the workflow first, "
            "or pass the folder that holds benchmarks/<config>/run"
        )
    datasets = {(r["dataset"], r["split"]) for r in rows}
    for f in sorted((mtm_root / "prefit").glob("*/*/*.tsv")):
        dataset, split, fit = f.parts[-3], f.parts[-2], f.stem
        if (dataset, split) not in datasets:
            continue
        if fit == "irt":
            rows.append(_row(f, dataset, split, "irt", 0))
        elif labels is None or fit in labels:
            rows.append(_row(f, dataset, split, f"{fit} path", 0))
    # The grid's remaining jobs: splits, metrics and similarity of this config, ingest of its datasets.
    workflow_files = sorted((mtm_root / "splits").glob("*/*.tsv"))
    workflow_files = [f for f in workflow_files if (f.parts[-2], f.stem) in datasets]
    workflow_files += [f for f in (mtm_root / "metrics.tsv", mtm_root / "similarity.tsv") if f.exists()]
    workflow_files += [
        f
        for f in sorted((mtm_root.parent / "ingest").glob("*.tsv"))
        if config_datasets is None or f.stem in config_datasets
    ]
    rows += [_row(f, "", "", WORKFLOW_ROW, 0) for f in workflow_files]
    df = pd.DataFrame(rows)
    summary = df.groupby("method").agg(
        jobs=("seconds", "size"),
        total_seconds=("seconds", "sum"),
        cpu_seconds=("cpu_seconds", "sum"),
        longest_job_seconds=("seconds", "max"),
        peak_rss_mb=("max_rss_mb", "max"),
    )
    summary["share_of_total"] = summary["total_seconds"] / summary["total_seconds"].sum()
    return summary.sort_values("total_seconds", ascending=False)


if __name__ == "__main__":
    out = main(*sys.argv[1:])
    print(out.to_string(float_format=lambda v: f"{v:.2f}"))
    print(
        f"\nall jobs: {out.jobs.sum()}, {out.total_seconds.sum():.0f} s of job time "
        f"(~{out.total_seconds.sum() / 2 / 60:.0f} min wall on 2 cores at full packing)"
    )
