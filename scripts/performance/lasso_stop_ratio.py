"""Lasso's ``stop_ratio`` on the "misses the mark" grids: how many selections and how much error it changes.

For every trial of every (dataset, split) (trials with the same source models share one path, as
the grid's prefit does) the whole regularisation path is computed once; each budget's selection by
the paper's rule is compared with the selection under ``stop_ratio`` (the rule on the path's first
alphas, which is what the stopped path computes, bit for bit), and both are scored by the MAE on the
trial's targets. ``path_s`` is the whole path's seconds, ``stop_s_<r>`` those of the path stopped at
``r x`` the largest budget. Needs the grid's datasets and splits built:
``snakemake --cores all --until mtm_splits --configfile config/misses_the_mark.yaml``.

    python scripts/performance/lasso_stop_ratio.py --trials 100 --out lasso.csv --summary summary.csv
"""

from __future__ import annotations

import time

import grid_trials  # beside this script
import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

import benchcast.methods.lasso as L


def main() -> None:
    ap = grid_trials.arguments(__doc__.split("\n")[0], trials=100)
    ap.add_argument("--ratios", default="1.5,2,3")
    a = ap.parse_args()
    budgets = [int(b) for b in a.budgets.split(",")]
    ratios = [float(r) for r in a.ratios.split(",")]
    rows = []
    real = L.lasso_path
    seen = set()
    for ds, split, S, t, src, tgt in grid_trials.trials(a):
        if (ds, split, src.tobytes()) in seen:
            continue
        seen.add((ds, split, src.tobytes()))
        calls = []  # (seconds, non-zero weights) of each solver call along the path

        def timed(*args, **kw):
            t0 = time.perf_counter()
            out = real(*args, **kw)
            calls.append((time.perf_counter() - t0, int((out[1][:, 0] != 0).sum())))
            return out

        L.lasso_path = timed
        t0 = time.perf_counter()
        path = L.LassoMethod().path(S[src])
        total = time.perf_counter() - t0
        L.lasso_path = real
        outside = total - sum(s for s, _ in calls)
        truth = S[tgt].mean(axis=1)
        for b in budgets:
            whole = L.LassoMethod().select(*path, b)
            err = np.abs(S[tgt][:, whole.coreset] @ whole.coef + whole.intercept - truth).mean()
            row = {"dataset": ds, "split": split, "trial": t, "budget": b, "models": len(src),
                   "items": S.shape[1], "path_s": total, "mae": err}  # fmt: skip
            for r in ratios:
                m = L.LassoMethod(stop_ratio=r)
                sel = m.select(*path, b)
                cap, spent = m.max_nnz(max(budgets)), outside
                for s, nnz in calls:
                    spent += s
                    if nnz > cap:
                        break
                row[f"same_{r:g}"] = bool(sel.alpha == whole.alpha and np.array_equal(sel.coreset, whole.coreset))
                row[f"mae_{r:g}"] = np.abs(S[tgt][:, sel.coreset] @ sel.coef + sel.intercept - truth).mean()
                row[f"stop_s_{r:g}"] = spent
            rows.append(row)
    table = pd.DataFrame(rows)
    table.to_csv(a.out, index=False)
    summary(table, ratios).to_csv(a.summary, index=False)


def summary(table: pd.DataFrame, ratios) -> pd.DataFrame:
    """Per (dataset, split) and overall: selections, how many differ, MAE and path seconds."""
    paths = table.drop_duplicates(["dataset", "split", "trial"])
    out = []
    for key, g in [*table.groupby(["dataset", "split"]), (("all", "all"), table)]:
        p = paths if key == ("all", "all") else paths[(paths.dataset == key[0]) & (paths.split == key[1])]
        row = {"dataset": key[0], "split": key[1], "selections": len(g), "paths": len(p), "mae": g.mae.mean(),
               "path_s": p.path_s.sum()}  # fmt: skip
        for r in ratios:
            row[f"differ_{r:g}"] = int((~g[f"same_{r:g}"]).sum())
            row[f"mae_{r:g}"] = g[f"mae_{r:g}"].mean()
            row[f"stop_s_{r:g}"] = p[f"stop_s_{r:g}"].sum()
        out.append(row)
    return pd.DataFrame(out).round(6)


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
