"""Wall time and peak memory per method from the Snakemake ``benchmark:`` files of the run jobs.

    python scripts/summarize_benchmarks.py [benchmarks/misses_the_mark/run] [config.yaml]

Prints one row per method (plus ``irt``: the shared per-trial IRT fits of P-IRT and GP-IRT, from
the sibling ``irt/`` benchmark folder): jobs, summed wall seconds and CPU seconds (= CPU-bound job time; the workflow's
wall time on k cores is roughly this sum / k), the longest job, and the peak resident memory of
any job (max_rss, MB). With a config, only that config's (dataset, split, method, n) jobs count.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import yaml


def main(root: str = "benchmarks/misses_the_mark/run", config: str | None = None) -> pd.DataFrame:
    keep = None
    if config:
        mtm = yaml.safe_load(open(config))["misses_the_mark"]
        keep = {(d, s, m.get("label", m["name"]), int(n)) for d in mtm["datasets"] for s in mtm["splits"]
                for m in mtm["methods"] for n in mtm["budgets"]}
    rows = []
    for f in sorted(Path(root).rglob("n=*.tsv")):
        dataset, split, method = f.parts[-4], f.parts[-3], f.parts[-2]
        n = int(f.stem.split("=")[1])
        if keep is not None and (dataset, split, method, n) not in keep:
            continue
        b = pd.read_csv(f, sep="\t").iloc[-1]
        rows.append({"dataset": dataset, "split": split, "method": method, "n": n,
                     "seconds": float(b["s"]), "cpu_seconds": float(b["cpu_time"]), "max_rss_mb": float(b["max_rss"])})
    datasets = {(r["dataset"], r["split"]) for r in rows}
    for f in sorted((Path(root).parent / "irt").glob("*/*.tsv")):
        if keep is not None and (f.parts[-2], f.stem) not in datasets:
            continue
        b = pd.read_csv(f, sep="\t").iloc[-1]
        rows.append({"dataset": f.parts[-2], "split": f.stem, "method": "irt", "n": 0,
                     "seconds": float(b["s"]), "cpu_seconds": float(b["cpu_time"]), "max_rss_mb": float(b["max_rss"])})
    df = pd.DataFrame(rows)
    summary = df.groupby("method").agg(jobs=("seconds", "size"), total_seconds=("seconds", "sum"),
                                       cpu_seconds=("cpu_seconds", "sum"),
                                       longest_job_seconds=("seconds", "max"), peak_rss_mb=("max_rss_mb", "max"))
    summary["share_of_total"] = summary["total_seconds"] / summary["total_seconds"].sum()
    return summary.sort_values("total_seconds", ascending=False)


if __name__ == "__main__":
    out = main(*sys.argv[1:])
    print(out.to_string(float_format=lambda v: f"{v:.2f}"))
    print(f"\nall methods: {out.total_seconds.sum():.0f} s of job time "
          f"(~{out.total_seconds.sum() / 2 / 60:.0f} min wall on 2 cores)")
