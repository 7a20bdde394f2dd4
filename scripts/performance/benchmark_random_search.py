"""Random-Search-Learn on the real leaderboards: exhaustive search vs exact pruning, same run.

For each (dataset, split, n) case, fits Random-Search-Learn (10,000 candidates, the paper's
setting) on the first ``--trials`` trials of the workflow's splits twice -- ``prune=False``
(the exhaustive search: a leave-one-out ``RidgeCV`` for every candidate; the baseline) and
``prune=True`` (the default: fixed-alpha lower bounds, ``RidgeCV`` only where the bound can
still win) -- and reports CPU seconds per trial, the speed-up and whether both picked the
same core set. One BLAS thread. Needs the workflow's ``results/data`` and
``results/splits/misses_the_mark`` (run the misses_the_mark config first).

Usage: .venv/bin/python scripts/performance/benchmark_random_search.py [--trials 2] [--cases musr:interpolation:200 ...]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast import seeding
from benchcast.blas import single_threaded
from benchcast.data.item_level import load_response_matrix
from benchcast.methods import make_method
from benchcast.trials.runner import splits_by_trial

DEFAULT_CASES = [
    "musr:interpolation:200",
    "ifeval:extrapolation:200",
    "openllm_math:interpolation:100",
    "qnli:interpolation:100",
    "gsm:interpolation:200",
    "commonsense:extrapolation:50",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--cases", nargs="+", default=DEFAULT_CASES, help="dataset:split:n")
    ap.add_argument("--results", type=Path, default=Path("results"))
    args = ap.parse_args()
    single_threaded()
    print(
        "| dataset | split | n | exhaustive CPU-s/trial | pruned CPU-s/trial | speed-up | LOO fits (pruned) | same core sets |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for case in args.cases:
        ds, split, n = case.split(":")
        n = int(n)
        matrix = load_response_matrix(args.results / "data" / ds, ds)
        by_trial = splits_by_trial(
            pd.read_parquet(args.results / "splits" / "misses_the_mark" / ds / f"{split}.parquet"), matrix
        )
        seconds, cores, scored = {}, {}, []
        for prune in (False, True):
            t0 = time.process_time()
            cores[prune] = []
            for trial in sorted(by_trial)[: args.trials]:
                m = make_method("random_search_learn", {"prune": prune})
                m.fit(matrix.scores[by_trial[trial][0]], n, seeding.rng(0, trial, "method:random_search_learn"))
                cores[prune].append(m.coreset_)
                if prune:
                    scored.append(m.candidates_scored_)
            seconds[prune] = (time.process_time() - t0) / args.trials
        same = all(np.array_equal(a, b) for a, b in zip(cores[False], cores[True]))
        print(
            f"| {ds} | {split} | {n} | {seconds[False]:.2f} | {seconds[True]:.2f} | "
            f"{seconds[False] / seconds[True]:.1f}x | {np.mean(scored):.0f} / 10,000 | {same} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
