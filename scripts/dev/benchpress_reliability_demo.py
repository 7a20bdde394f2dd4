#!/usr/bin/env python3
"""Reproduce BenchPress's reliability estimators (Section 6.2, Appendix E.2) on the 30 folds.

Steps (each timed):

1. held-out predictions of the 15 configurations (selected Logit Bias ALS lambda 0.1, the
   lambda stack and the 12 strong full-coverage configurations) on the paper's 30 folds,
   with :func:`benchcast.completion.pipeline.predict_scores`;
2. the per-cell feature table (:func:`benchcast.completion.reliability.fold_features`);
3. the three leave-fold-out risk models (ensemble spread, matrix support, hybrid);
4. risk-coverage MedAE, conformal 90% intervals and the trust calibration, printed next to
   the paper's numbers (Section 6.2 text; website ``meta.prediction_interval``).

Nothing is written except, with ``--cache``, the fold predictions to a file under /tmp.

Usage (repo root):
    .venv/bin/python scripts/dev/benchpress_reliability_demo.py [--raw-dir ../shared/raw]
        [--cache /tmp/benchpress_reliability_preds.parquet] [--n-jobs 2] [--grid text|code]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from benchcast.completion.evaluation import evaluate_predictor, load_folds, validate_folds
from benchcast.completion.reliability import (DEFAULT_GRID, LAMBDA_STACK, PAPER_CODE_GRID, SELECTED_CONFIG,
                                              STRONG_STACK, conformal_intervals, fold_features,
                                              leave_fold_out_risk, risk_coverage, trust_calibration)
from benchcast.data.aggregate import read_benchpress

PAPER_HYBRID_MEDAE = {0.6: 3.10, 0.4: 2.51, 0.2: 1.83}    # Section 6.2 "Results"
PAPER_SELECTED = {  # Appendix E.2: folds choosing (16,), (32,), (64, 32)
    "hybrid": {"mlp_16": 7, "mlp_32": 15, "mlp_64_32": 8},
    "ensemble": {"mlp_16": 12, "mlp_32": 5, "mlp_64_32": 13},
    "support": {"mlp_32": 3, "mlp_64_32": 27},
}


def fold_predictions(M, folds, cache: Path | None) -> dict[str, pd.DataFrame]:
    configs = list(dict.fromkeys([SELECTED_CONFIG, *LAMBDA_STACK, *STRONG_STACK]))
    if cache is not None and cache.exists():
        df = pd.read_parquet(cache)
        if set(df["config"].unique()) == {c.key for c in configs}:
            print(f"  (fold predictions read from {cache})")
            return {k: g.drop(columns="config").reset_index(drop=True) for k, g in df.groupby("config")}
    out = {}
    for c in configs:
        t0 = time.perf_counter()
        out[c.key] = evaluate_predictor(M, folds, c.predict)
        cov = np.isfinite(out[c.key]["predicted"]).mean()
        print(f"  {c.key:38s} {time.perf_counter() - t0:6.1f} s  coverage {cov:.4f}")
    if cache is not None:
        pd.concat([g.assign(config=k) for k, g in out.items()], ignore_index=True).to_parquet(cache)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--raw-dir", default="../shared/raw")
    ap.add_argument("--cache", default=None, help="optional parquet file under /tmp for the fold predictions")
    ap.add_argument("--n-jobs", type=int, default=2, help="folds fitted in parallel")
    ap.add_argument("--grid", choices=["text", "code"], default="text",
                    help="text: ridge + 3 MLPs (Appendix E.2); code: the released code's MLP-only grid")
    args = ap.parse_args()
    cache = Path(args.cache) if args.cache else None
    if cache is not None and not str(cache.resolve()).startswith("/tmp/"):
        ap.error("--cache must be a file under /tmp")
    grid = DEFAULT_GRID if args.grid == "text" else PAPER_CODE_GRID
    raw = Path(args.raw_dir) / "benchpress"
    data_json = raw / "website" / "data.json"
    M = read_benchpress(data_json).to_matrix().to_numpy()
    folds = load_folds(raw / "benchpress" / "evaluation" / "folds" / "folds_s10_f3_bs42_ms1.json", M.shape)
    validate_folds(folds, np.isfinite(M))
    paper = json.loads(data_json.read_text())["meta"]["prediction_interval"]
    print(f"matrix {M.shape}, {len(folds)} folds, {sum(len(f.cells) for f in folds)} held-out cells, grid {grid}")

    timings = {}
    t_all = time.perf_counter()
    with threadpool_limits(1):   # multi-threaded BLAS is far slower on these small SVDs
        t0 = time.perf_counter()
        preds = fold_predictions(M, folds, cache)
        timings["fold predictions (15 configs x 30 folds)"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        feats = fold_features(M, folds, preds)
        timings["feature table"] = time.perf_counter() - t0
    est = {}
    for kind in ("ensemble", "support", "hybrid"):
        t0 = time.perf_counter()
        est[kind] = leave_fold_out_risk(feats, kind, grid=grid, n_jobs=args.n_jobs)
        timings[f"risk model: {kind}"] = time.perf_counter() - t0
    abs_err = feats["abs_err"].to_numpy()
    fold_ids = feats["fold_id"].to_numpy()

    print(f"\nselected predictor: pooled MedAE {np.median(abs_err):.3f} over {len(abs_err)} cells")
    print("\nRisk-coverage curve: MedAE (score points) of the most trusted fraction of cells")
    rc = {k: risk_coverage(abs_err, e.risk, actual=feats["actual"].to_numpy()) for k, e in est.items()}
    table = pd.DataFrame({"kept": rc["hybrid"]["kept_fraction"], "n": rc["hybrid"]["n"]})
    for k in est:
        table[k] = rc[k]["medae"].round(3)
    table["paper hybrid"] = [PAPER_HYBRID_MEDAE.get(f, np.nan) for f in table["kept"]]
    print(table.to_string(index=False))

    print("\nChosen architectures (folds) vs paper")
    for k, e in est.items():
        counts = pd.Series(e.architecture).value_counts().sort_index().to_dict()
        print(f"  {k:9s} ours {counts}   paper {PAPER_SELECTED[k]}")

    print("\nLeave-fold-out conformal 90% intervals")
    for k, e in est.items():
        c = conformal_intervals(abs_err, e.risk, fold_ids, 0.9)
        line = f"  {k:9s} coverage {c.coverage:.4f}  median width {c.median_width:7.3f}  scale median {c.scale_median:.4f}"
        if k == "hybrid":
            line += (f"   | paper: coverage {paper['heldout_coverage']}, median width {paper['heldout_median_width']},"
                     f" scale median {paper['conformal_scale_median']}")
        print(line)

    tc = trust_calibration(abs_err, est["hybrid"].risk, threshold=10.0, bins=20)
    ref = paper["trust_calibration"]
    print(f"\nTrust calibration, hybrid risk, P(|error| <= 10), {len(abs_err)} cells "
          f"(paper: {ref['num_calibration_cells']} cells)")
    tt = tc.table()
    tt["paper risk_median"] = ref["bin_risk_median"]
    tt["paper empirical"] = ref["bin_empirical_trust_probability"]
    tt["paper calibrated"] = ref["bin_calibrated_trust_probability"]
    print(tt.round(3).to_string())

    timings["total"] = time.perf_counter() - t_all
    print("\nTimings (s)")
    for k, v in timings.items():
        print(f"  {k:42s} {v:8.1f}")


if __name__ == "__main__":
    main()
