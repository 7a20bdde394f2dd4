"""The MDAD paper's micro-benchmark selectors (Yauney et al., Section 4.1; the released code's
``microbenchmarks.py``) that the other registries lack. Uniform random sampling is
``random_sampling`` and Anchor Points ``anchor_points_weighted``.

- ``random_subtask_equal`` -- Random (subtask stratified, equal): ``floor(k/t)`` items from each
  of the ``t`` subtasks, one more from ``k mod t`` subtasks drawn at random; the plain mean.
- ``stratified_confidence`` -- Stratified sampling (confidence): strata by k-means on each item's
  mean source confidence, proportional allocation, Horvitz-Thompson estimate.
- ``tinybenchmarks`` -- tinyBenchmarks' IRT anchors (the P-IRT/GP-IRT core set) with their
  cluster-share weighted mean and no IRT correction.
- ``dpp`` -- Diversity: a projection DPP on orthogonal polynomials of the items' embedding
  (Bardenet et al.'s discrete multivariate OPE, the code's ``DPPcoresets``), plain mean.

Methods that read subtasks take ``fit(..., groups=)``: one label per item (None: one group).
"""

from __future__ import annotations

import itertools

import numpy as np

from benchcast.methods.base import UNIT, Method, check_budget, register
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
    then each subtask's items (in subtask order). A subtask with fewer items than its share gives
    all it has and the rest goes, one item at a time, to the subtasks with items left, in a random
    order (ours: the released code asserts that no subtask runs short; on LegalBench's seen half,
    k = 250 over 5 subtasks asks 50 of a 47-item subtask); the extra draw happens only then."""

    scores = UNIT

    uses_item_groups = True

    def fit(self, source, budget, rng, groups=None):
        check_budget(source, budget)
        labels = _groups(groups, source.shape[1])
        sizes = np.bincount(labels)
        n_groups = len(sizes)
        quota = np.full(n_groups, budget // n_groups)
        quota[rng.choice(n_groups, size=budget % n_groups, replace=False)] += 1
        short = int(np.maximum(quota - sizes, 0).sum())
        if short:
            quota = np.minimum(quota, sizes)
            order = rng.permutation(n_groups)
            while short:
                for g in order:
                    if short and quota[g] < sizes[g]:
                        quota[g] += 1
                        short -= 1
        picked = [rng.choice(np.flatnonzero(labels == g), size=quota[g], replace=False) for g in range(n_groups)]
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

    scores = UNIT

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


def monomial_order(k: int, dims: int) -> np.ndarray:
    """The first ``k`` exponent tuples of ``dims`` variables, graded by their largest exponent:
    layer ``j = 0, 1, ..., floor(k ** (1/dims))`` holds the tuples of ``itertools.product(range(j+1),
    repeat=dims)`` that contain ``j``, in lexicographic order (the released code's
    ``compute_ordering``). ``(k, dims)`` ints."""
    top = int(np.floor(k ** (1.0 / dims) + 1e-9))
    out = [t for j in range(top + 1) for t in itertools.product(range(j + 1), repeat=dims) if j in t]
    return np.array(out[:k], dtype=np.int64).reshape(-1, dims)


def sample_projection_dpp(basis: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Exactly ``k`` distinct rows of the projection DPP with kernel ``basis @ basis.T`` (``basis``:
    ``(n, k)`` with orthonormal columns), by the chain rule: pick a row with probability
    proportional to its remaining squared norm, project every row onto the orthogonal complement of
    the picked row, repeat (Hough et al. 2006, Alg. 18; dppy's ``sample_exact``). Item ``i``'s
    inclusion probability is ``K_ii = ||basis_i||^2``."""
    v = np.array(basis, dtype=np.float64, copy=True)
    n, k = v.shape
    picked = np.empty(k, dtype=np.int64)
    for t in range(k):
        mass = np.maximum(np.einsum("ij,ij->i", v, v), 0.0)
        mass[picked[:t]] = 0.0
        i = int(rng.choice(n, p=mass / mass.sum()))
        picked[t] = i
        direction = v[i] / np.sqrt(mass[i])
        v -= np.outer(v @ direction, direction)
    return picked


@register("dpp")
class DiversityDPP(Method):
    """Diversity (the MDAD paper's DPP selector; the released code's ``dpp_selection``).

    1. The items embedded by the source models' confidences in the right answer (0/1 answers
       here), projected on their first ``dims`` (4) principal components (scikit-learn PCA; the
       code's randomized solver approximates the same components).
    2. Items outside the ``trim``-``(1 - trim)`` quantiles (1%-99%) in any component dropped --
       unless fewer than ``k`` would remain, then none (ours: the code's behaviour is undefined).
    3. Each component rescaled to ``[-0.99, 0.99]``; the first ``k`` graded monomials
       (:func:`monomial_order`) evaluated at the items, orthonormalised by QR; ``k`` items drawn
       from the projection DPP of that basis (:func:`sample_projection_dpp`).
    4. The plain mean of the picked items (the code computes OPE weights and ignores them).
    """

    scores = UNIT

    def __init__(self, dims: int = 4, trim: float = 0.01):
        self.dims, self.trim = int(dims), float(trim)

    def params(self):
        return {"dims": self.dims, "trim": self.trim}

    def fit(self, source, budget, rng):
        from sklearn.decomposition import PCA

        check_budget(source, budget)
        x = np.asarray(source, dtype=np.float64).T
        n_comp = min(self.dims, *x.shape)
        z = PCA(n_components=n_comp, svd_solver="full").fit_transform(x)
        low, high = np.quantile(z, self.trim, axis=0), np.quantile(z, 1 - self.trim, axis=0)
        kept = np.flatnonzero(((z >= low) & (z <= high)).all(axis=1))
        if len(kept) < budget:
            kept = np.arange(len(z))
        z = z[kept]
        span = z.max(axis=0) - z.min(axis=0)
        z = 0.99 * (2 * (z - z.min(axis=0)) / np.where(span > 0, span, 1.0) - 1)
        powers = monomial_order(budget, n_comp)
        design = np.prod(z[:, None, :] ** powers[None, :, :], axis=2)
        basis = np.linalg.qr(design, mode="reduced")[0]
        self.coreset_ = kept[sample_projection_dpp(basis, rng)]
        return self

    def estimate(self, oracle, rng):
        return oracle.query(self.coreset_).mean(axis=1)
