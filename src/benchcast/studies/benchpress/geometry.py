"""Rank-2 geometry of the BenchPress score matrix (BenchPress Section 3.3, Figure 4, Table 2)
and the threshold filter that produced the matrix (Section 3.1, Table 1).

Three pieces, all pure functions of the arrays passed in (no file I/O, deterministic):

* :func:`rank_sweep` -- *Evidence 1* of Section 3.3 (Figure 4): held-out error of
  Soft-Impute completion at each rank, in raw-score ("identity") and logit-score space, on
  the paper's folds.
* :func:`complete_submatrices`, :func:`svd_spectrum`, :func:`submatrix_svd_table` --
  *Evidence 2* (Table 2): the spectrum of fully-observed submatrices after column
  mean-centering (variance explained by the top components, stable rank
  ``||M||_F^2 / sigma_1^2``).
* :func:`threshold_filter`, :func:`threshold_sweep` -- the minimum-observation filter of
  Section 3.1 iterated to a fixed point, and its sweep over a threshold grid (Table 1).

Where the paper's text is silent, the paper's released code (``microsoft/benchpress``) is
followed; each such point is stated as "the paper's code does X" where it is used.

A note on Table 1: only the already filtered 84 x 133 matrix (website ``data.json``) is
available here, not the 188 x 316 audit pool, so the unfiltered row and the rows with a
looser threshold than the adopted (15, 8) on either axis cannot be reproduced. Rows whose
thresholds are at least (15, 8) on *both* axes can: the iterated filter returns the unique
largest row/column set in which every row and column meets its threshold (a cell that
belongs to such a set is never removed, whatever the order of removals), and that set is
contained in the (15, 8) result, so filtering the 84 x 133 matrix gives the same matrix
as filtering the full pool. :func:`threshold_sweep` marks those rows with ``reproducible``.
On the website matrix these rows give the paper's Table 1 numbers, and (20, 16), which the
paper's code lists in its grid but the paper's table does not show, keeps nothing (the
code skips empty settings).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchcast.completion.evaluation import Fold, evaluate_predictor, summarize_folds, validate_folds
from benchcast.completion.pipeline import predict_scores
from benchcast.stats.metrics import completion_errors

__all__ = [
    "PAPER_RANKS",
    "PAPER_BENCHMARK_COUNTS",
    "PAPER_THRESHOLD_GRID",
    "PAPER_THRESHOLDS",
    "soft_impute_predictor",
    "rank_sweep",
    "CompleteSubmatrix",
    "complete_submatrices",
    "largest_complete_submatrix",
    "explained_variance_ratio",
    "svd_spectrum",
    "submatrix_svd_table",
    "FilterResult",
    "threshold_filter",
    "threshold_sweep",
]

PAPER_RANKS = tuple(range(1, 11))
"""Soft-Impute ranks of Figure 4 (the paper's code sweeps ranks 1..10)."""

PAPER_BENCHMARK_COUNTS = (4, 7, 10, 13)
"""Benchmark-coverage levels of Table 2 (the paper's code: ``TARGET_BENCHMARK_COUNTS``)."""

PAPER_THRESHOLD_GRID = ((10, 8), (10, 12), (10, 16), (15, 8), (15, 12), (15, 16), (20, 8), (20, 12), (20, 16))
"""(min observations per model, per benchmark) pairs of Table 1, in the paper's order."""

PAPER_THRESHOLDS = (15, 8)
"""The adopted filter setting (Section 3.1): >= 15 observations per model, >= 8 per benchmark."""


# --------------------------------------------------------------------------- Figure 4: rank sweep


def soft_impute_predictor(
    rank: int, transform: str, *, clip_identity: bool = False, max_iter: int = 100, tol: float = 1e-4
):
    """A ``predict(M_train) -> M_pred`` function: Soft-Impute at ``rank`` in ``transform`` space.

    Both spaces go through :func:`~benchcast.completion.pipeline.predict_scores` (transform,
    column z-score, Soft-Impute, inverse). The paper's code differs between the two curves of
    Figure 4 only in the clipping, which is reproduced here:

    * raw space: the paper's code calls its Soft-Impute on the raw training matrix in its
      standalone mode (internal column z-score, then de-normalization) and does *not* clip
      predictions to [0, 100]. With ``clip_identity=False`` (default) no column is treated
      as a percentage column, which for the identity transform only switches the clipping
      off; ``clip_identity=True`` clips percentage columns as our pipeline does elsewhere;
    * logit space: the paper's code wraps Soft-Impute in its transform + z-score predictor
      (percentage columns by the observed-range rule, clipped to [0, 100]), i.e. exactly
      ``predict_scores(M_train, "logit", "soft_impute", ...)``.
    """
    params = {"rank": int(rank), "max_iter": int(max_iter), "tol": float(tol)}
    no_clip = transform == "identity" and not clip_identity

    def predict(M_train: np.ndarray) -> np.ndarray:
        pct = np.zeros(M_train.shape[1], dtype=bool) if no_clip else None
        return predict_scores(M_train, transform, "soft_impute", params, is_percentage=pct)

    return predict


def rank_sweep(
    M: np.ndarray,
    folds: Sequence[Fold],
    ranks: Iterable[int] = PAPER_RANKS,
    transforms: Sequence[str] = ("identity", "logit"),
    *,
    clip_identity: bool = False,
    max_iter: int = 100,
    tol: float = 1e-4,
    blas_threads: int | None = 1,
) -> pd.DataFrame:
    """Held-out error of Soft-Impute at each rank in each score space (Section 3.3, Figure 4).

    For every (transform, rank) the predictor of :func:`soft_impute_predictor` is run on every
    fold (training matrix = ``M`` with the fold's cells hidden,
    :func:`~benchcast.completion.evaluation.evaluate_predictor`) and scored on the held-out
    cells.

    Parameters
    ----------
    M : (n_models, n_benchmarks) array of scores, NaN = missing.
    folds : held-out folds (e.g. the paper's ``folds_s10_f3_bs42_ms1.json`` via
        :func:`~benchcast.completion.evaluation.load_folds`); every held-out cell must be
        observed in ``M``.
    ranks : Soft-Impute ranks; default 1..10 as the paper's code.
    transforms : score spaces; ``"identity"`` is the paper's raw space.
    clip_identity, max_iter, tol : see :func:`soft_impute_predictor` and
        :func:`~benchcast.completion.completers.soft_impute` (the paper's code: 100
        iterations, tolerance 1e-4).
    blas_threads : BLAS threads during the sweep (``None``: leave as is). The SVDs are of an
        84 x 133 matrix, where threads only add overhead -- and oversubscribe a busy machine
        (the paper's ``run.sh`` likewise pins ``OMP/MKL/OPENBLAS_NUM_THREADS=1``).

    Returns
    -------
    pandas.DataFrame
        One row per (transform, rank), in the given order, with columns

        * ``transform``, ``rank``;
        * ``medape`` (%), ``medae`` (score points): **pooled** over the held-out cells of all
          folds together -- the paper's code for Figure 4 pools every fold's cells into one
          vector before taking the medians;
        * ``coverage``: share of held-out cells with a finite prediction; ``n_cells``: number
          of held-out cells (summed over folds);
        * ``medape_fold_median``, ``medae_fold_median``, ``n_folds``: the median over folds of
          the per-fold pooled metrics (:func:`~benchcast.completion.evaluation.summarize_folds`,
          the convention of the paper's method-comparison tables), for reference.
    """
    M = np.asarray(M, dtype=np.float64)
    folds = list(folds)
    validate_folds(folds, ~np.isnan(M))
    ranks = [int(r) for r in ranks]
    if not ranks or min(ranks) < 1:
        raise ValueError(f"ranks must be positive integers, got {ranks}")
    if blas_threads is None:
        return _rank_sweep(M, folds, ranks, transforms, clip_identity, max_iter, tol)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(int(blas_threads)):
        return _rank_sweep(M, folds, ranks, transforms, clip_identity, max_iter, tol)


def _rank_sweep(M, folds, ranks, transforms, clip_identity, max_iter, tol) -> pd.DataFrame:
    rows = []
    for transform in transforms:
        for rank in ranks:
            predict = soft_impute_predictor(rank, transform, clip_identity=clip_identity, max_iter=max_iter, tol=tol)
            cells = evaluate_predictor(M, folds, predict)
            pooled = completion_errors(cells["actual"].to_numpy(), cells["predicted"].to_numpy())
            _, summary = summarize_folds(cells)
            s = summary.iloc[0]
            rows.append(
                {
                    "transform": transform,
                    "rank": rank,
                    "medape": pooled["medape"],
                    "medae": pooled["medae"],
                    "coverage": pooled["n"] / pooled["n_total"] if pooled["n_total"] else float("nan"),
                    "n_cells": pooled["n_total"],
                    "medape_fold_median": float(s["medape"]),
                    "medae_fold_median": float(s["medae"]),
                    "n_folds": int(s["n_folds"]),
                }
            )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- Table 2: complete submatrices


@dataclass(frozen=True)
class CompleteSubmatrix:
    """A fully-observed submatrix: row (model) and column (benchmark) indices into ``M``.

    ``rows`` ascending; ``cols`` in the order they were chosen (descending coverage).
    """

    rows: np.ndarray
    cols: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.rows), len(self.cols)

    def take(self, M: np.ndarray) -> np.ndarray:
        """The submatrix ``M[rows][:, cols]``."""
        return np.asarray(M)[np.ix_(self.rows, self.cols)]


def _coverage_order(obs: np.ndarray) -> np.ndarray:
    """Benchmarks by descending number of observed models, ties by lower column index.

    The paper's code uses ``np.argsort(-coverage)`` (default, unstable sort); a stable sort
    is used here so ties are broken deterministically. On the 84 x 133 matrix the two give
    the same Table 2 submatrices.
    """
    return np.argsort(-obs.sum(axis=0), kind="stable")


def complete_submatrices(
    M: np.ndarray, benchmark_counts: Iterable[int] = PAPER_BENCHMARK_COUNTS, min_models: int = 2
) -> list[CompleteSubmatrix]:
    """The fully-observed submatrix at each benchmark-coverage level (Table 2).

    The paper's code (``find_complete_submatrix_for_benchmark_count``) does, for each count
    ``k``: take the ``k`` benchmarks observed for the most models, and keep every model
    observed on all ``k`` of them. This is the largest model subset complete on those
    benchmarks (not a search over all k-subsets of benchmarks).

    Parameters
    ----------
    M : (n_models, n_benchmarks) array, NaN = missing.
    benchmark_counts : the coverage levels; default (4, 7, 10, 13) as the paper's code.
    min_models : fewer complete models than this is an error (the paper's code requires 2:
        one model leaves nothing after centering).

    Returns
    -------
    list of :class:`CompleteSubmatrix`, one per count, in the given order.

    Raises
    ------
    ValueError
        A count is not in ``1..n_benchmarks`` or yields fewer than ``min_models`` models.
    """
    obs = ~np.isnan(np.asarray(M, dtype=np.float64))
    order = _coverage_order(obs)
    out = []
    for k in benchmark_counts:
        k = int(k)
        if not 1 <= k <= obs.shape[1]:
            raise ValueError(f"benchmark count {k} outside 1..{obs.shape[1]}")
        cols = order[:k]
        rows = np.flatnonzero(obs[:, cols].all(axis=1))
        if len(rows) < min_models:
            raise ValueError(
                f"only {len(rows)} models are observed on all of the {k} best-covered benchmarks (need {min_models})"
            )
        out.append(CompleteSubmatrix(rows=rows, cols=cols.copy()))
    return out


def largest_complete_submatrix(M: np.ndarray, min_benchmarks: int = 5) -> CompleteSubmatrix:
    """The largest-area complete submatrix over benchmark-coverage prefixes.

    The paper's code (``find_largest_complete_submatrix``, its stable-rank diagnostic) takes,
    for every ``k >= min_benchmarks``, the ``k`` best-covered benchmarks and the models
    complete on them, and keeps the ``k`` with the most cells (first such ``k`` on ties).
    """
    obs = ~np.isnan(np.asarray(M, dtype=np.float64))
    order = _coverage_order(obs)
    best = CompleteSubmatrix(rows=np.empty(0, dtype=np.int64), cols=np.empty(0, dtype=np.int64))
    best_area = 0
    for k in range(int(min_benchmarks), obs.shape[1] + 1):
        cols = order[:k]
        rows = np.flatnonzero(obs[:, cols].all(axis=1))
        if len(rows) and len(rows) * k > best_area:
            best, best_area = CompleteSubmatrix(rows=rows, cols=cols.copy()), len(rows) * k
    return best


def _centered_singular_values(sub: np.ndarray, center: bool) -> np.ndarray:
    A = np.asarray(sub, dtype=np.float64)
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"expected a non-empty 2-D matrix, got shape {A.shape}")
    if not np.isfinite(A).all():
        raise ValueError("the submatrix must be fully observed (no NaN / inf)")
    if center:
        A = A - A.mean(axis=0)
    s = np.linalg.svd(A, compute_uv=False)
    if not s.size or s[0] <= 0:
        raise ValueError("the (centered) submatrix is zero: no variance to decompose")
    return s


def explained_variance_ratio(sub: np.ndarray, center: bool = True) -> np.ndarray:
    """``sigma_i^2 / sum_j sigma_j^2`` of the (column mean-centered) submatrix, descending.

    Section 3.3 mean-centers each benchmark column before the SVD, so the ratios are those of
    PCA on the submatrix; they sum to 1.
    """
    s2 = _centered_singular_values(sub, center) ** 2
    return s2 / s2.sum()


def svd_spectrum(sub: np.ndarray, center: bool = True, top: Sequence[int] = (1, 2, 3)) -> dict:
    """Table 2 statistics of one fully-observed submatrix.

    After column mean-centering (``center=True``, as Section 3.3 and the paper's code), from
    the singular values ``sigma``:

    * ``var_top{k}``: cumulative variance explained by the first ``k`` components,
      ``sum_{i<=k} sigma_i^2 / sum_i sigma_i^2`` (all components if fewer than ``k`` exist,
      as the paper's code does for top 2);
    * ``stable_rank``: ``||M||_F^2 / sigma_1^2 = sum_i sigma_i^2 / sigma_1^2`` (>= 1; 1 iff
      rank 1).

    The SVD is of the raw scores on their own scales (the paper's code does not z-score the
    columns), so wide-range columns weigh more.
    """
    A = np.asarray(sub, dtype=np.float64)
    s = _centered_singular_values(A, center)
    s2 = s**2
    cum = np.cumsum(s2) / s2.sum()
    out = {"n_models": int(A.shape[0]), "n_benchmarks": int(A.shape[1])}
    for k in top:
        out[f"var_top{int(k)}"] = float(cum[min(int(k), len(cum)) - 1])
    out["stable_rank"] = float(s2.sum() / s2[0])
    return out


def submatrix_svd_table(
    M: np.ndarray,
    benchmark_counts: Iterable[int] = PAPER_BENCHMARK_COUNTS,
    center: bool = True,
    min_models: int = 2,
    benchmark_ids: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Table 2: :func:`svd_spectrum` of each :func:`complete_submatrices` submatrix.

    Returns one row per benchmark count with ``n_benchmarks, n_models, var_top1, var_top2,
    var_top3, stable_rank`` and ``benchmarks`` (the chosen column ids -- ``benchmark_ids``
    if given, else column indices).
    """
    M = np.asarray(M, dtype=np.float64)
    rows = []
    for sm in complete_submatrices(M, benchmark_counts, min_models=min_models):
        spec = svd_spectrum(sm.take(M), center=center)
        names = [benchmark_ids[j] for j in sm.cols] if benchmark_ids is not None else [int(j) for j in sm.cols]
        rows.append(
            {
                "n_benchmarks": spec["n_benchmarks"],
                "n_models": spec["n_models"],
                "var_top1": spec["var_top1"],
                "var_top2": spec["var_top2"],
                "var_top3": spec["var_top3"],
                "stable_rank": spec["stable_rank"],
                "benchmarks": names,
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- Table 1: threshold filter


@dataclass(frozen=True)
class FilterResult:
    """Outcome of :func:`threshold_filter`.

    Attributes
    ----------
    rows, cols : ascending indices of the kept models / benchmarks in the input matrix.
    matrix : the filtered matrix ``M[rows][:, cols]``.
    passes : filtering passes run, the last of which removed nothing (the paper's code's
        ``iterations``; 1 for a matrix that already is a fixed point).
    """

    rows: np.ndarray
    cols: np.ndarray
    matrix: np.ndarray
    passes: int

    @property
    def n_observed(self) -> int:
        return int((~np.isnan(self.matrix)).sum())

    @property
    def fill(self) -> float:
        """Observed share of the kept cells; 0 for an empty result (as the paper's code)."""
        return self.n_observed / self.matrix.size if self.matrix.size else 0.0


def threshold_filter(M: np.ndarray, min_per_model: int, min_per_bench: int, max_passes: int = 50) -> FilterResult:
    """Keep models with >= ``min_per_model`` and benchmarks with >= ``min_per_bench`` observed
    cells, iterated to a fixed point (Section 3.1).

    Each pass counts the observed cells of every row and column *within the currently kept
    matrix* and drops, at once, the rows and the columns below their threshold; passes repeat
    until one removes nothing. This is what the paper's code (``_iterate_threshold``) does,
    including two details:

    * a threshold ``<= 0`` disables that axis, but rows / columns without any observed cell
      are always dropped (the code works on the list of observed cells, so an empty row or
      column never appears);
    * at most ``max_passes`` passes (the code: 50), else ``RuntimeError``.

    The result is the largest row/column set in which every kept row and column meets its
    threshold, independent of the order of removals.
    """
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2:
        raise ValueError(f"expected a 2-D models x benchmarks matrix, got shape {M.shape}")
    obs = ~np.isnan(M)
    tm, tb = max(int(min_per_model), 1), max(int(min_per_bench), 1)
    keep_r = np.ones(M.shape[0], dtype=bool)
    keep_c = np.ones(M.shape[1], dtype=bool)
    for p in range(1, int(max_passes) + 1):
        sub = obs & keep_r[:, None] & keep_c[None, :]
        new_r = keep_r & (sub.sum(axis=1) >= tm)
        new_c = keep_c & (sub.sum(axis=0) >= tb)
        if np.array_equal(new_r, keep_r) and np.array_equal(new_c, keep_c):
            rows, cols = np.flatnonzero(keep_r), np.flatnonzero(keep_c)
            return FilterResult(rows=rows, cols=cols, matrix=M[np.ix_(rows, cols)], passes=p)
        keep_r, keep_c = new_r, new_c
    raise RuntimeError(f"threshold filter did not converge after {max_passes} passes")


def threshold_sweep(
    M_raw: np.ndarray,
    grid: Iterable[tuple[int, int]] = PAPER_THRESHOLD_GRID,
    include_unfiltered: bool = True,
    drop_empty: bool = True,
    base_thresholds: tuple[int, int] | None = None,
) -> pd.DataFrame:
    """Table 1: the matrix left by :func:`threshold_filter` at each (model, benchmark) threshold.

    Parameters
    ----------
    M_raw : the matrix to filter (the paper: its canonicalized audit pool).
    grid : (min_per_model, min_per_bench) pairs; default the paper's nine.
    include_unfiltered : prepend a row for ``M_raw`` itself (thresholds 0, 0; the paper's
        "(unfiltered)" row, which counts only non-empty rows and columns).
    drop_empty : leave out settings that keep nothing (the paper's code skips them).
    base_thresholds : if ``M_raw`` is itself the output of the filter at these thresholds
        (e.g. ``(15, 8)`` for the 84 x 133 website matrix), the column ``reproducible`` says
        which rows equal what the filter gives on the original pool: those with both
        thresholds at least the base ones (see the module docstring). Without it, all
        rows are marked reproducible.

    Returns
    -------
    pandas.DataFrame with ``min_per_model, min_per_bench, n_models, n_benchmarks,
    n_observed, fill, passes, reproducible``.
    """
    M_raw = np.asarray(M_raw, dtype=np.float64)
    settings = ([(0, 0)] if include_unfiltered else []) + [(int(a), int(b)) for a, b in grid]
    rows = []
    for tm, tb in settings:
        res = threshold_filter(M_raw, tm, tb)
        if drop_empty and res.matrix.size == 0:
            continue
        if base_thresholds is None:
            ok = True
        else:
            ok = tm >= base_thresholds[0] and tb >= base_thresholds[1]
        rows.append(
            {
                "min_per_model": tm,
                "min_per_bench": tb,
                "n_models": len(res.rows),
                "n_benchmarks": len(res.cols),
                "n_observed": res.n_observed,
                "fill": res.fill,
                "passes": res.passes,
                "reproducible": bool(ok),
            }
        )
    return pd.DataFrame(rows)
