"""Benchmark ``benchcast.methods.pca.pca_impute`` against the exact reference and the previous code.

Compares, single-threaded, on
  * a MuSR-like case: the real MuSR matrix (448 models x 756 items) when
    ``../shared/raw/benchmark-prediction/data/scores/musr.jbl`` (beside the repository) exists, else a synthetic
    low-rank binary matrix of that shape, with the CV layout of ``PCAImpute.fit``: 112 rows
    (25 %) observed only on a 50-item core set (706 missing entries each);
  * a small HELM-like case: synthetic 83 x 500 binary matrix, 20 rows observed on 50 items;
for k in {2, 10, 20}:
  * ``reference``: Algorithm 1 as the paper's code runs it (``SimpleImputer(mean)`` +
    ``PCA(svd_solver='full')`` in a loop) -- the ground truth for the max-abs-difference column;
  * ``gram_eigh``: the previous implementation (dense ``eigh`` of the Gram matrix each
    iteration), copied below as :func:`pca_impute_gram_eigh` -- the baseline for the speed-ups;
  * ``new``: the current :func:`benchcast.methods.pca.pca_impute`.

Times are CPU seconds per call (``time.process_time``, robust to other jobs on the machine)
and wall seconds, the best of ``--repeats`` calls; the reference is run once per case (it
takes ~1 s per iteration on MuSR). Speed-up = baseline time / method time, measured in the
same run.

Usage: .venv/bin/python scripts/performance/benchmark_pca.py [--repeats 3] [--no-reference] [--k 2 10 20]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import scipy.linalg
from scipy.linalg import eigh
from threadpoolctl import threadpool_limits

from benchcast.methods.pca import pca_impute, pca_impute_paper_loop

# After numpy/scipy/sklearn are loaded: threadpoolctl only limits libraries already loaded.
threadpool_limits(1)

MUSR = Path(__file__).resolve().parents[3] / "shared/raw/benchmark-prediction/data/scores/musr.jbl"


def pca_impute_gram_eigh(matrix, missing, k, max_iter=100, tol=1e-4):
    """The previous implementation (dense eigh of the centred Gram matrix every iteration)."""
    F = np.array(matrix, dtype=np.float64)
    missing = np.asarray(missing, dtype=bool)
    obs_count = (~missing).sum(axis=0)
    col_mean = np.where(obs_count > 0, np.where(missing, 0.0, F).sum(axis=0) / np.maximum(obs_count, 1), 0.0)
    F[missing] = np.broadcast_to(col_mean, F.shape)[missing]
    inc = np.flatnonzero(missing.any(axis=1))
    com = np.flatnonzero(~missing.any(axis=1))
    R = F.shape[0]
    k = min(k, R - 1, F.shape[1])
    order = np.concatenate([com, inc])
    F = F[order]
    miss = missing[order]
    n_com = len(com)
    G = np.empty((R, R))
    G[:n_com, :n_com] = F[:n_com] @ F[:n_com].T
    for _ in range(max_iter):
        G[n_com:, :] = F[n_com:] @ F.T
        G[:n_com, n_com:] = G[n_com:, :n_com].T
        mu = F.mean(axis=0)
        Fmu = F @ mu
        Gc = G - Fmu[:, None] - Fmu[None, :] + mu @ mu
        w, U = eigh(Gc, subset_by_index=[R - k, R - 1])
        keep = w > max(w.max(), 0.0) * 1e-12
        w, U = w[keep], U[:, keep]
        P = (Gc[n_com:] @ U) / w
        recon = P @ (U.T @ (F - mu)) + mu
        m = miss[n_com:]
        diff = recon[m] - F[n_com:][m]
        if np.linalg.norm(diff) < tol:
            break
        block = F[n_com:]
        block[m] = recon[m]
        F[n_com:] = block
    out = np.empty_like(F)
    out[order] = F
    return out


def synthetic_binary(n_models, n_items, rank, seed):
    """Low-rank IRT-like binary response matrix (fixed seed)."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=(n_models, rank))
    loading = rng.normal(size=(n_items, rank)) / np.sqrt(rank)
    logits = 1.5 * ability @ loading.T + rng.normal(size=n_items)[None, :]
    return (rng.random((n_models, n_items)) < 1.0 / (1.0 + np.exp(-logits))).astype(np.float64)


def cv_mask(shape, n_incomplete, budget, seed):
    """PCAImpute.fit's layout: ``n_incomplete`` rows observed only on a random core set."""
    rng = np.random.default_rng(seed)
    n_models, n_items = shape
    core = rng.permutation(n_items)[:budget]
    rows = rng.permutation(n_models)[:n_incomplete]
    missing = np.zeros(shape, dtype=bool)
    missing[np.ix_(rows, np.setdiff1d(np.arange(n_items), core))] = True
    return missing


def cases():
    if MUSR.exists():
        from benchcast.data.safe_pickle import safe_load

        musr, name = np.asarray(safe_load(MUSR), dtype=np.float64), "MuSR 448x756 (real)"
    else:
        musr, name = synthetic_binary(448, 756, 8, seed=0), "MuSR-like 448x756 (synthetic)"
    yield name + ", 112 rows x 706 missing", musr, cv_mask(musr.shape, 112, 50, seed=0)
    helm = synthetic_binary(83, 500, 5, seed=1)
    yield "HELM-like 83x500 (synthetic), 20 rows x 450 missing", helm, cv_mask(helm.shape, 20, 50, seed=1)


def timed(fn, repeats):
    best_cpu = best_wall = np.inf
    out = None
    for _ in range(repeats):
        c, w = time.process_time(), time.perf_counter()
        out = fn()
        best_cpu = min(best_cpu, time.process_time() - c)
        best_wall = min(best_wall, time.perf_counter() - w)
    return out, best_cpu, best_wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3, help="calls per fast method (best is reported)")
    ap.add_argument("--k", type=int, nargs="+", default=[2, 10, 20])
    ap.add_argument(
        "--no-reference",
        action="store_true",
        help="skip the slow scikit-learn loop; differences are then against the previous implementation",
    )
    args = ap.parse_args()
    print(f"numpy {np.__version__}, scipy {scipy.__version__}; BLAS limited to 1 thread\n")
    header = f"{'case':<52} {'k':>3} {'method':<10} {'cpu s/call':>10} {'wall s/call':>11} {'speed-up':>9} {'max|Δ| vs ' + ('ref' if not args.no_reference else 'old'):>14}"
    print(header)
    print("-" * len(header))
    for name, S, missing in cases():
        for k in args.k:
            rows = []
            old, old_cpu, old_wall = timed(lambda: pca_impute_gram_eigh(S, missing, k), args.repeats)
            new, new_cpu, new_wall = timed(lambda: pca_impute(S, missing, k), args.repeats)
            if args.no_reference:
                truth = old
            else:
                truth, ref_cpu, ref_wall = timed(lambda: pca_impute_paper_loop(S, missing, k), 1)
                rows.append(("reference", ref_cpu, ref_wall, truth))
            rows += [("gram_eigh", old_cpu, old_wall, old), ("new", new_cpu, new_wall, new)]
            for method, cpu, wall, out in rows:
                diff = float(np.abs(out - truth).max())
                print(
                    f"{name:<52} {k:>3} {method:<10} {cpu:>10.3f} {wall:>11.3f} {old_cpu / cpu:>8.2f}x {diff:>14.1e}",
                    flush=True,
                )
            assert np.abs(new - truth).max() < 1e-6, "new implementation differs from the reference by >= 1e-6"


if __name__ == "__main__":
    main()
