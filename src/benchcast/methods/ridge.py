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

DEFAULT_ALPHAS = (0.1, 1.0, 10.0)


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
    the same matrices, and less in the dual form (``scripts/benchmark_ridge.py``: 1.0x on
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
            resid_fit = a * Ay                                   # yc - H_c yc
            h = 1.0 - a * inv[:, diag, diag] + 1.0 / m
            coef = np.einsum("bmp,bm->bp", Xc, Ay)
        else:
            coef = np.einsum("bij,bj->bi", inv, Xty)
            resid_fit = yc - np.einsum("bmp,bp->bm", Xc, coef)
            h = np.einsum("bmp,bmp->bm", Xc @ inv, Xc) + 1.0 / m
        err = ((resid_fit / (1.0 - h)) ** 2).mean(axis=1)
        better = err < best_err                                  # strict: the first alpha wins ties
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
        K = Xc @ Xc.T
        K[np.diag_indices_from(K)] += alpha
        coef = Xc.T @ np.linalg.solve(K, Yc)
    else:
        G = Xc.T @ Xc
        G[np.diag_indices_from(G)] += alpha
        coef = np.linalg.solve(G, Xc.T @ Yc)
    intercept = y_mean - x_mean @ coef
    return coef, intercept


def _solve_regularized(gram: np.ndarray, rhs: np.ndarray, alpha: float) -> np.ndarray:
    """``(gram[b] + alpha I)^-1 rhs[b]`` for a stack of symmetric PSD matrices, float64.

    Matrices of size >= 64 go one at a time through LAPACK's Cholesky solver ``dposv``
    (a third of the flops of LU); smaller ones through the batched ``np.linalg.solve``,
    whose C loop beats the per-call overhead.
    """
    k = gram.shape[1]
    diag = np.arange(k)
    if k < 64:
        reg = gram.copy()
        reg[:, diag, diag] += alpha
        return np.linalg.solve(reg, rhs[..., None])[..., 0]
    from scipy.linalg import lapack

    out = np.empty_like(rhs)
    for b in range(len(gram)):
        reg = gram[b].T.copy(order="F")                  # symmetric: Fortran order spares LAPACK a copy
        reg[diag, diag] += alpha
        _, x, info = lapack.dposv(reg, rhs[b], lower=0, overwrite_a=1, overwrite_b=0)
        if info != 0:                                    # numerically not positive definite: LU fallback
            reg = gram[b].copy()
            reg[diag, diag] += alpha
            x = np.linalg.solve(reg, rhs[b])
        out[b] = x
    return out


def bound_uses_gathered_gram(m: int, p: int) -> bool:
    """Whether :func:`ridge_validation_gaps_per_alpha` solves ``m`` rows x ``p`` columns in the
    primal form with the gathered Gram matrix (about ``p³/3`` flops per alpha) rather than the
    dual (``m²p`` for ``Xc Xcᵀ`` plus ``m³/3``)."""
    return p**3 / 3 <= m * m * p + m**3 / 3


def ridge_validation_gaps_per_alpha(train_X: np.ndarray, train_y: np.ndarray, val_X: np.ndarray,
                                    val_y: np.ndarray, candidates: np.ndarray, alphas=DEFAULT_ALPHAS,
                                    batch_size: int = 256) -> np.ndarray:
    """Validation MAE of a fixed-alpha ridge on every candidate column subset, for every alpha.

    Returns ``gaps`` of shape ``(len(candidates), len(alphas))``: ``gaps[c, k] = mean |ŷ -
    val_y|`` over the validation rows for the ridge (unpenalised intercept) of ``train_y`` on
    ``train_X[:, candidates[c]]`` with ``alphas[k]``. ``RidgeCV`` fitted on the same data picks
    one of these alphas by leave-one-out, so its validation gap is one of the row's values
    and ``gaps.min(axis=1)`` is an exact lower bound on it -- what Random-Search-Learn uses
    to skip the leave-one-out work for candidates that cannot win (no hat-matrix diagonal,
    no inverse: one Cholesky solve per alpha).

    Each candidate is solved in whichever form is cheaper: primal, where its centred Gram
    matrix ``Xcᵀ Xc`` is a principal submatrix of the one of all columns (computed once and
    gathered), or dual (``Xc Xcᵀ``, when the training rows are few). Float64 throughout.
    """
    candidates = np.asarray(candidates)
    m, p = train_X.shape[0], candidates.shape[1]
    x_mean = train_X.mean(axis=0)
    y_mean = float(train_y.mean())
    Sc = train_X - x_mean
    yc = train_y - y_mean
    dual = not bound_uses_gathered_gram(m, p)
    if not dual:
        gram_all = Sc.T @ Sc
        xty_all = Sc.T @ yc
    alphas = np.asarray(alphas, dtype=float)
    gaps = np.empty((len(candidates), len(alphas)))
    for start in range(0, len(candidates), batch_size):
        cand = candidates[start:start + batch_size]
        B = len(cand)
        if dual:
            Xc = Sc[:, cand].transpose(1, 0, 2)          # (B, m, p)
            gram = Xc @ Xc.transpose(0, 2, 1)
            rhs = np.broadcast_to(yc, (B, m)).copy()
        else:
            gram = gram_all[cand[:, :, None], cand[:, None, :]]
            rhs = xty_all[cand]
        Xv = val_X[:, cand]                              # (n_val, B, p)
        xm = x_mean[cand]                                # (B, p)
        for k, a in enumerate(alphas):
            sol = _solve_regularized(gram, rhs, a)
            coef = np.einsum("bmp,bm->bp", Xc, sol) if dual else sol
            intercept = y_mean - np.einsum("bp,bp->b", xm, coef)
            pred = np.einsum("vbp,bp->bv", Xv, coef) + intercept[:, None]
            gaps[start:start + B, k] = np.abs(pred - val_y[None, :]).mean(axis=1)
    return gaps


def ridge_cv_validation_gaps_dual(train_X: np.ndarray, train_y: np.ndarray, val_X: np.ndarray, val_y: np.ndarray,
                                  candidates: np.ndarray, alphas=DEFAULT_ALPHAS,
                                  batch_size: int = 256) -> np.ndarray:
    """Validation MAE of ``RidgeCV(alphas)`` (exact leave-one-out alpha) on every candidate column subset,
    computed entirely in model space -- for few training rows (Random-Search-Learn's exhaustive search).

    Same quantity as fitting :func:`ridge_cv_fit` on ``train_X[:, c]`` and scoring
    ``val_X[:, c]``, without ever forming a coefficient vector: with the columns centred by
    the training means, ``Z = [Xc; Xv - x̄]``, the candidate's products ``K = Xc Xcᵀ`` and
    ``C = (Xv - x̄) Xcᵀ`` come from one batched product, and per alpha ``w = (K + αI)⁻¹ yc``
    gives the leave-one-out residuals ``α w_i / (α [(K + αI)⁻¹]_ii - 1/m)`` (as
    :func:`ridge_cv_fit`'s dual form) and the validation predictions ``ȳ + C w``. Float64;
    agrees with :func:`ridge_cv_fit` to rounding (tested).
    """
    candidates = np.asarray(candidates)
    m = train_X.shape[0]
    x_mean = train_X.mean(axis=0)
    y_mean = float(train_y.mean())
    Z = np.vstack([train_X - x_mean, np.asarray(val_X, dtype=float) - x_mean])
    yc = train_y - y_mean
    diag = np.arange(m)
    gaps = np.empty(len(candidates))
    for start in range(0, len(candidates), batch_size):
        cand = candidates[start:start + batch_size]
        B = len(cand)
        Zs = Z[:, cand].transpose(1, 0, 2)                     # (B, m + n_val, p)
        J = Zs @ Zs[:, :m].transpose(0, 2, 1)                  # (B, m + n_val, m): [K; C]
        K, C = J[:, :m], J[:, m:]
        best_err = np.full(B, np.inf)
        best_pred = np.zeros((B, J.shape[1] - m))
        for a in np.asarray(alphas, dtype=float):
            reg = K.copy()
            reg[:, diag, diag] += a
            inv = np.linalg.inv(reg)
            w = inv @ yc
            h = 1.0 - a * inv[:, diag, diag] + 1.0 / m
            err = ((a * w / (1.0 - h)) ** 2).mean(axis=1)
            better = err < best_err                            # strict: the first alpha wins ties
            best_err = np.where(better, err, best_err)
            best_pred[better] = y_mean + np.einsum("bvm,bm->bv", C[better], w[better])
        gaps[start:start + B] = np.abs(best_pred - val_y[None, :]).mean(axis=1)
    return gaps
