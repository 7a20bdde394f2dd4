"""PCA's ``fold_in`` on the "misses the mark" grids: its estimates against Algorithm 1's joint imputation.

For each (dataset, split, trial, budget) both variants (``k_grid: [2]``, the released code's) fit
on the trial's source models with the same core set and estimate its targets; the table has both
MAEs, the largest difference between the two estimates, and both seconds. Needs the grid's datasets
and splits built: ``snakemake --cores all --until mtm_splits --configfile config/misses_the_mark.yaml``.

    python scripts/performance/pca_fold_in.py --trials 10 --out pca.csv --summary summary.csv
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from benchcast.data.item_level import load_response_matrix
from benchcast.methods import make_method
from benchcast.oracle import Oracle
from benchcast.trials.runner import splits_by_trial

DATASETS = "commonsense,gsm,legalbench,math,mmlu,mrpc,rte,qnli,ifeval,openllm_math,arc_challenge,musr"


def run(S, src, tgt, budget, fold_in, seed):
    t0 = time.perf_counter()
    m = make_method("pca", {"k_grid": [2], "fold_in": fold_in}).fit(S[src], budget, np.random.default_rng(seed))
    est = m.estimate(Oracle(S[tgt], budget), None)
    return est, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=DATASETS)
    ap.add_argument("--splits", default="interpolation,extrapolation")
    ap.add_argument("--budgets", default="50,100,200")
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--results", default="results")
    ap.add_argument("--out", required=True)
    ap.add_argument("--summary", required=True)
    a = ap.parse_args()
    rows = []
    for ds in a.datasets.split(","):
        matrix = load_response_matrix(f"{a.results}/data/{ds}")
        S = matrix.scores
        for split in a.splits.split(","):
            by_trial = splits_by_trial(
                pd.read_parquet(f"{a.results}/splits/misses_the_mark/{ds}/{split}.parquet"), matrix
            )
            for t in sorted(by_trial)[: a.trials]:
                src, tgt = by_trial[t]
                truth = S[tgt].mean(axis=1)
                for b in (int(x) for x in a.budgets.split(",")):
                    joint, joint_s = run(S, src, tgt, b, False, t)
                    folded, folded_s = run(S, src, tgt, b, True, t)
                    rows.append({"dataset": ds, "split": split, "trial": t, "budget": b, "sources": len(src),
                                 "targets": len(tgt), "mae_joint": np.abs(joint - truth).mean(),
                                 "mae_fold_in": np.abs(folded - truth).mean(), "max_diff": np.abs(joint - folded).max(),
                                 "joint_s": joint_s, "fold_in_s": folded_s})  # fmt: skip
            print(ds, split, "done", flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(a.out, index=False)
    groups = [*table.groupby(["dataset", "split"]), *(((("all", s),), g) for s, g in table.groupby("split"))]
    summary = pd.DataFrame(
        [
            {
                "dataset": key[0],
                "split": key[1],
                "runs": len(g),
                "mae_joint": g.mae_joint.mean(),
                "mae_fold_in": g.mae_fold_in.mean(),
                "max_diff": g.max_diff.max(),
                "joint_s": g.joint_s.sum(),
                "fold_in_s": g.fold_in_s.sum(),
            }  # fmt: skip
            for key, g in ((k if len(k) == 2 else k[0], g) for k, g in groups)
        ]
    ).round(6)
    summary.to_csv(a.summary, index=False)
    print(summary.to_string())


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
