"""Clustering on historical results (Zhong, Yi & Ye, Section 3.3, Eq. 5): k-means with as many
clusters as the budget on the items' columns of source results, the item nearest each centre, and
the cluster-size weighted mean of the target's answers on them. The paper found historical results
better embeddings than Sentence-BERT (its Table 1) and gives no k-means settings: scikit-learn's
``KMeans(n_init=10)`` seeded from the method's stream."""

from __future__ import annotations

import warnings

import numpy as np

from benchcast.methods.base import UNIT, Method, check_budget, register


def nearest_distinct(points: np.ndarray, centres: np.ndarray, max_elements: int = 1 << 22) -> np.ndarray:
    """For each centre in turn, the nearest point not taken by an earlier centre (duplicate item
    columns can make one point the nearest of several centres). Distances are computed a block of
    centres at a time (at most ``max_elements`` differences in memory: all of them at once took
    7 GB on QNLI at half its items); the block size does not change a single distance."""
    n, dims = points.shape
    step = max(1, max_elements // max(1, n * dims))
    taken = np.zeros(n, dtype=bool)
    chosen = np.empty(len(centres), dtype=np.int64)
    for start in range(0, len(centres), step):
        block = centres[start : start + step]
        dist = ((points[:, None, :] - block[None, :, :]) ** 2).sum(axis=2)
        for j in range(len(block)):
            nearest = int(np.argmin(np.where(taken, np.inf, dist[:, j])))
            chosen[start + j] = nearest
            taken[nearest] = True
    return chosen


@register("clustering")
class Clustering(Method):
    """Eq. 5: ``sum_j |C_j| f(x_j) / sum_j |C_j|`` over the items ``x_j`` nearest the k-means
    centres of the item columns."""

    scores = UNIT

    def __init__(self, n_init: int = 10):
        self.n_init = int(n_init)

    def params(self):
        return {"n_init": self.n_init}

    def fit(self, source, budget, rng):
        from sklearn.cluster import KMeans  # on first use: the registry import stays light
        from sklearn.exceptions import ConvergenceWarning

        check_budget(source, budget)
        points = np.asarray(source, dtype=np.float64).T
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # fewer distinct columns than clusters
            km = KMeans(n_clusters=budget, n_init=self.n_init, random_state=int(rng.integers(2**31 - 1)))
            labels = km.fit_predict(points)
        self.coreset_ = nearest_distinct(points, km.cluster_centers_)
        self.weights_ = np.bincount(labels, minlength=budget).astype(np.float64)
        return self

    def estimate(self, oracle, rng):
        answers = oracle.query(self.coreset_)
        return answers @ self.weights_ / self.weights_.sum()
