"""Closed-form ridge regression with an unpenalized intercept, batched over problems.

One place for the ridge fits every method uses:

* :func:`ridge_cv_fit` reproduces scikit-learn's ``RidgeCV()`` defaults, which the paper's
  code uses for Random-Sampling-Learn and Random-Search-Learn: alphas (0.1, 1, 10), an
  unpenalized intercept, and the alpha chosen by exact leave-one-out squared error (first
  alpha wins ties, as ``np.argmin``). It works on a batch of independent problems at once
  (``X`` of shape ``(B, m, p)``), which is what makes Random-Search-Learn's 10,000 candidate
  subsets affordable.
* :func:`ridge_fit` is a fixed-alpha ridge (AIPW uses ``Ridge(alpha=10)``).

All solves use the smaller Gram matrix (``X Xᵀ`` when there are fewer rows than columns,
``Xᵀ X`` otherwise), batched over problems with NumPy's stacked inverse.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchcast.blas import columns_gram, lapack_guard, rows_gram
from benchcast.data.item_level import is_binary

DEFAULT_ALPHAS = (0.1, 1.0, 10.0)

#: smallest candidate size whose primal bound takes the compiled float32 route
#: (:func:`_certified_bounds`): single-thread Random-Search-Learn on MuSR (interpolation, 3 trials;
#: scripts/performance/random_search_versions.py) ran 2.0x faster at n = 100 and 2.3x at n = 50 than
#: through the float64 solves, and as fast at n = 10 and 25, with the same core sets
FLOAT32_MIN_COLUMNS = 32


@dataclass
class RidgeModel:
    """``coef`` (B, p) and ``intercept`` (B,) of B fitted ridge problems; ``alpha`` (B,)."""

    coef: np.ndarray
    intercept: np.ndarray
    alpha: np.ndarray

    def predict(self, X: np.ndarray) -> np.ndarray:
        """``X``: (B, r, p) or (r, p) shared by all problems -> (B, r)."""
        if X.ndim == 2:
            return self.coef @ X.T + self.intercept[:, None]
        return np.einsum("brp,bp->br", X, self.coef) + self.intercept[:, None]


def ridge_cv_fit(X: np.ndarray, y: np.ndarray, alphas=DEFAULT_ALPHAS) -> RidgeModel:
    """Batched ``RidgeCV(alphas, fit_intercept=True)`` with exact leave-one-out selection.

    Parameters
    ----------
    X : (B, m, p) or (m, p)
    y : (B, m) or (m,)

    Notes
    -----
    With centered ``Xc`` and an unpenalized intercept the hat matrix is
    ``H = 11ᵀ/m + H_c`` and the LOO residual is ``e_i / (1 - H_ii)`` (the identity
    scikit-learn's ``_RidgeGCV`` uses). Per alpha, one batched inverse of the smaller
    regularized Gram matrix gives everything:

    * primal (m > p): ``A = (XcᵀXc + αI)⁻¹``, ``coef = A Xcᵀyc``, ``H_c,ii = x_iᵀ A x_i``;
    * dual (m <= p):  ``A = (XcXcᵀ + αI)⁻¹``, ``H_c = I - αA``, ``coef = Xcᵀ A yc``.

    Three batched inverses cost no more than one batched symmetric eigendecomposition of
    the same matrices, and less in the dual form (``scripts/performance/benchmark_ridge.py``: 1.0x on
    MuSR-like 252 x n candidates, 1.6-1.8x on QNLI-like 48 x n, one thread, same selected
    alphas, coefficients equal to 2e-15); the regularized Gram matrix is well conditioned
    for alpha >= 0.1 on scores in [0, 1].
    """
    squeeze = X.ndim == 2
    X = X[None] if squeeze else X
    y = y[None] if y.ndim == 1 else y
    B, m, p = X.shape
    x_mean = X.mean(axis=1, keepdims=True)
    y_mean = y.mean(axis=1, keepdims=True)
    Xc = X - x_mean
    yc = y - y_mean
    alphas = np.asarray(alphas, dtype=float)
    dual = m <= p
    gram = Xc @ Xc.transpose(0, 2, 1) if dual else Xc.transpose(0, 2, 1) @ Xc
    Xty = None if dual else np.einsum("bmp,bm->bp", Xc, yc)
    diag = np.arange(gram.shape[1])
    best_err = np.full(B, np.inf)
    best_alpha = np.zeros(B)
    best_coef = np.zeros((B, p))
    for a in alphas:
        reg = gram.copy()
        reg[:, diag, diag] += a
        inv = np.linalg.inv(reg)
        if dual:
            Ay = np.einsum("bij,bj->bi", inv, yc)
            resid_fit = a * Ay  # yc - H_c yc
            h = 1.0 - a * inv[:, diag, diag] + 1.0 / m
            coef = np.einsum("bmp,bm->bp", Xc, Ay)
        else:
            coef = np.einsum("bij,bj->bi", inv, Xty)
            resid_fit = yc - np.einsum("bmp,bp->bm", Xc, coef)
            h = np.einsum("bmp,bmp->bm", Xc @ inv, Xc) + 1.0 / m
        err = ((resid_fit / (1.0 - h)) ** 2).mean(axis=1)
        better = err < best_err  # strict: the first alpha wins ties
        best_err = np.where(better, err, best_err)
        best_alpha = np.where(better, a, best_alpha)
        best_coef[better] = coef[better]
    intercept = y_mean[:, 0] - np.einsum("bp,bp->b", x_mean[:, 0, :], best_coef)
    return RidgeModel(coef=best_coef, intercept=intercept, alpha=best_alpha)


def ridge_fit(X: np.ndarray, Y: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Fixed-alpha ridge with intercept for several targets sharing one design.

    ``X`` (m, p), ``Y`` (m, T) -> ``coef`` (p, T), ``intercept`` (T,). Same solution as
    ``sklearn.linear_model.Ridge(alpha).fit(X, Y)``; solved in whichever of the primal or
    dual forms is smaller.
    """
    x_mean = X.mean(axis=0)
    y_mean = Y.mean(axis=0)
    Xc = X - x_mean
    Yc = Y - y_mean
    m, p = Xc.shape
    if m <= p:
        K = rows_gram(Xc)
        K[np.diag_indices_from(K)] += alpha
        with lapack_guard(m):
            coef = Xc.T @ np.linalg.solve(K, Yc)
    else:
        G = columns_gram(Xc)
        G[np.diag_indices_from(G)] += alpha
        with lapack_guard(p):
            coef = np.linalg.solve(G, Xc.T @ Yc)
    intercept = y_mean - x_mean @ coef
    return coef, intercept


def _solve_regularized(gram: np.ndarray, rhs: np.ndarray, alpha: float) -> np.ndarray:
    """``(gram[b] + alpha I)^-1 rhs[b]`` for a stack of symmetric PSD matrices, in float64.

    Matrices of size >= 64 go one at a time through LAPACK's Cholesky routines (a third of the
    flops of LU); smaller ones through the batched ``np.linalg.solve``, whose C loop beats the
    per-call overhead.
    """
    k = gram.shape[1]
    diag = np.arange(k)
    if k < 64:
        reg = gram.copy()
        reg[:, diag, diag] += alpha
        return np.linalg.solve(reg, rhs[..., None])[..., 0]
    from scipy.linalg import lapack

    out = np.empty_like(rhs)
    with lapack_guard(k):
        for b in range(len(gram)):
            reg = gram[b].T.copy(order="F")  # symmetric: Fortran order spares LAPACK a copy
            reg[diag, diag] += alpha
            _, x, status = lapack.dposv(reg, rhs[b], lower=0, overwrite_a=1, overwrite_b=0)
            if status != 0:  # numerically not positive definite: LU fallback
                reg = gram[b].copy()
                reg[diag, diag] += alpha
                x = np.linalg.solve(reg, rhs[b])
            out[b] = x
    return out


def bound_uses_gathered_gram(m: int, p: int, n_val: int = 0, n_alphas: int = len(DEFAULT_ALPHAS)) -> bool:
    """Whether :func:`ridge_validation_gaps_per_alpha` should solve ``m`` training rows x ``p``
    columns in the primal form (the candidate's ``p x p`` Gram matrix, one solve per alpha) rather
    than the dual (the ``(m + n_val) x m`` products with the training rows, one ``m x m`` solve
    per alpha). A rough cost model in microseconds per candidate, fitted to single-thread
    timings on the real leaderboards (``scripts/performance/benchmark_random_search.py``)."""

    def solve(k):  # batched LU below 64, a LAPACK Cholesky call per matrix from 64 on
        return 3e-4 * k**3 / 3 + 1.0 if k < 64 else 1.5e-4 * k**3 / 6 + 5.0

    primal = 2.5e-3 * p * p + n_alphas * solve(p)
    dual = 1.0e-4 * (m + n_val) * m * p + n_alphas * solve(m)
    return primal <= dual


def _binary_float32(X: np.ndarray) -> np.ndarray | None:
    """``X`` as float32 when every entry is 0 or 1, else ``None``.

    Products of 0/1 columns are integer counts; float32 BLAS computes them exactly (every
    partial sum is an integer below 2**24) at twice the float64 speed, and the centring is
    then applied in float64 -- so the centred products equal the float64 ones to rounding.
    """
    X = np.asarray(X)
    if max(X.shape, default=0) >= 2**24 or not is_binary(X):
        return None
    return X.astype(np.float32)


class CandidateProducts:
    """Centred second moments of candidate column subsets, for many candidates of one search.

    ``train_X`` (m, N) and ``val_X`` (v, N); every candidate is a row of column indices ``c``
    and all centring uses the training means of its columns, ``x̄_c``:

    * :meth:`dual` -> ``K = Xc Xcᵀ`` (B, m, m) and ``C = (Xv - x̄) Xcᵀ`` (B, v, m);
    * :meth:`gram` -> ``Xcᵀ Xc`` (B, p, p), gathered from the centred Gram matrix of all columns.

    For :meth:`dual`, 0/1 data give exact float32 integer counts (:func:`_binary_float32`)
    that are centred afterwards: with ``A = X Xᵀ``, ``D = Xv Xᵀ``, ``a = A1/m``, ``d = D1/m``,
    ``s = 1ᵀA1/m²``: ``K = A - a1ᵀ - 1aᵀ + s11ᵀ`` and ``C = D - d1ᵀ - 1aᵀ + s11ᵀ``. Other
    data are centred first, in float64.
    """

    def __init__(self, train_X: np.ndarray, val_X: np.ndarray):
        train_X = np.asarray(train_X, dtype=float)
        val_X = np.asarray(val_X, dtype=float)
        self.m = train_X.shape[0]
        self.x_mean = train_X.mean(axis=0)
        Z = np.vstack([train_X, val_X])
        Z32 = _binary_float32(Z)
        self.exact32 = Z32 is not None
        # columns as rows: gathering a candidate's columns copies contiguous rows
        self._cols = np.ascontiguousarray((Z32 if self.exact32 else Z - self.x_mean).T)
        self._gram = None

    def dual(self, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = self.m
        Zs = self._cols[cand]  # (B, p, m + v)
        J = (Zs.transpose(0, 2, 1) @ Zs[:, :, :m]).astype(float)  # (B, m + v, m)
        if self.exact32:
            A, D = J[:, :m], J[:, m:]
            a = A.mean(axis=2)
            s = a.mean(axis=1)[:, None, None]
            J[:, :m] = A - a[:, :, None] - a[:, None, :] + s
            J[:, m:] = D - D.mean(axis=2)[:, :, None] - a[:, None, :] + s
        return J[:, :m], J[:, m:]

    def gram(self, cand: np.ndarray) -> np.ndarray:
        m = self.m
        if self.exact32 and not self.gather_gram:
            Xs = self._cols[cand][:, :, :m]  # (B, p, m) raw 0/1
            G = (Xs @ Xs.transpose(0, 2, 1)).astype(float)
            xm = self.x_mean[cand]
            G -= m * xm[:, :, None] * xm[:, None, :]
            return G
        gram = self.all_columns_gram()
        out = np.empty((len(cand), cand.shape[1], cand.shape[1]))
        for b, c in enumerate(cand):  # rows, then columns: 1.6x the 3-D fancy index's speed
            np.take(np.take(gram, c, axis=0), c, axis=1, out=out[b])
        return out

    def all_columns_gram(self) -> np.ndarray:
        """``Xcᵀ Xc`` of all ``N`` columns (N, N), computed once."""
        if self._gram is None:
            Xc = np.asarray(self._cols[:, : self.m], dtype=float)
            if self.exact32:
                Xc = Xc - self.x_mean[:, None]
            self._gram = rows_gram(Xc)
        return self._gram

    @property
    def gather_gram(self) -> bool:
        """Gather candidates' Gram matrices from the one of all columns (a ``p²`` gather from an
        ``N x N`` matrix) rather than multiply their columns (``m p²`` float32 multiply-adds):
        only with many training rows and an ``N x N`` matrix small enough to stay in cache
        (timings: ``scripts/performance/benchmark_random_search.py``)."""
        n_cols = self._cols.shape[0]
        return not self.exact32 or (self.m > 128 and n_cols <= 2048)


def ridge_validation_gaps_per_alpha(
    train_X: np.ndarray,
    train_y: np.ndarray,
    val_X: np.ndarray,
    val_y: np.ndarray,
    candidates: np.ndarray,
    alphas=DEFAULT_ALPHAS,
    batch_size: int = 64,
    form: str | None = None,
    certified_float32: bool = False,
) -> np.ndarray:
    """Validation MAE of a fixed-alpha ridge on every candidate column subset, for every alpha.

    Returns ``gaps`` of shape ``(len(candidates), len(alphas))``: ``gaps[c, k] = mean |ŷ -
    val_y|`` over the validation rows for the ridge (unpenalised intercept) of ``train_y`` on
    ``train_X[:, candidates[c]]`` with ``alphas[k]``. ``RidgeCV`` fitted on the same data picks
    one of these alphas by leave-one-out, so its validation gap is one of the row's values
    and ``gaps.min(axis=1)`` is an exact lower bound on it -- what Random-Search-Learn uses
    to skip the leave-one-out work for candidates that cannot win (no hat-matrix diagonal,
    no inverse: one solve per alpha).

    Each candidate is solved in whichever form is cheaper (:func:`bound_uses_gathered_gram`):
    primal, ``coef = (Xcᵀ Xc + αI)⁻¹ Xcᵀ yc`` with the Gram matrix gathered
    (:meth:`CandidateProducts.gram`), or dual in model space, ``ŷ_val = ȳ + C (K + αI)⁻¹ yc``
    (:meth:`CandidateProducts.dual`; no coefficient vector). Float64 solves. ``form``
    (``"primal"`` / ``"dual"``) overrides the choice, for tests and timings.

    ``certified_float32=True`` returns certified *lower bounds* on those gaps instead, for a
    primal form with ``p >= FLOAT32_MIN_COLUMNS`` (:func:`_certified_bounds`); everywhere else the
    float64 solves run and the gaps are the exact ones.
    """
    candidates = np.asarray(candidates)
    m, p = train_X.shape[0], candidates.shape[1]
    y_mean = float(train_y.mean())
    yc = train_y - y_mean
    products = CandidateProducts(train_X, val_X)
    if form not in (None, "primal", "dual"):
        raise ValueError(f"form must be 'primal', 'dual' or None, got {form!r}")
    dual = form == "dual" if form else not bound_uses_gathered_gram(m, p, len(val_y), len(alphas))
    alphas = np.asarray(alphas, dtype=float)
    if not dual:
        xty_all = (train_X - products.x_mean).T @ yc
        if certified_float32 and p >= FLOAT32_MIN_COLUMNS:
            bounds = _certified_bounds(products, xty_all, val_X, val_y, y_mean, candidates, alphas, batch_size)
            failed = np.flatnonzero(np.isnan(bounds).any(axis=1))
            if failed.size:  # numerically not positive definite in float32: the float64 solves
                bounds[failed] = ridge_validation_gaps_per_alpha(
                    train_X, train_y, val_X, val_y, candidates[failed], alphas, batch_size, form="primal"
                )
            return bounds
    gaps = np.empty((len(candidates), len(alphas)))
    for start in range(0, len(candidates), batch_size):
        cand = candidates[start : start + batch_size]
        B = len(cand)
        if dual:
            K, C = products.dual(cand)
            rhs = np.broadcast_to(yc, (B, m))
        else:
            cand = np.sort(cand, axis=1)  # same subsets; ascending columns gather faster
            gram = products.gram(cand)
            rhs = xty_all[cand]
            Xv = val_X[:, cand]  # (n_val, B, p)
            xm = products.x_mean[cand]  # (B, p)
        for k, a in enumerate(alphas):
            if dual:
                w = _solve_regularized(K, rhs, a)
                pred = y_mean + np.einsum("bvm,bm->bv", C, w)
            else:
                coef = _solve_regularized(gram, rhs, a)
                intercept = y_mean - np.einsum("bp,bp->b", xm, coef)
                pred = np.einsum("vbp,bp->bv", Xv, coef) + intercept[:, None]
            gaps[start : start + B, k] = np.abs(pred - val_y[None, :]).mean(axis=1)
    return gaps


def _certified_bounds(products, xty_all, val_X, val_y, y_mean, candidates, alphas, batch_size) -> np.ndarray:
    """Certified lower bounds on the primal form's fixed-alpha validation gaps, solved in float32.

    Each candidate's regularised Gram matrix is factorised and solved in float32 (``spotrf``: 1.8x
    faster than ``dpotrf`` at 200 x 200) and its solution error bounded by ``||δ|| <= ||r||_2 /
    alpha`` from the float64 residual ``r = rhs - (gram + alpha I) x``: exact up to float64 rounding,
    because ``lambda_min(gram + alpha I) >= alpha`` for a PSD ``gram``. Each gap is lowered by the most
    that error can change it, ``mean_v ||x_v - x̄|| * ||δ||`` (Cauchy-Schwarz; up to ~1e-3 of the gap,
    against a ~20% spread between the best candidates' gaps on the leaderboards), so pruning by these
    bounds stays exact. (A float64 refinement step would shrink the slack ~1000x, but the same ~32
    of 10,000 candidates need the leave-one-out fit without it.) The loop over candidates is compiled
    (:mod:`benchcast.methods.ridge_numba`). A candidate whose float32 factorisation fails gets NaN
    bounds (its caller solves it in float64).
    """
    from benchcast.methods import ridge_numba

    cand = np.sort(candidates, axis=1)  # same subsets; ascending columns gather faster
    gaps = np.empty((len(cand), len(alphas)))
    info = np.zeros((len(cand), len(alphas)), np.int32)
    args = (np.ascontiguousarray(xty_all), products.x_mean, np.ascontiguousarray(np.asarray(val_X, float).T))
    args += (np.ascontiguousarray(val_y, dtype=float), float(y_mean), alphas)
    with lapack_guard(cand.shape[1]):  # spotrf of each candidate's Gram matrix
        if products.gather_gram:
            ridge_numba.bounds_from_all_columns(products.all_columns_gram(), cand, *args, gaps, info)
        else:
            for start in range(0, len(cand), batch_size):
                part = slice(start, start + batch_size)
                ridge_numba.bounds_from_grams(products.gram(cand[part]), cand[part], *args, gaps[part], info[part])
    gaps[(info != 0).any(axis=1)] = np.nan
    return gaps
