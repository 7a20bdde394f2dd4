"""Anchor-Points-Weighted and Anchor-Points-Predictor ("misses the mark", App. A.2, eqs. 9-11;
Vivek et al. 2023).

Both follow the paper's code (``benchpred/anchor_points.py``); the k-medoids anchor
selection lives in :mod:`benchcast.methods.anchors`. The core set ``C`` is the set of k-medoids
anchors, found by ``kmedoids.fasterpam`` with ``init="random"`` (as the paper's code) and a
seed drawn from the ``fit`` ``rng`` (see :mod:`benchcast.methods.anchors` for how). Duplicate medoids
are dropped, so ``|C| <= n`` and the oracle is asked exactly the anchors.
"""

from __future__ import annotations

import numpy as np

from benchcast.methods.anchors import INITS, select_anchors
from benchcast.methods.base import UNIT, Method, check_budget, register


class _AnchorBase(Method):
    uses_coreset_stream = False
    deterministic_fit = False  # fasterpam's random initialisation (seeded from the fit rng)
    absolute = False

    def __init__(self, init: str = "random", max_iter: int = 100, n_cpu: int = 1):
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {init!r}")
        self.init, self.max_iter, self.n_cpu = init, int(max_iter), int(n_cpu)

    def params(self):
        return {"init": self.init, "max_iter": self.max_iter, "n_cpu": self.n_cpu}

    def _select(self, source, budget, rng):
        check_budget(source, budget)
        return select_anchors(
            source, budget, rng, absolute=self.absolute, init=self.init, max_iter=self.max_iter, n_cpu=self.n_cpu
        )


@register("anchor_points_weighted")
class AnchorPointsWeighted(_AnchorBase):
    """Cluster-size weighted sum of the anchors' scores (eq. 9): ``h(f) = s(f, C)^T theta``.

    Anchors: FasterPAM k-medoids on ``1 - corr`` (item-item Pearson correlation over the
    source models, constant items' NaN set to 0). Every item joins the anchor it is most
    correlated with (``argmax``; ties -- e.g. all constant items -- go to the first anchor in
    the paper code's ``list(set(medoids))`` order); ``theta`` = cluster sizes / N.

    Parameters: ``init`` (``"random"`` as the paper; ``"build"``, ``"first"``), ``max_iter``
    (kmedoids' default 100), ``n_cpu`` (1: kmedoids' reproducible single-threaded variant).
    """

    scores = UNIT

    def fit(self, source, budget, rng):
        sel = self._select(source, budget, rng)
        self.coreset_, self.weights_, self.membership_ = sel.anchors, sel.weights, sel.membership
        return self

    def estimate(self, oracle, rng):
        return oracle.query(self.coreset_) @ self.weights_


def anchor_regression(source: np.ndarray, anchors) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Univariate least squares of every non-anchor item on every anchor, over the source models.

    For floater ``i`` and anchor ``j`` fits ``s(., i) ~ m_ij * s(., j) + b_ij`` exactly as
    ``np.linalg.lstsq([x_j, 1], y_i, rcond=None)`` does, in closed form for all pairs at once:
    ``m = Sxy / Sxx``, ``b = mean(y) - m mean(x)``, ``rss = Syy - m Sxy`` (centered
    cross-products; clipped at 0). An anchor whose design ``[x_j, 1]`` lstsq would call
    rank-deficient (smallest singular value ``<= eps * max(M, 2) *`` largest, e.g. a constant
    column ``x_j = c``) gets lstsq's minimum-norm solution ``theta = v1 (u1 . y) / s1`` -- for
    a constant column ``(m, b) = mean(y) (c, 1) / (c^2 + 1)`` -- and its residual sum of
    squares ``||y - u1 (u1 . y)||^2``.

    Returns ``floaters`` (ascending item indices not in ``anchors``, as the paper's code) and
    ``slopes``, ``intercepts``, ``rss``, each ``(n_floaters, n_anchors)``.
    """
    S = np.asarray(source, dtype=np.float64)
    n_models, n_items = S.shape
    anchors = np.asarray(anchors, dtype=np.int64)
    is_anchor = np.zeros(n_items, bool)
    is_anchor[anchors] = True
    floaters = np.flatnonzero(~is_anchor)
    X, Y = S[:, anchors], S[:, floaters]
    x_mean, y_mean = X.mean(axis=0), Y.mean(axis=0)
    Xc, Yc = X - x_mean, Y - y_mean
    sxx = np.einsum("ij,ij->j", Xc, Xc)
    syy = np.einsum("ij,ij->j", Yc, Yc)
    sxy = Yc.T @ Xc  # (F, A)

    # lstsq's rank decision for each anchor's design matrix [x, 1]
    design = np.stack([X.T, np.ones_like(X.T)], axis=-1)  # (A, M, 2)
    U, sing, Vt = np.linalg.svd(design, full_matrices=False)
    rank1 = sing[:, 1] <= np.finfo(np.float64).eps * max(n_models, 2) * sing[:, 0]

    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.where(rank1, 0.0, sxy / np.where(rank1, 1.0, sxx))
    intercepts = y_mean[:, None] - slopes * x_mean[None, :]
    rss = np.maximum(syy[:, None] - slopes * sxy, 0.0)
    for j in np.flatnonzero(rank1):  # minimum-norm rank-1 solution
        u, v, s1 = U[j, :, 0], Vt[j, 0, :], sing[j, 0]
        proj = u @ Y  # (F,)
        slopes[:, j] = proj * v[0] / s1
        intercepts[:, j] = proj * v[1] / s1
        rss[:, j] = ((Y - np.outer(u, proj)) ** 2).sum(axis=0)
    return floaters, slopes, intercepts, rss


@register("anchor_points_predictor")
class AnchorPointsPredictor(_AnchorBase):
    """Mean of per-item linear predictions from the nearest anchor (eqs. 10-11).

    Anchors: FasterPAM k-medoids on ``1 - |corr|`` (absolute correlation). Every non-anchor
    item ("floater") gets, from each anchor, a univariate least-squares line over the source
    models (:func:`anchor_regression`), and keeps the anchor with the smallest residual sum
    of squares (first anchor in set order on ties). For a target,

        h(f) = mean over floaters i of ( m_i * s(f, a(i)) + b_i ),

    i.e. ``g-bar`` over ``D - C`` only (eq. 10): as in the paper's code, the anchors' own
    observed scores are *not* averaged in. Computed as ``s(f, C) @ c + mean_i b_i`` with
    ``c_j = sum_{i: a(i) = j} m_i / |D - C|``.

    Parameters as :class:`AnchorPointsWeighted`.
    """

    scores = UNIT

    absolute = True

    def fit(self, source, budget, rng):
        sel = self._select(source, budget, rng)
        anchors = sel.anchors
        floaters, slopes, intercepts, rss = anchor_regression(source, anchors)
        nearest = np.argmin(rss, axis=1)  # first anchor on ties
        rows = np.arange(len(floaters))
        m, b = slopes[rows, nearest], intercepts[rows, nearest]
        self.coreset_ = anchors
        self.floaters_, self.nearest_ = floaters, nearest
        self.coef_ = np.bincount(nearest, weights=m, minlength=len(anchors)) / len(floaters)
        self.intercept_ = float(b.mean())
        return self

    def estimate(self, oracle, rng):
        return oracle.query(self.coreset_) @ self.coef_ + self.intercept_
