"""PAM's compiled swaps, this code against an older checkout's, on the clusterings of a grid job.

TailoredBench's jobs in the "misses the mark" grid spend most of their time in PAM's swaps (one
N-set per target, a G-set per trial). This runs the first ``--trials`` trials of one grid job
(``--dataset``, ``--split``, ``--n``, the grid's settings) once to record the arguments of every
PAM call, then times the compiled swaps of both codes on those same calls, alternately
``--repeats`` times in this process (the older checkout's ``pam_numba.py`` loaded from its file),
and checks that both return the same medoids, labels, cost and swaps for every call.

    git worktree add /tmp/old <rev>
    python scripts/performance/pam_engine_versions.py --baseline /tmp/old/src --dataset musr --n 200

Needs the workflow's ``results/data/<dataset>`` and ``results/splits/misses_the_mark/<dataset>``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from paired import alternate
from threadpoolctl import threadpool_limits

import benchcast.methods.pam as pam
from benchcast.data.item_level import load_response_matrix
from benchcast.trials.runner import run_job

GRID_PARAMS = {"clara": {"min_items": 1500, "sample": 750, "iterations": 10}}  # config/misses_the_mark.yaml


def record_calls(run: Path, dataset: str, split: str, n: int, trials: int) -> list[tuple]:
    """The prepared arguments of every PAM call the job's first ``trials`` trials make."""
    calls, original = [], pam._pam_swaps_numpy

    def spy(dist, med, n_fixed, weights, order, max_swaps, tol):
        calls.append((dist.copy(), med.copy(), n_fixed, weights.copy(), order.copy(), max_swaps, tol))
        return original(dist, med, n_fixed, weights, order, max_swaps, tol)

    real = pam.pam_fixed

    def numpy_engine(*args, **kwargs):  # record through the numpy engine, so neither timed code runs here
        return real(*args, **{**kwargs, "engine": "numpy"})

    matrix = load_response_matrix(run / "results" / "data" / dataset, dataset)
    splits = pd.read_parquet(run / "results" / "splits" / "misses_the_mark" / dataset / f"{split}.parquet")
    pam._pam_swaps_numpy, pam.pam_fixed = spy, numpy_engine
    try:
        run_job(matrix, splits, "tailoredbench", {**GRID_PARAMS, "max_trials": trials}, n, 0)
    finally:
        pam._pam_swaps_numpy, pam.pam_fixed = original, real
    return calls


def time_swaps(swaps, calls) -> tuple[float, list]:
    out = []
    t0 = time.process_time()
    for dist, med, n_fixed, weights, order, max_swaps, tol in calls:
        m = med.copy()
        out.append((m, *swaps(dist, m, n_fixed, weights, order, max_swaps, tol)))
    return time.process_time() - t0, out


def same(a, b) -> bool:
    return all(
        np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) and x[2] == y[2] and x[3] == y[3]
        for x, y in zip(a, b)
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", type=Path, required=True, help="the older code's src folder")
    p.add_argument("--run", type=Path, default=Path("."), help="folder holding results/data and results/splits")
    p.add_argument("--dataset", default="musr")
    p.add_argument("--split", default="interpolation")
    p.add_argument("--n", type=int, default=200)
    p.add_argument("--trials", type=int, default=1)
    p.add_argument("--repeats", type=int, default=2)
    args = p.parse_args()
    # a fresh numba cache: the baseline module, loaded from its file, cannot be re-imported from one
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="pam-versions-")
    from benchcast.methods.pam_numba import _pam_swaps

    spec = importlib.util.spec_from_file_location(
        "baseline_pam_numba", args.baseline / "benchcast" / "methods" / "pam_numba.py"
    )
    baseline = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(baseline)
    with threadpool_limits(1):
        calls = record_calls(args.run, args.dataset, args.split, args.n, args.trials)
        time_swaps(baseline._pam_swaps, calls[:2]), time_swaps(_pam_swaps, calls[:2])  # compile/load both
        base, ours = alternate(
            lambda: time_swaps(baseline._pam_swaps, calls), lambda: time_swaps(_pam_swaps, calls), args.repeats
        )
    b, o = min(t for t, _ in base), min(t for t, _ in ours)
    agree = all(same(base[0][1], r) for _, r in base + ours)
    print(
        f"{args.dataset} {args.split} n={args.n}: {len(calls)} clusterings, baseline {b:.2f} s, "
        f"this code {o:.2f} s, ratio {o / b:.2f}, same results: {'yes' if agree else 'NO'}"
    )


if __name__ == "__main__":
    main()
