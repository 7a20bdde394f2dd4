"""Pairwise Pearson correlation between the columns (or rows) of a matrix with missing values.

For every pair of *variables* ``(a, b)`` -- the columns of ``A`` with ``axis=0``, its rows
with ``axis=1`` -- Pearson's r over the entries both observe (non-finite = missing). The
BenchPress code uses it three ways: the completers BenchKNN / BenchReg / ModelReg
(neighbours and regression lines between benchmarks, :func:`pair_moments`), the reliability
features (each model's / benchmark's strongest partner), and the Section 6.1 hypothesis
tests (strong neighbours and peers); the last two through :func:`pairwise_abs_pearson`.

Conventions of :func:`pairwise_abs_pearson` (the callers choose the fills):

* a pair sharing fewer than ``min_shared`` entries, and every variable with itself (the
  diagonal), get ``below`` -- NaN for the benchmark-side hypothesis tests, 0 for the
  model-side ones (the paper's ``pairwise_abs_r``), ``-inf`` for an argmax;
* a pair where either side is constant over the shared entries (r undefined) gets
  ``constant`` -- NaN, or ``-inf`` for an argmax;
* |r| is capped at 1 (round-off).

Two ways to accumulate the sums, both vectorised:

* ``method="exact"`` -- two passes per pair, as a loop over pairs would do them: each side's
  mean over the shared entries, then the sums of the centred squares and cross products over
  those entries in index order. Pairs are grouped by their number of shared entries, so a
  group is one array operation whose sums add the same numbers in the same order as the
  loop: the result is bitwise that of the loop. A side is constant when
  ``sqrt(Sxx * Syy)`` is not positive.
* ``method="moments"`` -- one pass of masked matrix products (:func:`pair_moments`): fast,
  but ``Sxx = sum x^2 - (sum x)^2 / n`` keeps round-off of the order 1e-10 relative to the
  exact sums on near-collinear pairs, so an exactly constant side is not reliably 0 there;
  a side counts as constant when its standard deviation over the shared entries is at most
  ``rel_tol`` times its standard deviation over all its entries.

:func:`pair_moments` returns the centred moments themselves (means, sums of squares and of
cross products over the shared entries) for callers that need more than |r|: the signed r
(BenchKNN) and least-squares lines (BenchReg). Its two settings (``standardize``) are the
arithmetic of the two one-pass implementations it replaced, kept operation for operation so
that their callers' results stay bitwise the same; mathematically they agree, numerically
they differ by round-off (up to ~1e-10 in r on the BenchPress matrix).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from benchcast.blas import rows_gram

__all__ = ["PairMoments", "pair_moments", "pairwise_abs_pearson"]


@dataclass
class PairMoments:
    """Moments of every (target ``t``, partner ``p``) pair of variables over their shared entries.

    Arrays are (V, V) indexed ``[t, p]``; ``y`` is the target, ``x`` the partner. ``sxx`` and
    ``syy`` are clipped at 0.
    """

    n: np.ndarray  # shared entries
    mean_x: np.ndarray  # mean of the partner over the shared entries
    mean_y: np.ndarray  # mean of the target over the shared entries
    sxx: np.ndarray  # sum (x - mean_x)^2
    syy: np.ndarray  # sum (y - mean_y)^2
    sxy: np.ndarray  # sum (x - mean_x)(y - mean_y)

    def pearson(self) -> np.ndarray:
        """Signed Pearson r; NaN / inf where a pair has no shared entry or a constant side."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sxy / np.sqrt(self.sxx * self.syy)


def _check_axis(axis: int) -> None:
    if axis not in (0, 1):
        raise ValueError(f"axis must be 0 (correlate columns) or 1 (correlate rows), got {axis!r}")


def pair_moments(A: np.ndarray, axis: int = 0, *, standardize: bool = False) -> PairMoments:
    """Centred second moments of all pairs of columns (``axis=0``) or rows (``axis=1``) at once.

    With ``O`` the observed mask and ``X`` the variables shifted to their observed mean
    (``standardize``: and divided by their observed standard deviation, 0 -> 1) and
    zero-filled, masked matrix products give every pair's ``n``, sums, sums of squares and
    cross products over the shared entries. The shift (and scale) leaves every pairwise
    centred moment unchanged and only keeps the raw-moment formulas well conditioned; the
    returned means are in the variables' own units.

    The two settings differ in two further details of operation order, the arithmetic of the
    two implementations this function replaced (results bitwise equal to theirs):

    * ``standardize=False`` (BenchKNN / BenchReg): the partner's sums over the shared entries
      are matrix products of their own, and a centred sum of squares is
      ``sum v^2 - (sum v) * mean_v``;
    * ``standardize=True`` (reliability features, :func:`pairwise_abs_pearson`
      ``method="moments"``): the partner's sums are the transposes of the target's, and a
      centred sum of squares is ``sum v^2 - (sum v)^2 / n`` (cross products likewise).
    """
    _check_axis(axis)
    A = np.asarray(A, dtype=np.float64)
    obs = np.isfinite(A)
    O = obs.astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mu = np.nanmean(A, axis=axis)
        sd = np.nanstd(A, axis=axis) if standardize else None
    mu = np.where(np.isfinite(mu), mu, 0.0)

    def along(v):  # a per-variable vector broadcast against A
        return v[None, :] if axis == 0 else v[:, None]

    def dot(P, Q):  # [t, p] = sum over the entries of variable t of P times variable p of Q
        return P.T @ Q if axis == 0 else P @ Q.T

    if standardize:
        sd = np.where(np.isfinite(sd) & (sd > 0), sd, 1.0)
        X = np.where(obs, (A - along(mu)) / along(sd), 0.0)
    else:
        X = np.where(obs, A - along(mu), 0.0)
    n = dot(O, O)
    sum_y = dot(X, O)
    sum_yy = dot(X * X, O)
    sum_xy = dot(X, X)
    with np.errstate(invalid="ignore", divide="ignore"):
        if standardize:
            sum_x = sum_y.T
            syy = sum_yy - sum_y * sum_y / n
            sxx = syy.T
            sxy = sum_xy - sum_y * sum_x / n
            mean_x = mu[None, :] + sd[None, :] * (sum_x / n)
            mean_y = mu[:, None] + sd[:, None] * (sum_y / n)
        else:
            sum_x = dot(O, X)
            sum_xx = dot(O, X * X)
            mean_x = sum_x / n
            mean_y = sum_y / n
            sxx = sum_xx - sum_x * mean_x
            syy = sum_yy - sum_y * mean_y
            sxy = sum_xy - sum_x * mean_y
            mean_x = mean_x + mu[None, :]
            mean_y = mean_y + mu[:, None]
    return PairMoments(n=n, mean_x=mean_x, mean_y=mean_y, sxx=np.maximum(sxx, 0.0), syy=np.maximum(syy, 0.0), sxy=sxy)


def _exact_abs_r(
    V: np.ndarray, obs: np.ndarray, a: np.ndarray, b: np.ndarray, size: int, constant: float
) -> np.ndarray:
    """|r| of the row pairs ``(a[k], b[k])`` of ``V`` that share exactly ``size`` entries, two-pass."""
    shared = obs[a] & obs[b]
    cols = np.nonzero(shared)[1].reshape(len(a), size)  # each pair's shared entries, in index order
    x = V[a[:, None], cols]
    y = V[b[:, None], cols]
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    den = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.minimum(np.abs((xc * yc).sum(axis=1) / den), 1.0)
    return np.where(den > 0, r, constant)


def pairwise_abs_pearson(
    A: np.ndarray,
    axis: int = 0,
    min_shared: int = 3,
    *,
    below: float = np.nan,
    constant: float = np.nan,
    method: str = "exact",
    rel_tol: float = 1e-6,
    return_counts: bool = False,
):
    """|Pearson r| between every pair of columns (``axis=0``) or rows (``axis=1``) over shared entries.

    Parameters
    ----------
    A : 2-D array, non-finite = missing.
    axis : 0 correlates the columns (over the rows both observe), 1 the rows.
    min_shared : pairs sharing fewer entries get ``below``.
    below : value for pairs below ``min_shared`` and for the diagonal.
    constant : value for pairs with a constant side over their shared entries.
    method : ``"exact"`` (two-pass, bitwise a per-pair loop) or ``"moments"`` (one pass of
        masked matrix products, :func:`pair_moments` with ``standardize=True``); see the
        module docstring.
    rel_tol : ``method="moments"`` only: a side whose standard deviation over the shared
        entries is at most ``rel_tol`` times its overall standard deviation is constant.
    return_counts : also return the (V, V) matrix of shared-entry counts.

    Returns
    -------
    R : (V, V) symmetric array, or ``(R, n)`` with ``return_counts``.
    """
    _check_axis(axis)
    if method not in ("exact", "moments"):
        raise ValueError(f"method must be 'exact' or 'moments', got {method!r}")
    A = np.asarray(A, dtype=np.float64)
    if method == "moments":
        pm = pair_moments(A, axis, standardize=True)
        n = pm.n
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.abs(pm.pearson())
            defined = (np.sqrt(pm.syy / n) > rel_tol) & (np.sqrt(pm.sxx / n) > rel_tol) & np.isfinite(r)
        enough = n >= min_shared
        np.fill_diagonal(enough, False)
        R = np.where(enough, np.where(defined, np.minimum(r, 1.0), constant), below)
    else:
        V = A.T if axis == 0 else A  # variables as rows
        obs = np.isfinite(V)
        O = obs.astype(np.float64)
        n = rows_gram(O)
        R = np.full(n.shape, below, dtype=np.float64)
        a, b = np.triu_indices(len(V), 1)
        size = n[a, b].astype(np.int64)
        keep = size >= min_shared
        a, b, size = a[keep], b[keep], size[keep]
        for k in np.unique(size):
            g = size == k
            R[a[g], b[g]] = R[b[g], a[g]] = _exact_abs_r(V, obs, a[g], b[g], int(k), constant)
    return (R, n) if return_counts else R
