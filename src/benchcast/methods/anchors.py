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

import numpy as np

from benchcast.blas import rows_gram

INITS = ("random", "build", "first")


_BLOCK_ELEMENTS = 1 << 16  # entries per row block of the element-wise passes (512 KB, in cache)
_TILE = 128  # tile side of the transposing pass (two 128 KB tiles in cache)


def _finish(blk: np.ndarray, inv, row_std: np.ndarray, col_std: np.ndarray, absolute: bool, one_minus: bool) -> None:
    """In place, element-wise: ``c -> (c * inv) / row_std / col_std``, clip, NaN -> 0, |.|, 1 - ."""
    blk *= inv
    blk /= row_std[:, None]
    blk /= col_std[None, :]
    np.clip(blk, -1, 1, out=blk)
    np.nan_to_num(blk, copy=False, nan=0.0)
    if absolute:
        np.abs(blk, out=blk)
    if one_minus:
        np.subtract(1.0, blk, out=blk)


def _correlation_pipeline(source: np.ndarray, absolute: bool, one_minus: bool, fortran: bool = False) -> np.ndarray:
    """``np.corrcoef(source, rowvar=False)``, NaN -> 0, then optionally ``|.|`` and ``1 - .``.

    Bit for bit what the unfused steps give: the covariance product is NumPy's own
    (``np.cov``'s code: the same copy, centring and ``dot`` with the same operand layouts),
    and every later step is element-wise (``c * (1/fact)``, ``/ stddev_i``, ``/ stddev_j``,
    clip to [-1, 1], NaN -> 0, abs, ``1 - c``), so applying them block by block, each block
    still in cache, performs the same IEEE operations on every entry in the same order --
    one pass over the ``N x N`` matrix instead of about a dozen.

    ``fortran=True`` returns the same values in column-major order (an F-contiguous view of
    the transposed buffer), transposing tile pairs in place during that pass. The result is
    not exactly symmetric (``c_ij / s_i / s_j`` and ``c_ji / s_j / s_i`` round differently),
    so the layout matters to code that reads columns -- FasterPAM scans column ``j`` of the
    dissimilarity for every candidate ``j``, contiguous only in column-major order.
    """
    X = np.array(source, ndmin=2, dtype=np.float64).T  # as np.cov(m, rowvar=False)
    if X.shape[0] < 2:  # np.corrcoef's scalar case (c / c): the plain NumPy steps
        with np.errstate(divide="ignore", invalid="ignore"):
            c = np.atleast_2d(np.corrcoef(np.asarray(source, dtype=np.float64), rowvar=False))
        np.nan_to_num(c, copy=False, nan=0.0)
        c = np.abs(c) if absolute else c
        return 1.0 - c if one_minus else c
    avg = np.average(X, axis=1)
    fact = X.shape[1] - 1
    if fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)
        fact = 0.0
    X -= avg[:, None]
    c = np.atleast_2d(rows_gram(X))  # np.cov's np.dot(X, X.T.conj()); X is real
    inv = np.true_divide(1, fact)
    n = c.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        stddev = np.sqrt(np.diagonal(c) * inv)  # sqrt(diag(c * (1/fact)))
        if not fortran:
            step = max(1, _BLOCK_ELEMENTS // max(n, 1))
            for a in range(0, n, step):
                _finish(c[a : a + step], inv, stddev[a : a + step], stddev, absolute, one_minus)
            return c
        # buffer[j, i] <- f(c[i, j]): tile (I, J) goes, finished, to tile (J, I) transposed
        for a in range(0, n, _TILE):
            I = slice(a, a + _TILE)
            for b in range(a, n, _TILE):
                J = slice(b, b + _TILE)
                upper = c[I, J].copy()
                _finish(upper, inv, stddev[I], stddev[J], absolute, one_minus)
                if b == a:
                    c[I, I] = upper.T
                    continue
                lower = c[J, I].copy()
                _finish(lower, inv, stddev[J], stddev[I], absolute, one_minus)
                c[J, I] = upper.T
                c[I, J] = lower.T
    return c.T


def item_correlations(source: np.ndarray, absolute: bool = False) -> np.ndarray:
    """``(N, N)`` item-item Pearson correlations over the source models (rows of ``source``).

    Exactly ``np.corrcoef(source, rowvar=False)`` with NaN (constant items) set to 0, as in
    the paper's code; ``absolute=True`` takes ``|corr|``. Computed in one fused pass over
    the matrix (:func:`_correlation_pipeline`), bit-identical to those NumPy calls. Memory:
    one ``N x N`` float64 array (240 MB at N = 5,463).
    """
    return _correlation_pipeline(source, absolute=absolute, one_minus=False)


def draw_seed(rng: np.random.Generator) -> int:
    """One integer seed for kmedoids, uniform on ``[0, 2**31 - 1)``, drawn from ``rng``."""
    return int(rng.integers(0, 2**31 - 1))


def dedupe_medoids(medoids) -> np.ndarray:
    """``list(set(medoids))`` as the paper's code: distinct medoids in CPython set order."""
    return np.array(list(set(int(m) for m in medoids)), dtype=np.int64)


def kmedoids_anchors(
    dissimilarity: np.ndarray,
    n: int,
    rng: np.random.Generator,
    *,
    init: str = "random",
    max_iter: int = 100,
    n_cpu: int = 1,
) -> np.ndarray:
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
        kmedoids = _import_kmedoids()
        res = kmedoids.fasterpam(
            dissimilarity, medoids, max_iter=int(max_iter), init=init, random_state=seed, n_cpu=int(n_cpu)
        )
    return dedupe_medoids(res.medoids)


def _import_kmedoids():
    """The ``kmedoids`` package without the scikit-learn import it makes for its estimator class.

    kmedoids imports ``sklearn.base`` at import time only to derive its ``KMedoids`` estimator
    (falling back to ``object`` when scikit-learn is missing); we call only its ``fasterpam``
    function, and the import cost every Anchor-Points job ~0.6 s. So when scikit-learn is not
    loaded yet it is hidden during that one import (``sys.modules[name] = None`` makes the
    import fail) and restored right after; later imports of scikit-learn are unaffected.
    """
    import sys

    if "kmedoids" in sys.modules or "sklearn" in sys.modules:
        import kmedoids

        return kmedoids
    sys.modules["sklearn"] = None
    try:
        import kmedoids
    finally:
        del sys.modules["sklearn"]
    return kmedoids


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

    Bit-identical to ``1.0 - item_correlations(source, absolute)``, in the same fused pass,
    but stored column-major (F-contiguous): FasterPAM reads the matrix by columns, ~4x
    faster than from the row-major array on N = 5,463 items, with identical results (same
    values, only the memory layout differs).

    The last result is kept (one entry): in the extrapolation split every trial has the same
    source models, so the N x N matrix (~1 s and 240 MB at N = 5,463) is computed once per job
    instead of once per trial. The key is a digest of the source matrix's bytes.
    """
    src = np.ascontiguousarray(source, dtype=np.float64)
    key = (bool(absolute), src.shape, hashlib.blake2b(src.tobytes(), digest_size=16).hexdigest())
    hit = _DISSIMILARITY_CACHE.get(key)
    if hit is not None:
        return hit
    dissimilarity = _correlation_pipeline(src, absolute=absolute, one_minus=True, fortran=True)
    dissimilarity.flags.writeable = False
    _DISSIMILARITY_CACHE.clear()
    _DISSIMILARITY_CACHE[key] = dissimilarity
    return dissimilarity


@dataclass
class AnchorSelection:
    anchors: np.ndarray  # (n_a,) item indices, n_a <= n, in set order
    membership: np.ndarray  # (N,) index into ``anchors`` of each item's cluster
    weights: np.ndarray  # (n_a,) cluster size / N


def select_anchors(
    source: np.ndarray,
    n: int,
    rng: np.random.Generator,
    *,
    absolute: bool = False,
    init: str = "random",
    max_iter: int = 100,
    n_cpu: int = 1,
) -> AnchorSelection:
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
    return AnchorSelection(anchors=anchors, membership=membership, weights=cluster_weights(membership, len(anchors)))
