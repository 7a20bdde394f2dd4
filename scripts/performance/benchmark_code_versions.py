"""Is this code slower than an older version? Time the grid's heaviest pieces with both, side by side.

Wall times of the complete "misses the mark" grid are only comparable within one session (the same
machine type runs the same jobs up to 2x slower on another day), so a speed claim against an old
measurement needs the old code re-timed next to the new one. This runs, alternately for each code,
in fresh processes with one BLAS thread and the same data, splits and seed:

* ``irt``: the SVI IRT fit with GP-IRT's bias refit of the first trials (musr extrapolation by default);
* ``random_search_learn``, ``pca``, ``anchor_points_predictor``, ``tailoredbench``: ``run_job`` on the
  first trials.

::

    git clone -q . /tmp/old && git -C /tmp/old checkout -q 71bd043
    python scripts/performance/benchmark_code_versions.py --baseline /tmp/old/src --run <folder with results/data and results/splits>

The run folder needs ``results/data/<dataset>`` and ``results/splits/misses_the_mark/<dataset>/<split>.parquet``
(any run of the grid, or ``snakemake results/splits/misses_the_mark/musr/extrapolation.parquet``).
Prints seconds per code and the ratio (this code / baseline) for each piece.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from paired import alternate

HERE = Path(__file__).resolve().parents[2] / "src"
RUN_PARAMS = {
    "random_search_learn": {"num_search": 10000, "train_fraction": 0.75},
    "pca": {"k_grid": [2, 5, 10, 20], "cv_fraction": 0.25, "max_iter": 100, "tol": 0.0001},
    "anchor_points_predictor": {},
    # the grid's setting (config/misses_the_mark.yaml): full PAM up to 1,500 items, CLARA above
    "tailoredbench": {"clara": {"min_items": 1500, "sample": 750, "iterations": 10}},
}


def _time_piece(piece: str, run: Path, dataset: str, split: str, trials: int) -> float:
    """Seconds of one piece with the benchcast first on sys.path (child process)."""
    import pandas as pd
    from threadpoolctl import threadpool_limits

    from benchcast.data.item_level import load_response_matrix
    from benchcast.trials.runner import run_job, splits_by_trial

    matrix = load_response_matrix(run / "results" / "data" / dataset, dataset)
    splits = pd.read_parquet(run / "results" / "splits" / "misses_the_mark" / dataset / f"{split}.parquet")
    with threadpool_limits(1):
        if piece == "irt":
            from benchcast.methods.irt_methods import fit_irt_trials

            by_trial = splits_by_trial(splits, matrix)
            by_trial = {t: by_trial[t] for t in sorted(by_trial)[:trials]}
            settings = {"dims": 10, "fitter": "svi", "dtype": "float32"}
            t0 = time.perf_counter()
            fit_irt_trials(matrix.scores, by_trial, 0, settings, True, share_identical_sources=False)
            return time.perf_counter() - t0
        params = {**RUN_PARAMS[piece], "max_trials": trials}
        t0 = time.perf_counter()
        run_job(matrix, splits, piece, params, 50, 0)
        return time.perf_counter() - t0


def _child(args) -> None:
    print(json.dumps(_time_piece(args.piece, Path(args.run), args.dataset, args.split, args.trials)))


def _measure(src: Path, piece: str, args) -> float:
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, __file__, "--child", "--piece", piece, "--run", str(args.run)]
    cmd += ["--dataset", args.dataset, "--split", args.split, "--trials", str(args.trials)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", type=Path, help="the older code's src folder")
    p.add_argument("--run", type=Path, required=True, help="folder holding results/data and results/splits")
    p.add_argument("--dataset", default="musr")
    p.add_argument("--split", default="extrapolation")
    p.add_argument("--trials", type=int, default=3, help="trials per piece (run pieces use 10x as many)")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--pieces", nargs="+", default=["irt", *RUN_PARAMS])
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--piece", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        _child(args)
        return
    if args.baseline is None:
        p.error("--baseline is required")
    print(f"{'piece':<26} {'baseline s':>11} {'this code s':>12} {'ratio':>6}")
    for piece in args.pieces:
        piece_args = argparse.Namespace(**{**vars(args), "trials": args.trials * (1 if piece == "irt" else 10)})
        base, ours = alternate(
            lambda: _measure(args.baseline, piece, piece_args), lambda: _measure(HERE, piece, piece_args), args.repeats
        )
        b, o = min(base), min(ours)
        print(f"{piece:<26} {b:>11.2f} {o:>12.2f} {o / b:>6.2f}")


if __name__ == "__main__":
    main()
