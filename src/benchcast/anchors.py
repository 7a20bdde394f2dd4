"""K-medoids anchor selection over item-item correlations (Anchor Points, Vivek et al. 2023).

Shared by Anchor-Points-Weighted / -Predictor ("misses the mark", App. A.2, eqs. 9-11) and
reusable by other studies (TailoredBench, MDAD). The steps follow the paper's code
(``benchpred/anchor_points.py``, itself adapted from the AnchorPoints repository):

1. :func:`item_correlations` -- ``np.corrcoef(source, rowvar=False)``: the Pearson
   correlation between two items' score columns over the source models; constant items
   (zero variance: NaN correlations) get correlation 0 with everything, themselves included.
2. :func:`kmedoids_anchors` -- ``kmedoids.fasterpam`` on a dissimilarity (``1 - corr`` for
   the weighted variant, ``1 - |corr|`` for the predictor), ``init="random"`` as the
   paper's code, then ``list(set(medoids))`` (:func:`dedupe_medoids`).
3. :func:`assign_to_anchors` / :func:`cluster_weights` -- every item joins the anchor it is
   most correlated with (``argmax``, first anchor on ties); an anchor's weight is its
   cluster's size over ``N`` (empty clusters weigh 0).

Randomness. The paper's code seeds NumPy's global generator and lets ``fasterpam`` draw
from it. Here one integer seed is drawn from the caller's ``rng`` (:func:`draw_seed`,
uniform on ``[0, 2**31 - 1)``, the range kmedoids itself draws seeds from) and passed as
``random_state``; kmedoids turns it into a ``RandomState`` for the random initial medoids
and into the seed of its shuffled processing order. ``n_cpu`` defaults to 1: kmedoids'
default (-1) switches to its multi-threaded variant for ``N >= 1000``, whose result may
depend on the thread count; the single-threaded randomized variant is reproducible.

Anchor order. ``list(set(medoids))`` orders anchors by CPython's set iteration order
(deterministic for integers: it depends only on the values and insertion order). We keep
it because it decides ties in the ``argmax`` -- notably every constant item (correlation
0 with every anchor) joins the *first* anchor in this order, as in the paper's code.
"""

from __future__ import annotations

import hashlib

import warnings
from dataclasses import dataclass

import kmedoids
import numpy as np

INITS = ("random", "build", "first")


def item_correlations(source: np.ndarray, absolute: bool = False) -> np.ndarray:
    """``(N, N)`` item-item Pearson correlations over the source models (rows of ``source``).

    Exactly ``np.corrcoef(source, rowvar=False)`` with NaN (constant items) set to 0, as in
    the paper's code; ``absolute=True`` takes ``|corr|`` (in place). Memory: one ``N x N``
    float64 array (240 MB at N = 5,463).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = np.corrcoef(np.asarray(source, dtype=np.float64), rowvar=False)
    corr = np.atleast_2d(corr)
    np.nan_to_num(corr, copy=False, nan=0.0)
    if absolute:
        np.abs(corr, out=corr)
    return corr


def draw_seed(rng: np.random.Generator) -> int:
    """One integer seed for kmedoids, uniform on ``[0, 2**31 - 1)``, drawn from ``rng``."""
    return int(rng.integers(0, 2**31 - 1))


def dedupe_medoids(medoids) -> np.ndarray:
    """``list(set(medoids))`` as the paper's code: distinct medoids in CPython set order."""
    return np.array(list(set(int(m) for m in medoids)), dtype=np.int64)


def kmedoids_anchors(dissimilarity: np.ndarray, n: int, rng: np.random.Generator, *,
                     init: str = "random", max_iter: int = 100, n_cpu: int = 1) -> np.ndarray:
    """Medoid item indices of a FasterPAM k-medoids clustering into ``n`` clusters.

    ``init`` is kmedoids' initialisation (``"random"`` as the paper's code; ``"build"``,
    ``"first"``); ``max_iter`` kmedoids' default 100. A seed is drawn from ``rng`` in every
    case (it also shuffles FasterPAM's processing order). Returns the deduplicated medoids
    (:func:`dedupe_medoids`), at most ``n`` of them.
    """
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    seed = draw_seed(rng)
    medoids = int(n)
    with warnings.catch_warnings():
        if init == "first":
            # kmedoids 0.5.5 builds np.arange(n) (int64) for "first", which its Rust core
            # rejects; pass the same initial medoids as uintp (the seed still shuffles the
            # processing order, despite kmedoids' "seed will be ignored" warning)
            medoids = np.arange(int(n), dtype=np.uintp)
            warnings.filterwarnings("ignore", message="Seed will be ignored")
        res = kmedoids.fasterpam(dissimilarity, medoids, max_iter=int(max_iter), init=init,
                                 random_state=seed, n_cpu=int(n_cpu))
    return dedupe_medoids(res.medoids)


def assign_to_anchors(anchor_similarity: np.ndarray) -> np.ndarray:
    """Cluster of every item: ``argmax`` over anchors (rows) of ``(n_anchors, N)`` similarities.

    Ties go to the first anchor in row order (NumPy's ``argmax``), as the paper's code.
    """
    return np.argmax(anchor_similarity, axis=0)


def cluster_weights(membership: np.ndarray, n_anchors: int) -> np.ndarray:
    """Cluster sizes over the number of items; anchors with empty clusters weigh 0."""
    sizes = np.bincount(membership, minlength=n_anchors).astype(np.float64)
    return sizes / sizes.sum()


_DISSIMILARITY_CACHE: dict = {}


def item_dissimilarity(source: np.ndarray, absolute: bool = False) -> np.ndarray:
    """``1 - corr`` (or ``1 - |corr|``) of :func:`item_correlations`, formed in place, read-only.

    The last result is kept (one entry): in the extrapolation split every trial has the same
    source models, so the N x N matrix (~1 s and 240 MB at N = 5,463) is computed once per job
    instead of once per trial. The key is a digest of the source matrix's bytes.
    """
    src = np.ascontiguousarray(source, dtype=np.float64)
    key = (bool(absolute), src.shape, hashlib.blake2b(src.tobytes(), digest_size=16).hexdigest())
    hit = _DISSIMILARITY_CACHE.get(key)
    if hit is not None:
        return hit
    corr = item_correlations(src, absolute=absolute)
    dissimilarity = np.subtract(1.0, corr, out=corr)
    dissimilarity.flags.writeable = False
    _DISSIMILARITY_CACHE.clear()
    _DISSIMILARITY_CACHE[key] = dissimilarity
    return dissimilarity


@dataclass
class AnchorSelection:
    anchors: np.ndarray      # (n_a,) item indices, n_a <= n, in set order
    membership: np.ndarray   # (N,) index into ``anchors`` of each item's cluster
    weights: np.ndarray      # (n_a,) cluster size / N


def select_anchors(source: np.ndarray, n: int, rng: np.random.Generator, *, absolute: bool = False,
                   init: str = "random", max_iter: int = 100, n_cpu: int = 1) -> AnchorSelection:
    """Anchor items of ``source`` (models x items) by k-medoids on ``1 - corr`` (or ``1 - |corr|``).

    Memberships and weights use the same (absolute or signed) correlations as the
    distances. Memory-wise, the dissimilarity is formed in place over the correlation
    matrix and the anchors' rows are recovered as ``1 - (1 - corr)``: this may differ from
    ``corr`` by one rounding (<= 1.1e-16), is monotone and maps equal values to equal values,
    so exact ties in the ``argmax`` stay ties.
    """
    dissimilarity = item_dissimilarity(source, absolute=absolute)
    anchors = kmedoids_anchors(dissimilarity, n, rng, init=init, max_iter=max_iter, n_cpu=n_cpu)
    similarity = 1.0 - dissimilarity[anchors]
    membership = assign_to_anchors(similarity)
    return AnchorSelection(anchors=anchors, membership=membership,
                           weights=cluster_weights(membership, len(anchors)))
