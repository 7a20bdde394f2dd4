"""TailoredBench's building blocks (Yuan et al., "TailoredBench", Sections 3.2-3.5).

A global probe (the G-set), the source models that answer it like the target (native sources),
a core set per target (the N-set: k-medoids with the G-set as fixed medoids) and the calibrated
estimate. Where the paper's text and its released code (marvelcell/TailoredBench @ e33061e)
differ, the code made the published numbers and is followed:

* every embedding is z-scored per column first (the code's ``StandardScaler``: ddof 0, a constant
  column keeps scale 1);
* k-medoids is best-improvement PAM from random medoids (:mod:`benchcast.methods.pam`), not the
  alternating updates of Eqs. 6-7; the G-set's PAM runs at most 5,000 swaps, the N-set's 9,000;
* native sources: a source is "within" the threshold when its distance is ``<=`` the mean
  (Eq. 5 says ``<``), and the count is ``int`` of the mean over targets.

Exact ties. On 0/1 answers a z-scored Manhattan distance is a weighted Hamming distance,
``d(i, j) = sum_s w_s [x_is != x_js]`` with ``w_s = 1 / sd_s``. The weights are rounded to a grid
fine enough that every distance, and every sum PAM forms from them, is an exact float64 number;
distances equal in exact arithmetic are then bit-equal whatever the order of summation, and the
tie rules below decide, never rounding noise. Other metrics (and non-binary scores) are computed
by scipy and then rounded to such a grid.

Ties and randomness. The released code scans items in a random permutation (its CLARA step
shuffles them), so among equally good items PAM takes the first in that order. Here every PAM
gets its own random item order from the caller's generator; items with identical embeddings are
clustered once, as one point weighted by their count (:func:`benchcast.methods.pam.pam_fixed`), and such
a point swapped in is represented by its first item in that order -- the item the released code
would take. Items join the first of equally near medoids, in medoid order (G-set first).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchcast.data.item_level import is_binary
from benchcast.methods.pam import BLOCK_ROWS

METRICS = ("manhattan", "correlation", "cosine")
_SCIPY_METRIC = {"manhattan": "cityblock", "correlation": "correlation", "cosine": "cosine"}
#: float64 has 52 fraction bits; keep this many spare so sums of N weighted distances stay exact
_SPARE_BITS = 2


def zscore_columns(x: np.ndarray) -> np.ndarray:
    """Each column minus its mean over divided by its standard deviation (ddof 0; 1 if constant)."""
    sd = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def _grid(total: float) -> float:
    """A power of two such that multiples of it summing to at most ``total`` are exact float64."""
    return 2.0 ** (int(np.ceil(np.log2(max(total, 1.0)))) + _SPARE_BITS - 52)


class _Auto:
    def __repr__(self) -> str:
        return "AUTO"


#: ``weights`` of :func:`embedding_distances`: work them out from ``x`` (None is "no weights")
AUTO = _Auto()


def hamming_weights(x: np.ndarray, metric: str = "manhattan") -> np.ndarray | None:
    """The weights ``1 / sd`` of the weighted Hamming distance that the z-scored Manhattan distance
    is on 0/1 columns (0 for a constant column: it never differs), or None where ``x`` is not 0/1
    or the metric is another. A caller that measures distances in one ``x`` many times (CLARA's
    samples) works them out once."""
    if metric != "manhattan" or not is_binary(x):
        return None
    sd = x.std(axis=0)
    return np.where(sd > 0, 1.0 / np.where(sd > 0, sd, 1.0), 0.0)


def embedding_distances(
    x: np.ndarray,
    metric: str = "manhattan",
    points: np.ndarray | None = None,
    total_weight: float | None = None,
    to: np.ndarray | None = None,
    weights=AUTO,
) -> np.ndarray:
    """Distances between rows ``points`` (default all) of ``x`` (rows x features) and rows ``to``
    (default: ``points``) after z-scoring the columns of ``x`` over all its rows, on an exact grid
    (module docstring). ``total_weight`` bounds how many distances a caller will add up (default:
    the number of rows of ``x``); ``weights``: :func:`hamming_weights` of ``x`` where the caller
    has them."""
    if metric not in METRICS:
        raise ValueError(f"unknown distance '{metric}'; use one of {', '.join(METRICS)}")
    x = np.asarray(x, dtype=np.float64)
    rows = x if points is None else x[points]
    cols = rows if to is None else x[to]
    n = len(x) if total_weight is None else total_weight
    w = hamming_weights(x, metric) if weights is AUTO else weights
    if w is not None:
        step = _grid(n * w.sum())
        w = np.round(w / step) * step
        # exact (every term is on the grid), so computing it in blocks of rows changes no bit, and
        # d(i, j) and d(j, i) are the same number: the blocks keep the peak at one rows x cols
        # matrix (10,000 items: 0.8 GB), and a square one is computed on and above the diagonal
        # blocks only, then mirrored (half the products)
        a, b = rows @ w, cols @ w
        dist = np.empty((len(rows), len(cols)))
        square = cols is rows
        for start in range(0, len(rows), BLOCK_ROWS):
            block = slice(start, start + BLOCK_ROWS)
            first = start if square else 0
            cross = (rows[block] * w) @ cols[first:].T
            cross *= 2.0
            np.add(a[block, None], b[None, first:], out=dist[block, first:])
            dist[block, first:] -= cross
            if square:
                dist[start:, block] = dist[block, start:].T
        return np.maximum(dist, 0.0, out=dist)
    from scipy.spatial.distance import cdist  # on first use: every workflow job imports the methods

    z = zscore_columns(x)
    z_rows = z if points is None else z[points]
    dist = cdist(z_rows, z_rows if to is None else z[to], _SCIPY_METRIC[metric])
    dist = np.nan_to_num(dist, nan=1.0)  # correlation/cosine of a constant row: "uncorrelated"
    step = _grid(n * max(float(dist.max()), 1.0))
    return np.round(dist / step) * step


@dataclass(frozen=True)
class Patterns:
    """The distinct rows of an items x features embedding."""

    of_item: np.ndarray  # (N,) pattern index of each item
    counts: np.ndarray  # (P,) items per pattern
    dist: np.ndarray  # (P, P) exact-grid distances between patterns (columns z-scored over all items)


def distinct_patterns(
    x: np.ndarray, metric: str = "manhattan", rows: np.ndarray | None = None, weights=AUTO
) -> Patterns:
    """Group identical rows of ``x`` -- or of its rows ``rows``, still z-scored over all of ``x``
    (a CLARA sample) -- (which patterns are numbered how never matters: PAM scans them in the
    caller's item order). ``weights``: as :func:`embedding_distances`'."""
    x = np.asarray(x, dtype=np.float64)
    sub = x if rows is None else x[rows]
    if is_binary(sub):  # 0/1 rows as bytes: 10x faster than np.unique(axis=0)
        packed = np.packbits(sub.astype(bool), axis=1)
        keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
        _, first, of_item, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
    else:
        _, first, of_item, counts = np.unique(sub, axis=0, return_index=True, return_inverse=True, return_counts=True)
    points = first if rows is None else np.asarray(rows)[first]
    return Patterns(of_item.ravel(), counts, embedding_distances(x, metric, points=points, weights=weights))


@dataclass(frozen=True)
class Clustering:
    medoids: np.ndarray  # (K,) item indices, fixed ones first
    labels: np.ndarray  # (N,) position in ``medoids`` of each item's medoid
    swaps: int


def cluster_items(
    patterns: Patterns, fixed: np.ndarray, n_extra: int, rng: np.random.Generator, max_swaps: int, engine: str = "numba"
) -> Clustering:
    """PAM over the items with ``fixed`` medoids and ``n_extra`` more from a random start
    (``engine``: :func:`benchcast.methods.pam.pam_fixed`'s; the same result from either).

    Draws, in this order: the item scan order (a permutation) and the ``n_extra`` initial medoids
    (uniform without replacement among the items not in ``fixed``), as the released code does.
    """
    from benchcast.methods.pam import pam_fixed

    n = len(patterns.of_item)
    fixed = np.asarray(fixed, dtype=np.int64)
    scan = rng.permutation(n)
    init = rng.choice(np.setdiff1d(np.arange(n), fixed), size=n_extra, replace=False)
    position = np.empty(n, np.int64)
    position[scan] = np.arange(n)
    first = np.full(len(patterns.counts), n, np.int64)  # each pattern's first item in scan order
    np.minimum.at(first, patterns.of_item, position)
    items = np.concatenate([fixed, init])
    result = pam_fixed(
        patterns.dist,
        patterns.of_item[items],
        n_fixed=len(fixed),
        weights=patterns.counts,
        order=np.argsort(first, kind="stable"),
        max_swaps=max_swaps,
        tol=0.0,  # the distances are exact (embedding_distances), so any lower cost is real
        engine=engine,
    )
    items[result.moved] = scan[first[result.medoids[result.moved]]]
    return Clustering(items, result.labels[patterns.of_item], result.swaps)


@dataclass(frozen=True)
class Clara:
    """CLARA for the N-set when a benchmark has more than ``min_items`` items: PAM on ``iterations``
    random samples of ``sample`` items (the released code's ARC-Challenge/Hellaswag setting: 750
    items, 10 samples)."""

    min_items: int
    sample: int = 750
    iterations: int = 10


def cluster_items_clara(
    x: np.ndarray,
    fixed: np.ndarray,
    n_extra: int,
    rng: np.random.Generator,
    max_swaps: int,
    metric: str = "manhattan",
    sample: int = 750,
    iterations: int = 10,
    engine: str = "numba",
) -> Clustering:
    """CLARA (Kaufman and Rousseeuw, 1990): :func:`cluster_items` on random samples of ``sample``
    items of ``x`` (items x features) that always hold the ``fixed`` medoids, each result scored by
    its cost over all items; the cheapest wins (the first on a tie), and every item joins its
    nearest medoid (the first of equals, G-set first).

    The released code's CLARA (its forked ``sklearn_extra``) compares each sample's PAM cost with
    the best *full-data* cost, so in effect it keeps its last sample; benchcast keeps the cheapest,
    as CLARA is defined. Columns are z-scored over all items, as the released code scales the
    whole embedding before sampling. Draws per sample: the sample's other items, then
    :func:`cluster_items`'s draws.
    """
    x = np.asarray(x, dtype=np.float64)
    fixed = np.asarray(fixed, dtype=np.int64)
    others = np.setdiff1d(np.arange(len(x)), fixed)
    weights = hamming_weights(x, metric)  # once: every sample's distances are in the same x
    best, best_cost, swaps = None, np.inf, 0
    for _ in range(iterations):
        items = np.concatenate([fixed, rng.choice(others, size=min(sample, len(x)) - len(fixed), replace=False)])
        patterns = distinct_patterns(x, metric, rows=items, weights=weights)
        local = cluster_items(patterns, np.arange(len(fixed)), n_extra, rng, max_swaps, engine)
        medoids = items[local.medoids]
        to_medoids = embedding_distances(x, metric, to=medoids, weights=weights)
        cost = float(to_medoids.min(axis=1).sum())
        swaps += local.swaps
        if cost < best_cost:
            best, best_cost = (medoids, to_medoids.argmin(axis=1)), cost
    return Clustering(best[0], best[1], swaps)


def g_set(
    source: np.ndarray, size: int, rng: np.random.Generator, metric: str = "manhattan", max_swaps: int = 5000
) -> np.ndarray:
    """The G-set (Section 3.2, Eqs. 1-2): ``size`` k-medoids of the items embedded by the source
    models' answers, PAM from a random start; item indices ascending, as the released code sorts
    them (``cc_set.sort()``) -- the order in which they lead every N-set's medoids, so an item
    equally near two G-set medoids joins the lower-numbered one."""
    patterns = distinct_patterns(np.asarray(source).T, metric)
    return np.sort(cluster_items(patterns, np.empty(0, np.int64), size, rng, max_swaps).medoids)


@dataclass(frozen=True)
class Consistency:
    """Distances between every target and every source on the G-set (Section 3.3, Eqs. 3-5)."""

    dist: np.ndarray  # (targets, sources)
    threshold: float  # mean distance over all pairs of models, sources and targets (Eq. 4)
    n_bar: int  # int of the mean number of sources within the threshold per target (Eq. 5), at least 1


def consistency(source_on_g: np.ndarray, target_on_g: np.ndarray, metric: str = "manhattan") -> Consistency:
    models = np.vstack([source_on_g, target_on_g])
    dist = embedding_distances(models, metric)
    n_src = len(source_on_g)
    threshold = float(dist[np.triu_indices(len(models), 1)].mean())
    to_sources = dist[n_src:, :n_src]
    # at least one native source: where targets sit far from every source (the "misses the mark"
    # extrapolation split: the strongest models as targets) the released code's int(mean) can be 0
    return Consistency(to_sources, threshold, max(1, int((to_sources <= threshold).sum(axis=1).mean())))


NATIVE_MODES = ("adaptive", "dynamic", "top", "fraction", "band")


def native_sources(
    cons: Consistency,
    target: int,
    mode: str = "adaptive",
    value=None,
    rng: np.random.Generator | None = None,
    most: int | None = None,
) -> np.ndarray:
    """Row indices (ascending) of target ``target``'s native sources.

    ``adaptive`` (the method, Section 3.3): its ``n_bar`` nearest sources (stable sort, so ties go
    to the lower row). ``dynamic`` (Table 9): every source within the threshold, at least
    ``n_bar``. ``top`` (Figure 4): its ``value`` nearest. ``fraction`` (Figure 3a): a random
    ``round(value * n_bar)`` of the ``n_bar`` nearest (same consistency, fewer models).
    ``band`` (Figure 3b): the sources ranked in ``[lo, hi)`` of the consistency order, with
    ``value = (lo, hi)`` fractions of the sources (same number of models, less consistent).

    ``most`` (not the paper's; None: no limit) keeps at most that many of them, the nearest (ties to
    the lower row): on a whole leaderboard the adaptive count is about half of thousands of sources,
    far past the few tens where the paper's Figure 4 finds the best estimates, and a new model's
    N-set costs in proportion to it.
    """
    d = cons.dist[target]
    order = np.argsort(d, kind="stable")
    if mode == "adaptive":
        keep = order[: cons.n_bar]
    elif mode == "dynamic":
        keep = order[: max(cons.n_bar, int((d <= cons.threshold).sum()))]
    elif mode == "top":
        keep = order[: int(value)]
    elif mode == "fraction":
        nearest = order[: cons.n_bar]
        keep = rng.choice(nearest, size=max(1, int(round(float(value) * cons.n_bar))), replace=False)
    elif mode == "band":
        lo, hi = (int(round(float(f) * len(d))) for f in value)
        keep = order[lo:hi]
    else:
        raise ValueError(f"unknown native-source mode '{mode}'; use one of {', '.join(NATIVE_MODES)}")
    if len(keep) == 0:
        raise ValueError(f"native-source mode '{mode}' ({value}) leaves target {target} no source")
    if most is not None and len(keep) > most:
        keep = keep[np.argsort(d[keep], kind="stable")[:most]]
    return np.sort(keep)


def calibrated_estimate(
    medoid_answers: np.ndarray, medoids: np.ndarray, labels: np.ndarray, native_mean: np.ndarray, calibrate: bool = True
) -> float:
    """Eqs. 8-10: each item's answer is its medoid's, scaled by the native sources' mean on the item
    over their mean on the medoid (both + 0.5), minus 0.5, capped at 1 (the code caps only above);
    the estimate is the mean over all items. ``calibrate=False`` (Table 8) takes the medoid's answer."""
    own = np.asarray(medoid_answers, dtype=np.float64)[labels]
    if not calibrate:
        return float(own.mean())
    scale = (own + 0.5) / (native_mean[medoids][labels] + 0.5)
    return float(np.minimum((native_mean + 0.5) * scale - 0.5, 1.0).mean())
