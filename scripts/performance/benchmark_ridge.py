"""Benchmark the batched ``ridge_cv_fit`` (Random-Search-Learn's inner loop) against the previous
eigendecomposition-based version, copied below as :func:`ridge_cv_fit_eigh` -- the baseline.

Cases are Random-Search-Learn's real shapes: a batch of 256 candidate core sets of n items
from the training source models (MuSR interpolation: 252 training models; QNLI: 48) for
n in {50, 100, 200}. Reports CPU seconds per batch (best of ``--repeats``, one BLAS thread),
the speed-up (baseline / new, same run) and the largest |coef| difference between the two.
Also times a whole Random-Search-Learn fit with 512 candidates (per-10,000 projection).

Usage: .venv/bin/python scripts/performance/benchmark_ridge.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.linalg import eigh
from threadpoolctl import threadpool_limits

from benchcast.methods.random_sampling import RandomSearchLearn
from benchcast.methods.ridge import DEFAULT_ALPHAS, ridge_cv_fit


def ridge_cv_fit_eigh(X, y, alphas=DEFAULT_ALPHAS):
    """The previous implementation: one batched ``eigh(driver="evd")`` of the smaller Gram matrix."""
    B, m, p = X.shape
    x_mean, y_mean = X.mean(axis=1, keepdims=True), y.mean(axis=1, keepdims=True)
    Xc, yc = X - x_mean, y - y_mean
    dual = m <= p
    s, Q = eigh(Xc @ Xc.transpose(0, 2, 1) if dual else Xc.transpose(0, 2, 1) @ Xc, driver="evd", check_finite=False)
    s = np.clip(s, 0.0, None)
    if dual:
        Uty, U2 = np.einsum("bmk,bm->bk", Q, yc), Q**2
    else:
        XV = Xc @ Q
        XVty, XV2 = np.einsum("bmk,bm->bk", XV, yc), XV**2
    best_err, best_alpha = np.full(B, np.inf), np.zeros(B)
    for a in alphas:
        if dual:
            f = s / (s + a)
            fitted, h = np.einsum("bmk,bk->bm", Q, f * Uty), np.einsum("bmk,bk->bm", U2, f) + 1.0 / m
        else:
            f = 1.0 / (s + a)
            fitted, h = np.einsum("bmk,bk->bm", XV, f * XVty), np.einsum("bmk,bk->bm", XV2, f) + 1.0 / m
        err = (((yc - fitted) / (1.0 - h)) ** 2).mean(axis=1)
        better = err < best_err
        best_err, best_alpha = np.where(better, err, best_err), np.where(better, a, best_alpha)
    coef = np.zeros((B, p))
    for a in np.unique(best_alpha):
        sel = best_alpha == a
        if dual:
            dual_w = np.einsum("bmk,bk->bm", Q[sel], np.einsum("bmk,bm->bk", Q[sel], yc[sel]) / (s[sel] + a))
            coef[sel] = np.einsum("bmp,bm->bp", Xc[sel], dual_w)
        else:
            Vt = np.einsum("bpk,bp->bk", Q[sel], np.einsum("bmp,bm->bp", Xc[sel], yc[sel]))
            coef[sel] = np.einsum("bpk,bk->bp", Q[sel], Vt / (s[sel] + a))
    return coef, best_alpha


def best_cpu(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    threadpool_limits(1)
    rng = np.random.default_rng(0)
    print("| case | n | baseline eigh s | new inverse s | speed-up | max abs coef diff | same alphas |")
    print("|---|---|---|---|---|---|---|")
    for label, m_train, n_items in (("MuSR-like", 252, 756), ("QNLI-like", 48, 5463)):
        ability = rng.normal(size=(m_train, 1))
        src = (rng.random((m_train, n_items)) < 1 / (1 + np.exp(-(ability - rng.normal(size=n_items))))).astype(float)
        y = src.mean(axis=1)
        for n in (50, 100, 200):
            cand = np.stack([rng.permutation(n_items)[:n] for _ in range(256)])
            X = src[:, cand].transpose(1, 0, 2)
            Y = np.broadcast_to(y, (256, m_train))
            t_old, (c_old, a_old) = best_cpu(lambda: ridge_cv_fit_eigh(X, Y), args.repeats)
            t_new, model = best_cpu(lambda: ridge_cv_fit(X, Y), args.repeats)
            print(
                f"| {label} | {n} | {t_old:.3f} | {t_new:.3f} | {t_old / t_new:.1f}x | "
                f"{np.abs(model.coef - c_old).max():.1e} | {bool((model.alpha == a_old).all())} |"
            )
    src = (rng.random((336, 756)) < 0.5).astype(float)
    for n in (50, 200):
        t, _ = best_cpu(lambda: RandomSearchLearn(num_search=512).fit(src, n, np.random.default_rng(0)), 1)
        print(f"Random-Search-Learn fit, 336 x 756 source, n={n}: {t / 512 * 10_000:.1f} CPU s per 10,000 candidates")


if __name__ == "__main__":
    main()
