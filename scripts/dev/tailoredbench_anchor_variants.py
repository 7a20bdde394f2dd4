"""How much TailoredBench's AnchorPoints row (Table 6, GSM8K) moves with details the paper leaves
unstated (issue 17): the k-medoids variant, the item embedding and the Kendall's tau variant.

The paper's AnchorPoints code is not released. benchcast's ``anchor_points_weighted`` runs the
AnchorPoints code's steps (item-item Pearson correlation over the source models, FasterPAM from a
random start, every item to its most correlated anchor, cluster-size weights) with FasterPAM's
randomized swap order (a seed passed). This script reruns that row, 100 runs per inference count
on the paper's 75 source / 75 target models, under:

* ``randomized``: benchcast's own :func:`benchcast.methods.anchors.select_anchors` (what Table 6 reports);
* ``in-order``: FasterPAM without a seed, as the AnchorPoints code calls it on one thread (random
  start from NumPy's global generator, swaps in item order);
* ``alternate``: the k-medoids "alternate" (Voronoi iteration) method, scikit-learn-extra's
  default, from a random start;
* ``z-scored``: items embedded as TailoredBench's own code embeds them (each source model's column
  z-scored over items) before the correlation distance,

and reports tau-b (scipy's default, what the study uses) and tau-c beside the MAE.

Usage: .venv/bin/python scripts/dev/tailoredbench_anchor_variants.py [--raw-dir ../shared/raw] [--runs 100]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import kmedoids
import numpy as np
from scipy.spatial.distance import cdist
from scipy.stats import kendalltau

from benchcast.methods.anchors import item_correlations, select_anchors
from benchcast.methods.tailored import zscore_columns

GSM8K = "tailoredbench/BenchmarkDatasets/gsm8k"
VARIANTS = ("randomized", "in-order", "alternate", "z-scored")
PAPER_TAU = {20: 0.786, 25: 0.791, 30: 0.796, 35: 0.800, 40: 0.799}
PAPER_MAE = {20: 0.087, 25: 0.079, 30: 0.073, 35: 0.071, 40: 0.071}


def alternate(dissimilarity: np.ndarray, k: int, rng: np.random.Generator, max_iter: int = 300) -> np.ndarray:
    """Voronoi-iteration k-medoids: assign to the nearest medoid, move each medoid to its
    cluster's most central item, until nothing moves."""
    medoids = rng.choice(len(dissimilarity), k, replace=False)
    for _ in range(max_iter):
        labels = dissimilarity[medoids].argmin(axis=0)
        moved = medoids.copy()
        for c in range(k):
            members = np.flatnonzero(labels == c)
            if len(members):
                moved[c] = members[dissimilarity[np.ix_(members, members)].sum(axis=1).argmin()]
        if np.array_equal(moved, medoids):
            break
        medoids = moved
    return medoids


def anchors(variant: str, source: np.ndarray, k: int, rng: np.random.Generator, diss: np.ndarray):
    """(anchor items, their weights) under ``variant``."""
    if variant == "randomized":
        sel = select_anchors(source, k, rng)
        return sel.anchors, sel.weights
    if variant == "in-order":
        np.random.seed(int(rng.integers(2**32)))
        medoids = np.asarray(kmedoids.fasterpam(diss, k, init="random", n_cpu=1).medoids)
    elif variant == "alternate":
        medoids = alternate(diss, k, rng)
    else:
        medoids = np.asarray(
            kmedoids.fasterpam(diss, k, init="random", random_state=int(rng.integers(2**31 - 1))).medoids
        )
    labels = diss[medoids].argmin(axis=0)
    return medoids, np.bincount(labels, minlength=len(medoids)) / diss.shape[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw-dir", default="../shared/raw")
    ap.add_argument("--runs", type=int, default=100)
    args = ap.parse_args()
    raw = Path(args.raw_dir) / GSM8K
    source = np.load(raw / "source_model_alldata_acc_0.npy", allow_pickle=False).astype(np.float64)
    target = np.load(raw / "target_model_alldata_acc_0.npy", allow_pickle=False).astype(np.float64)
    truth = target.mean(axis=1)
    zscored = zscore_columns(source.T)
    diss = {"z-scored": np.nan_to_num(cdist(zscored, zscored, "correlation"), nan=1.0)}
    diss["in-order"] = diss["alternate"] = diss["randomized"] = 1.0 - item_correlations(source)
    print("variant     budget  tau-b   tau-c   MAE    | paper tau  MAE")
    for variant in VARIANTS:
        for k in PAPER_TAU:
            tau_b, tau_c, mae = [], [], []
            for run in range(args.runs):
                items, weights = anchors(variant, source, k, np.random.default_rng([run, k]), diss[variant])
                est = target[:, items] @ weights
                tau_b.append(kendalltau(est, truth).statistic)
                tau_c.append(kendalltau(est, truth, variant="c").statistic)
                mae.append(np.abs(est - truth).mean())
            print(
                f"{variant:11s} {k:6d}  {np.mean(tau_b):.3f}   {np.mean(tau_c):.3f}   {np.mean(mae):.3f}  "
                f"| {PAPER_TAU[k]:.3f}      {PAPER_MAE[k]:.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
