"""PCA's ``fold_in`` on the "misses the mark" grids: its estimates against Algorithm 1's joint imputation.

For each (dataset, split, trial, budget) both variants (``k_grid: [2]``, the released code's) fit
on the trial's source models with the same core set and estimate its targets; the table has both
MAEs, the largest difference between the two estimates, and both seconds. Needs the grid's datasets
and splits built: ``snakemake --cores all --until mtm_splits --configfile config/misses_the_mark.yaml``.

    python scripts/performance/pca_fold_in.py --trials 10 --out pca.csv --summary summary.csv
"""

from __future__ import annotations

import time

import grid_trials  # beside this script
import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from benchcast.methods import make_method
from benchcast.oracle import Oracle


def run(S, src, tgt, budget, fold_in, seed):
    t0 = time.perf_counter()
    m = make_method("pca", {"k_grid": [2], "fold_in": fold_in}).fit(S[src], budget, np.random.default_rng(seed))
    est = m.estimate(Oracle(S[tgt], budget), None)
    return est, time.perf_counter() - t0


def main() -> None:
    a = grid_trials.arguments(__doc__.split("\n")[0], trials=10).parse_args()
    rows = []
    for ds, split, S, t, src, tgt in grid_trials.trials(a):
        truth = S[tgt].mean(axis=1)
        for b in (int(x) for x in a.budgets.split(",")):
            joint, joint_s = run(S, src, tgt, b, False, t)
            folded, folded_s = run(S, src, tgt, b, True, t)
            rows.append({"dataset": ds, "split": split, "trial": t, "budget": b, "sources": len(src),
                         "targets": len(tgt), "mae_joint": np.abs(joint - truth).mean(),
                         "mae_fold_in": np.abs(folded - truth).mean(), "max_diff": np.abs(joint - folded).max(),
                         "joint_s": joint_s, "fold_in_s": folded_s})  # fmt: skip
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
