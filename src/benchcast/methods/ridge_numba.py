"""The compiled loop of Random-Search-Learn's certified float32 bounds
(:func:`benchcast.methods.ridge.ridge_validation_gaps_per_alpha` with ``certified_float32=True``):
for every candidate column subset and every alpha, LAPACK's ``spotrf``, two ``strsv`` and the float64
residual (``dsymv``) that certifies the solution, then the validation gap, without a Python call per
candidate (SciPy's BLAS and LAPACK, through ``scipy.linalg.cython_blas`` / ``cython_lapack``).

At n = 200 the bound factorises 30,000 regularised Gram matrices of 200 x 200 per trial (10,000
candidates x 3 alphas). Through SciPy's Python wrappers every candidate also paid a gathered float64
Gram matrix, its float32 copy, three wrapper calls per alpha and NumPy's residual and predictions:
together more than the factorisations. Here the candidate's Gram matrix is gathered once (its upper
triangle, from the centred Gram matrix of all columns) and reused for the three alphas. The bound is
certified as before (``||x - x*|| <= ||r|| / alpha``: :func:`benchcast.methods.ridge._solve_regularized`),
so the candidates that can still win, and the selected core set, are the same.

Imported only by that path: importing numba and compiling the loop costs about a second in a new
process (the loop calls LAPACK through addresses known only at run time, which numba does not cache),
which the 30,000 factorisations of one trial repay many times over.
"""

from __future__ import annotations

import ctypes

import numba
import numpy as np
from numba.extending import get_cython_function_address

_p = ctypes.c_void_p


def _fortran(module: str, name: str, n_args: int):
    """A BLAS/LAPACK routine of SciPy's, callable from compiled code (every argument by pointer)."""
    return ctypes.CFUNCTYPE(None, *[_p] * n_args)(get_cython_function_address(f"scipy.linalg.cython_{module}", name))


_spotrf = _fortran("lapack", "spotrf", 5)  # uplo, n, a, lda, info
_strsv = _fortran("blas", "strsv", 8)  # uplo, trans, diag, n, a, lda, x, incx
_dsymv = _fortran("blas", "dsymv", 10)  # uplo, n, alpha, a, lda, x, incx, beta, y, incy
_dgemv = _fortran("blas", "dgemv", 11)  # trans, m, n, alpha, a, lda, x, incx, beta, y, incy


@numba.njit(nogil=True)
def _bounds_of_one(up, rhs, xm, xv, val_y, y_mean, alphas, val_norm, gaps, info):  # pragma: no cover - compiled
    """One candidate's certified gap bounds, one per alpha, into ``gaps`` (and ``spotrf``'s ``info``).

    ``up`` (k, k) float64 holds the candidate's centred Gram matrix in its upper triangle (C order),
    which the Fortran routines read as the lower triangle of the same symmetric matrix; ``rhs`` =
    ``Xcᵀ yc``, ``xm`` the training means, ``xv`` (k, n_val) the validation rows' columns.
    """
    k = rhs.shape[0]
    n_val = val_y.shape[0]
    work = np.empty((k, k), np.float32)
    x32 = np.empty(k, np.float32)
    x = np.empty(k)
    r = np.empty(k)
    pred = np.empty(n_val)
    lo, no, tr = np.array([76], np.uint8), np.array([78], np.uint8), np.array([84], np.uint8)  # "L", "N", "T"
    nd = no  # a non-unit diagonal
    n = np.array([k], np.int32)
    nv = np.array([n_val], np.int32)
    one_step = np.array([1], np.int32)
    one, minus_one, zero = np.array([1.0]), np.array([-1.0]), np.array([0.0])
    status = np.zeros(1, np.int32)
    for a_i in range(alphas.shape[0]):
        alpha = alphas[a_i]
        for i in range(k):
            for j in range(i, k):
                work[i, j] = np.float32(up[i, j])
            work[i, i] += np.float32(alpha)
        _spotrf(lo.ctypes, n.ctypes, work.ctypes, n.ctypes, status.ctypes)  # L Lᵀ, L in work's C upper triangle
        info[a_i] = status[0]
        if status[0] != 0:
            continue
        for i in range(k):
            x32[i] = np.float32(rhs[i])
        _strsv(lo.ctypes, no.ctypes, nd.ctypes, n.ctypes, work.ctypes, n.ctypes, x32.ctypes, one_step.ctypes)
        _strsv(lo.ctypes, tr.ctypes, nd.ctypes, n.ctypes, work.ctypes, n.ctypes, x32.ctypes, one_step.ctypes)
        intercept = y_mean
        for i in range(k):
            x[i] = np.float64(x32[i])
            r[i] = rhs[i] - alpha * x[i]
            intercept -= xm[i] * x[i]
        # r = rhs - (G + alpha I) x, in float64
        _dsymv(
            lo.ctypes,
            n.ctypes,
            minus_one.ctypes,
            up.ctypes,
            n.ctypes,
            x.ctypes,
            one_step.ctypes,
            one.ctypes,
            r.ctypes,
            one_step.ctypes,
        )
        err = np.sqrt(np.sum(r * r)) / alpha
        # pred = xvᵀ x: xv is C (k, n_val), i.e. Fortran (n_val, k)
        _dgemv(
            no.ctypes,
            nv.ctypes,
            n.ctypes,
            one.ctypes,
            xv.ctypes,
            nv.ctypes,
            x.ctypes,
            one_step.ctypes,
            zero.ctypes,
            pred.ctypes,
            one_step.ctypes,
        )
        gap = 0.0
        for v in range(n_val):
            gap += abs(pred[v] + intercept - val_y[v])
        gaps[a_i] = gap / n_val - val_norm * err


@numba.njit(nogil=True)
def _gather(cand, xty, x_mean, val_cols, rhs, xm, xv):  # pragma: no cover - compiled
    """The candidate's right-hand side, training means and validation columns; returns
    ``mean_v ||x_v - x̄||`` (the bound's slack factor)."""
    k, n_val = xv.shape
    for i in range(k):
        c = cand[i]
        rhs[i] = xty[c]
        xm[i] = x_mean[c]
        xv[i, :] = val_cols[c, :]
    norm = 0.0
    for v in range(n_val):
        s = 0.0
        for i in range(k):
            d = xv[i, v] - xm[i]
            s += d * d
        norm += np.sqrt(s)
    return norm / n_val


@numba.njit(nogil=True)
def bounds_from_all_columns(
    gram_all, cand, xty, x_mean, val_cols, val_y, y_mean, alphas, gaps, info
):  # pragma: no cover - compiled
    """Every candidate's bounds, its Gram matrix gathered from ``gram_all`` (N, N), the centred Gram
    matrix of all columns; ``cand`` (B, k) sorted column indices, ``val_cols`` (N, n_val) the
    validation rows by column; ``gaps`` and ``info`` (B, n_alphas) are filled."""
    B, k = cand.shape
    up = np.empty((k, k))
    rhs, xm = np.empty(k), np.empty(k)
    xv = np.empty((k, val_cols.shape[1]))
    for b in range(B):
        c = cand[b]
        for i in range(k):
            row = gram_all[c[i]]
            for j in range(i, k):
                up[i, j] = row[c[j]]
        val_norm = _gather(c, xty, x_mean, val_cols, rhs, xm, xv)
        _bounds_of_one(up, rhs, xm, xv, val_y, y_mean, alphas, val_norm, gaps[b], info[b])


@numba.njit(nogil=True)
def bounds_from_grams(grams, cand, xty, x_mean, val_cols, val_y, y_mean, alphas, gaps, info):  # pragma: no cover
    """As :func:`bounds_from_all_columns`, each candidate's Gram matrix given, ``grams`` (B, k, k)."""
    B, k = cand.shape
    up = np.empty((k, k))
    rhs, xm = np.empty(k), np.empty(k)
    xv = np.empty((k, val_cols.shape[1]))
    for b in range(B):
        up[:, :] = grams[b]
        val_norm = _gather(cand[b], xty, x_mean, val_cols, rhs, xm, xv)
        _bounds_of_one(up, rhs, xm, xv, val_y, y_mean, alphas, val_norm, gaps[b], info[b])
