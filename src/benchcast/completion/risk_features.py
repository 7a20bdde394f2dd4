"""Features of the BenchPress reliability estimators (Section 6.2, Appendix E.2): ensemble spread
of two prediction stacks, matrix support from a fold's training matrix, and the per-cell feature
table of all held-out cells of a set of folds."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from contextlib import contextmanager

import numpy as np
import pandas as pd

from benchcast.completion.correlation import pairwise_abs_pearson
from benchcast.completion.evaluation import Fold, train_matrix
from benchcast.completion.predictors import PredictorConfig

__all__ = [
    "ENSEMBLE_FEATURES",
    "SUPPORT_FEATURES",
    "FEATURE_SETS",
    "ensemble_features",
    "best_abs_correlation",
    "support_features",
    "fold_features",
]


_STACK_STATS = ("delta_to_median", "mad", "p90_p10_span", "std")
ENSEMBLE_FEATURES: tuple[str, ...] = tuple(f"{s}_{n}" for s in ("hp", "strong") for n in _STACK_STATS)
"""The eight ensemble-spread features (``hp_*``: lambda stack, ``strong_*``: strong stack), in the
paper code's sorted order."""

SUPPORT_FEATURES: tuple[str, ...] = (
    "col_best_neighbor_abs_corr",
    "col_median_score",
    "col_obs_count",
    "col_score_dispersion",
    "row_best_peer_abs_corr",
    "row_best_peer_overlap",
    "row_median_score",
    "row_obs_count",
)
"""The eight matrix-support features (``row`` = target model, ``col`` = target benchmark), in the
paper code's sorted order."""

FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "ensemble": ENSEMBLE_FEATURES,
    "support": SUPPORT_FEATURES,
    # the paper code sorts "hp_*", "strong_*", "structural_*" names: ensemble then support
    "hybrid": ENSEMBLE_FEATURES + SUPPORT_FEATURES,
}
"""Feature columns of the three reliability estimators (design-matrix column order)."""

# --------------------------------------------------------------------------- features


@contextmanager
def _quiet():
    """Silence numpy's all-NaN-slice / empty-slice RuntimeWarnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _stack_stats(stack: np.ndarray, target: np.ndarray) -> dict[str, np.ndarray]:
    """Std, MAD, central 80% span and |target - median| of a (K, n) prediction stack, NaN-aware."""
    stack = np.asarray(stack, dtype=np.float64)
    if stack.ndim != 2 or stack.shape[1] != len(target):
        raise ValueError(f"a prediction stack must be (K, {len(target)}), got {stack.shape}")
    with np.errstate(invalid="ignore"), _quiet():
        center = np.nanmedian(stack, axis=0)
        return {
            "delta_to_median": np.abs(target - center),
            "mad": 1.4826 * np.nanmedian(np.abs(stack - center[None, :]), axis=0),
            "p90_p10_span": np.nanpercentile(stack, 90, axis=0) - np.nanpercentile(stack, 10, axis=0),
            "std": np.nanstd(stack, axis=0),
        }


def ensemble_features(selected_pred: np.ndarray, stack_lambda: np.ndarray, stack_strong: np.ndarray) -> pd.DataFrame:
    """Ensemble-spread features of a set of held-out cells (Section 6.2; Appendix E.2).

    Parameters
    ----------
    selected_pred : (n,) the point predictor's predictions of the cells.
    stack_lambda : (K1, n) predictions of the first stack (the paper's: the Logit Bias ALS lambda
        stack, which includes the selected predictor, as in the paper's code).
    stack_strong : (K2, n) predictions of the second stack (the paper's: strong full-coverage
        configurations).

    Returns
    -------
    DataFrame with the columns :data:`ENSEMBLE_FEATURES`: per stack the standard deviation
    (population, ``ddof=0``), the median absolute deviation scaled by 1.4826, the central 80%
    span (90th minus 10th percentile, linear interpolation) and ``|selected - stack median|``.
    All statistics ignore NaN members (the paper code's ``stack_features`` / ``mad_uncertainty``).
    """
    target = np.asarray(selected_pred, dtype=np.float64).ravel()
    out = {}
    for prefix, stack in (("hp", stack_lambda), ("strong", stack_strong)):
        for name, values in _stack_stats(np.atleast_2d(stack), target).items():
            out[f"{prefix}_{name}"] = values
    return pd.DataFrame({name: out[name] for name in ENSEMBLE_FEATURES})


def best_abs_correlation(A: np.ndarray, min_overlap: int = 3, rel_tol: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Each row's strongest other row: max |Pearson r| over shared observed entries.

    Parameters
    ----------
    A : (n, d) array, NaN = missing.
    min_overlap : a pair needs at least this many shared observed entries (the paper code
        uses 3).
    rel_tol : a row whose values on the shared entries have a standard deviation below
        ``rel_tol`` times its overall standard deviation is treated as constant there and the
        pair skipped (the paper code skips a pair when either side's std on the overlap is
        <= 1e-12; a relative threshold is used because the vectorized moments carry
        round-off that an exact two-pass std does not).

    Returns
    -------
    (best_corr, best_overlap) : (n,) arrays; 0 and 0 for a row without any valid pair. Ties
    go to the lowest partner index, as in the paper code's pair loop (strict ``>``).

    Notes
    -----
    All pairs at once: :func:`~benchcast.completion.correlation.pairwise_abs_pearson` over the
    rows with ``method="moments"`` (masked matrix products on the rows standardized by their
    own observed mean / std; Pearson r is invariant to that affine map, which only keeps the
    moments well conditioned).
    """
    r, n = pairwise_abs_pearson(
        A,
        axis=1,
        min_shared=min_overlap,
        below=-np.inf,
        constant=-np.inf,
        method="moments",
        rel_tol=rel_tol,
        return_counts=True,
    )
    arg = np.argmax(r, axis=1)
    best = r[np.arange(len(r)), arg] if len(r) else np.zeros(0)
    has = np.isfinite(best) & (best > 0)
    best_corr = np.where(has, best, 0.0)
    best_overlap = np.where(has, n[np.arange(len(r)), arg] if len(r) else 0.0, 0.0)
    return best_corr, best_overlap


def support_features(M_train: np.ndarray, model_idx: np.ndarray, bench_idx: np.ndarray) -> pd.DataFrame:
    """Matrix-support features of cells from their fold's training matrix (Section 6.2; E.2).

    Parameters
    ----------
    M_train : (M, B) training matrix on the original score scale, NaN = missing (held-out cells
        must already be hidden).
    model_idx, bench_idx : (n,) row and column indices of the cells.

    Returns
    -------
    DataFrame with the columns :data:`SUPPORT_FEATURES`:

    * ``row_obs_count`` / ``col_obs_count``: observed scores of the target model / benchmark;
    * ``row_median_score`` / ``col_median_score``: their median observed score;
    * ``col_score_dispersion``: population std of the benchmark's observed scores;
    * ``row_best_peer_abs_corr`` / ``row_best_peer_overlap``: the strongest peer model's
      |Pearson r| with the target model over shared observed benchmarks and the number of
      those benchmarks (:func:`best_abs_correlation`, >= 3 shared);
    * ``col_best_neighbor_abs_corr``: the same for the target benchmark across models.

    Correlations use the raw training scores; empty rows / columns give 0, as in the paper
    code (``structural_support_features``, ``_safe_nanmedian`` / ``_safe_nanstd``).
    """
    M_train = np.asarray(M_train, dtype=np.float64)
    i = np.asarray(model_idx, dtype=np.int64)
    j = np.asarray(bench_idx, dtype=np.int64)
    obs = np.isfinite(M_train)
    with _quiet():
        row_med = np.nan_to_num(np.nanmedian(M_train, axis=1), nan=0.0, posinf=0.0, neginf=0.0)
        col_med = np.nan_to_num(np.nanmedian(M_train, axis=0), nan=0.0, posinf=0.0, neginf=0.0)
        col_std = np.nan_to_num(np.nanstd(M_train, axis=0), nan=0.0, posinf=0.0, neginf=0.0)
    row_corr, row_overlap = best_abs_correlation(M_train)
    col_corr, _ = best_abs_correlation(M_train.T)
    cols = {
        "col_best_neighbor_abs_corr": col_corr[j],
        "col_median_score": col_med[j],
        "col_obs_count": obs.sum(axis=0).astype(np.float64)[j],
        "col_score_dispersion": col_std[j],
        "row_best_peer_abs_corr": row_corr[i],
        "row_best_peer_overlap": row_overlap[i],
        "row_median_score": row_med[i],
        "row_obs_count": obs.sum(axis=1).astype(np.float64)[i],
    }
    return pd.DataFrame({name: cols[name] for name in SUPPORT_FEATURES})


_KEYS = ["seed", "fold", "model", "benchmark"]


def _as_key(cfg: PredictorConfig | str) -> str:
    return cfg.key if isinstance(cfg, PredictorConfig) else str(cfg)


def fold_features(
    M: np.ndarray,
    folds: Sequence[Fold],
    predictions_by_config: Mapping[str, pd.DataFrame],
    *,
    selected: PredictorConfig | str,
    lambda_stack: Sequence[PredictorConfig | str],
    strong_stack: Sequence[PredictorConfig | str],
) -> pd.DataFrame:
    """Per-cell feature table of all held-out cells of all folds (Appendix E.2).

    Parameters
    ----------
    M : (M, B) full score matrix.
    folds : the folds, in file order (:func:`~benchcast.completion.evaluation.load_folds`).
    predictions_by_config : config key -> per-cell DataFrame of
        :func:`~benchcast.completion.evaluation.evaluate_predictor` on ``folds``
        (columns ``seed, fold, model, benchmark, predicted``).
    selected, lambda_stack, strong_stack : the configurations (or their keys) of the point
        predictor and of the two stacks (the paper's:
        :data:`benchcast.studies.benchpress.settings.PAPER_PREDICTORS`).

    Returns
    -------
    DataFrame, one row per held-out cell in fold order: ``fold_id`` (the fold's position in
    ``folds``, 0..29 -- the paper code's ``fold_id`` is ``enumerate`` over the seed-major
    fold list), ``seed, fold, model, benchmark, actual, predicted`` (the selected predictor),
    ``abs_err`` and the columns of :data:`ENSEMBLE_FEATURES` and :data:`SUPPORT_FEATURES`.
    The support features are computed from each fold's training matrix, so no feature sees a
    held-out value.
    """
    M = np.asarray(M, dtype=np.float64)
    pos = {(f.seed, f.fold): k for k, f in enumerate(folds)}
    if len(pos) != len(folds):
        raise ValueError("two folds share the same (seed, fold)")
    keys = pd.DataFrame(
        {
            "fold_id": np.concatenate([np.full(len(f.cells), k, dtype=np.int64) for k, f in enumerate(folds)]),
            "seed": np.concatenate([np.full(len(f.cells), f.seed, dtype=np.int64) for f in folds]),
            "fold": np.concatenate([np.full(len(f.cells), f.fold, dtype=np.int64) for f in folds]),
            "model": np.concatenate([f.cells[:, 0] for f in folds]).astype(np.int64),
            "benchmark": np.concatenate([f.cells[:, 1] for f in folds]).astype(np.int64),
        }
    )
    index = pd.MultiIndex.from_frame(keys[_KEYS])

    def aligned(cfg) -> np.ndarray:
        key = _as_key(cfg)
        if key not in predictions_by_config:
            raise KeyError(f"no fold predictions for configuration {key!r}")
        df = predictions_by_config[key]
        s = df.set_index(_KEYS)["predicted"]
        if not s.index.is_unique:
            raise ValueError(f"predictions for {key!r} list a cell twice")
        out = s.reindex(index).to_numpy(dtype=np.float64)
        if len(s) != len(index) or not index.isin(s.index).all():
            raise ValueError(f"predictions for {key!r} do not cover exactly the folds' held-out cells")
        return out

    table = keys.copy()
    table["actual"] = M[table["model"].to_numpy(), table["benchmark"].to_numpy()]
    table["predicted"] = aligned(selected)
    table["abs_err"] = np.abs(table["predicted"] - table["actual"])
    ens = ensemble_features(
        table["predicted"].to_numpy(),
        np.stack([aligned(c) for c in lambda_stack]),
        np.stack([aligned(c) for c in strong_stack]),
    )
    sup = []
    for _k, f in enumerate(folds):
        sup.append(support_features(train_matrix(M, f.cells), f.cells[:, 0], f.cells[:, 1]))
    sup = pd.concat(sup, ignore_index=True)
    return pd.concat([table, ens, sup], axis=1)
