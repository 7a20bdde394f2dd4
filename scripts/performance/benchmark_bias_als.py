"""Benchmark BenchPress's default predictor (Logit Bias ALS, rank 2, lambda 0.1) on the paper's
30 held-out folds: the vectorized solver against a straightforward per-row / per-column loop
(:func:`benchcast.completion.completers.bias_als_reference`), both measured in this run.

Both run the full pipeline (logit transform, standardization, 10-start ensemble, 40 sweeps,
inverse). Reports wall seconds for the 30 folds (one BLAS thread), the speed-up (loop / new)
and the largest |difference| of the held-out predictions in score points (acceptance: <= 1e-6).

Usage: .venv/bin/python scripts/performance/benchmark_bias_als.py [--raw-dir ../shared/raw] [--repeats 1]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from benchcast.completion import completers
from benchcast.completion.evaluation import evaluate_predictor, load_folds
from benchcast.completion.transforms import standardize, unstandardize
from benchcast.data.aggregate import read_benchpress


def _predictor(solver):
    def predict(train):
        st = standardize(train, "logit")
        return unstandardize(st, solver(st.z, rank=2, lam=0.1))

    return predict


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw-dir", default="../shared/raw")
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    raw = Path(args.raw_dir) / "benchpress"
    M = read_benchpress(raw / "website" / "data.json").to_matrix().to_numpy()
    folds = load_folds(raw / "benchpress" / "evaluation" / "folds" / "folds_s10_f3_bs42_ms1.json", M.shape)
    results = {}
    with threadpool_limits(1):
        for label, solver in (("loop", completers.bias_als_reference), ("vectorized", completers.bias_als)):
            best = np.inf
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                cells = evaluate_predictor(M, folds, _predictor(solver))
                best = min(best, time.perf_counter() - t0)
            results[label] = (best, cells["predicted"].to_numpy())
    t_loop, p_loop = results["loop"]
    t_vec, p_vec = results["vectorized"]
    print(f"matrix {M.shape}, {len(folds)} folds, {sum(len(f.cells) for f in folds)} held-out cells")
    print(f"loop (per-row/column solves)   {t_loop:8.2f} s")
    print(f"vectorized (batched solves)    {t_vec:8.2f} s")
    print(f"speed-up                       {t_loop / t_vec:8.1f}x")
    print(f"max |prediction difference|    {np.max(np.abs(p_loop - p_vec)):.2e} score points")


if __name__ == "__main__":
    main()
