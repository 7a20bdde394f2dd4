"""The MDAD paper's micro-benchmark selectors (Yauney et al., Section 4.1; the released code's
``microbenchmarks.py``) that the other registries lack. Uniform random sampling is
``random_sampling`` and Anchor Points ``anchor_points_weighted``.

- ``random_subtask_equal`` -- Random (subtask stratified, equal): ``floor(k/t)`` items from each
  of the ``t`` subtasks, one more from ``k mod t`` subtasks drawn at random; the plain mean.
- ``stratified_confidence`` -- Stratified sampling (confidence): strata by k-means on each item's
  mean source confidence, proportional allocation, Horvitz-Thompson estimate.
- ``tinybenchmarks`` -- tinyBenchmarks' IRT anchors (the P-IRT/GP-IRT core set) with their
  cluster-share weighted mean and no IRT correction.

Methods that read subtasks take ``fit(..., groups=)``: one label per item (None: one group).
"""

from __future__ import annotations

import numpy as np

from benchcast.errors import BudgetExceeded
from benchcast.methods.base import Method, check_budget, register
from benchcast.methods.irt_methods import _IRTMethod


def _groups(groups, n_items: int) -> np.ndarray:
    if groups is None:
        return np.zeros(n_items, np.int64)
    groups = np.asarray(groups)
    if groups.shape != (n_items,):
        raise ValueError(f"groups must give one label per item ({n_items}), got shape {groups.shape}")
    return np.unique(groups, return_inverse=True)[1].ravel()


@register("random_subtask_equal")
class RandomSubtaskEqual(Method):
    """Random (subtask stratified, equal): equal items per subtask, the plain mean.

    Draws, in order: which ``k mod t`` subtasks get one item more (uniform, without replacement),
    then each subtask's items (in subtask order). A subtask with fewer items than its share is an
    error (the released code asserts the same)."""

    uses_item_groups = True

    def fit(self, source, budget, rng, groups=None):
        check_budget(source, budget)
        labels = _groups(groups, source.shape[1])
        n_groups = int(labels.max()) + 1
        quota = np.full(n_groups, budget // n_groups)
        quota[rng.choice(n_groups, size=budget % n_groups, replace=False)] += 1
        picked = []
        for g in range(n_groups):
            members = np.flatnonzero(labels == g)
            if quota[g] > len(members):
                raise BudgetExceeded(
                    f"random_subtask_equal: subtask {g} has {len(members)} items, fewer than its share "
                    f"{quota[g]} of k={budget}; fix: choose a smaller k"
                )
            picked.append(rng.choice(members, size=quota[g], replace=False))
        self.coreset_ = np.concatenate(picked)
        return self

    def estimate(self, oracle, rng):
        return oracle.query(self.coreset_).mean(axis=1)


def proportional_allocation(sizes: np.ndarray, budget: int) -> np.ndarray:
    """Items per stratum: ``min(round(k * N_h / N), N_h)`` (NumPy's round half to even, as the
    released code); when the rounding overshoots ``k`` (it can by up to half the number of
    strata), the strata rounded up the most give one back each, the first such stratum first --
    ours: the code keeps the extra items, which the Oracle's budget refuses."""
    sizes = np.asarray(sizes, dtype=np.int64)
    share = budget * sizes / sizes.sum()
    alloc = np.minimum(np.round(share).astype(np.int64), sizes)
    excess = int(alloc.sum()) - budget
    if excess > 0:
        order = np.argsort(-(alloc - share), kind="stable")
        alloc[order[:excess]] -= 1
    return alloc


@register("stratified_confidence")
class StratifiedConfidence(Method):
    """Stratified sampling (confidence) with a Horvitz-Thompson estimate.

    1. Each item's proxy: the source models' mean confidence in the right answer -- with 0/1
       data, the items' mean source accuracy (the paper uses the per-option probabilities).
    2. Strata: scikit-learn ``KMeans(n_strata, n_init="auto")`` on the proxies (seeded from the
       fit ``rng``; the code: ``random_state=42``), with at most as many strata as distinct
       proxy values (0/1 data from few sources have fewer than 10).
    3. :func:`proportional_allocation`, each stratum's items drawn uniformly; any shortfall of
       the rounding drawn uniformly from the items not yet picked, whatever their stratum.
    4. ``pi_i = n_h / N_h``; an item picked by the shortfall draw from a stratum allocated none
       gets ``k / N``. Estimate ``(1/N) sum_i y_i / pi_i`` -- not normalised, as the code: it
       can exceed 1.
    """

    def __init__(self, n_strata: int = 10):
        self.n_strata = int(n_strata)

    def params(self):
        return {"n_strata": self.n_strata}

    def fit(self, source, budget, rng):
        from sklearn.cluster import KMeans

        check_budget(source, budget)
        proxy = np.asarray(source, dtype=np.float64).mean(axis=0)
        n_items = len(proxy)
        n_strata = min(self.n_strata, len(np.unique(proxy)))
        km = KMeans(n_clusters=n_strata, n_init="auto", random_state=int(rng.integers(2**31 - 1)))
        strata = km.fit_predict(proxy[:, None])
        sizes = np.bincount(strata, minlength=n_strata)
        alloc = proportional_allocation(sizes, budget)
        picked = [rng.choice(np.flatnonzero(strata == h), size=alloc[h], replace=False) for h in range(n_strata)]
        chosen = np.concatenate(picked)
        shortfall = budget - len(chosen)
        if shortfall > 0:
            rest = np.setdiff1d(np.arange(n_items), chosen)
            chosen = np.concatenate([chosen, rng.choice(rest, size=shortfall, replace=False)])
        pi = (alloc / np.maximum(sizes, 1))[strata[chosen]]
        pi[pi == 0] = budget / n_items
        self.coreset_, self.weights_ = chosen, 1.0 / (n_items * pi)
        return self

    def estimate(self, oracle, rng):
        return oracle.query(self.coreset_) @ self.weights_


@register("tinybenchmarks")
class TinyBenchmarks(_IRTMethod):
    """tinyBenchmarks' IRT anchor points, weighted mean (the MDAD paper's "tinyBenchmarks"):
    the IRT core set P-IRT and GP-IRT use (k-means on the items' ``[discrimination, difficulty]``,
    the item nearest each centre, weights = cluster shares) and ``sum_c w_c y(anchor_c)``, with
    no IRT correction. The IRT settings are P-IRT's (``irt``: the MDAD paper's code fits 10
    dimensions by SVI; benchcast's MAP fit by default)."""

    wants_bias = False

    def estimate(self, oracle, rng):
        return self._query(oracle) @ self.weights_
