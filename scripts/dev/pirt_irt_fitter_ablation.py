"""P-IRT in the extrapolation split with three IRT fits of the same source models: where the gap to the paper comes from.

Runs the P-IRT estimator (k-means anchors on [disc, diff], ML abilities, eq. 12) on the first
20 extrapolation trials of DATASET at n = 50 with
  * ``ours``: the workflow's stored trial-0 fit (results/prefit/misses_the_mark/DATASET/extrapolation/irt; with
    the shipped configs that is now the SVI fit, ``fitter: svi`` -- set ``by_split: {}`` to store the MAP fit),
  * ``ours_old_default``: our MAP fit with zero-mean priors and a fixed difficulty scale,
  * ``pyirt_paper``: py-irt (paper's multidim_2pl, 2,000 SVI epochs) on the same source models.
The extrapolation source set is the same in every trial, so one py-irt fit serves all trials.

Make the py-irt fit first (source models only; the others flagged as excluded):
  .venv/bin/python scripts/dev/pirt_irt_fitter_ablation.py DATASET prepare   # /tmp/pexp/DATASET_models.parquet
  .venv-pyirt/bin/python workflow/scripts/irt_validation/pyirt_fit.py --responses results/data/DATASET/responses.parquet \
      --models /tmp/pexp/DATASET_models.parquet --out /tmp/pexp/DATASET_pyirt.npz --epochs 2000 --dims 10 \
      --lr 0.1 --seed 0 --threads 1 --variant paper
Usage: .venv/bin/python scripts/dev/pirt_irt_fitter_ablation.py DATASET
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from benchcast import irt, seeding
from benchcast.data.item_level import load_response_matrix
from benchcast.methods.irt_methods import irt_anchors
from benchcast.trials.runner import read_prefit, splits_by_trial

threadpool_limits(1)
ds = sys.argv[1]
trials, n = 20, 50
m = load_response_matrix(Path(f"results/data/{ds}"), ds)
splits = pd.read_parquet(f"results/splits/misses_the_mark/{ds}/extrapolation.parquet")
if sys.argv[2:] == ["prepare"]:
    models = pd.read_parquet(f"results/data/{ds}/models.parquet")
    models["excluded"] = ~models.model_id.isin(set(splits[(splits.trial == 0) & (splits.role == "source")].model_id))
    Path("/tmp/pexp").mkdir(exist_ok=True)
    models.to_parquet(f"/tmp/pexp/{ds}_models.parquet")
    sys.exit(0)
bt = splits_by_trial(splits, m)
ours = read_prefit(f"results/prefit/misses_the_mark/{ds}/extrapolation/irt", "irt").fits[0]
z = np.load(f"/tmp/pexp/{ds}_pyirt.npz")
old = irt.fit_mirt_2pl(m.scores[bt[0][0]], rng=seeding.rng(0, 0, "irt"), prior_means=False, diff_scale=1.0)
N = m.scores.shape[1]
for name, disc, diff in (
    ("ours", ours.disc, ours.diff),
    ("ours_old_default", old.disc, old.diff),
    ("pyirt_paper", z["disc"], z["diff"]),
):
    errs = []
    for t in range(trials):
        src, tgt = bt[t]
        anchors, _ = irt_anchors(disc, diff, n, seeding.rng(0, t, "irt_anchors"))
        unseen = np.setdiff1d(np.arange(N), anchors)
        Y = m.scores[tgt]
        y = Y[:, anchors]
        th = irt.estimate_ability(y, disc[anchors], diff[anchors])
        p = irt.response_probabilities(th, disc[unseen], diff[unseen]).mean(1)
        errs.append(np.abs(n / N * y.mean(1) + (1 - n / N) * p - Y.mean(1)))
    print(
        ds,
        name,
        f"P-IRT gap {100 * np.mean(np.concatenate(errs)):.2f}",
        "mean |disc|",
        np.linalg.norm(disc, axis=1).mean().round(2),
        "sd diff",
        diff.std().round(2),
    )
