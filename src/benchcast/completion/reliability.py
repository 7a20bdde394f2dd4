"""Reliability of completed scores (BenchPress Section 6.2, Appendix E.2).

For every held-out cell of a set of folds a *risk model* predicts how far a fixed point
predictor's completion is likely to be from the hidden score. Three estimators differ only
in their features:

* **ensemble spread** -- disagreement of two stacks of alternative predictions for the same
  cell (:func:`ensemble_features`; the predictors are a
  :class:`~benchcast.completion.predictors.PredictorSet`);
* **matrix support** -- evidence in the fold's training matrix (:func:`support_features`):
  observation counts, median scores, the benchmark's spread and the strongest correlated
  peer model / neighbour benchmark;
* **hybrid** -- both groups in one model.

The risk model (:func:`fit_risk_model`) regresses ``log(1 + |error|)`` on the features
(clipped at 0, ``log1p``, standardized on the training split) and chooses its architecture
(from a grid of ridge / ReLU MLP candidates) on an inner split of the training folds.
:func:`leave_fold_out_risk` cross-fits it so that a cell's risk never depends on its own fold.
The risk is then evaluated / calibrated three ways: the risk-coverage curve
(:func:`risk_coverage`), leave-fold-out split-conformal intervals (:func:`conformal_intervals`)
and a monotone trust probability (:func:`trust_calibration`).

The predictors, the architecture grid and the base seed are arguments; the paper's values are
in :mod:`benchcast.studies.benchpress.settings`. Where the paper's text is silent, the paper's
released code (``microsoft/benchpress``: ``benchpress/methods/confidence.py``,
``experiments/sec4_building_benchpress/confidence_calibration/run.py``, the website's interval
script) is followed; each such point is said in the function's docstring. A ridge candidate
(``()`` in a grid, the text's zero-hidden-layer model; the released code's grid is MLP-only)
is ``sklearn.linear_model.Ridge(alpha=1e-3)``: that is the exact minimiser of the
zero-hidden-layer MLP objective with the MLP's L2 penalty 1e-3 (scikit-learn's MLP loss is
``mean squared error / 2 + alpha ||W||^2 / (2 n)``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import Ridge
from sklearn.neural_network import MLPRegressor
from sklearn.preprocessing import StandardScaler

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
    "risk_target",
    "RiskModel",
    "fit_risk_model",
    "inner_split",
    "RiskEstimate",
    "leave_fold_out_risk",
    "risk_coverage",
    "ConformalResult",
    "conformal_intervals",
    "TrustCalibration",
    "trust_calibration",
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


# --------------------------------------------------------------------------- risk model


def risk_target(abs_err: np.ndarray) -> np.ndarray:
    """The risk model's regression target ``log(1 + |error|)`` (Appendix E.2)."""
    return np.log1p(np.abs(np.asarray(abs_err, dtype=np.float64)))


def _design(X: np.ndarray) -> np.ndarray:
    """Features clipped at zero, then ``log1p`` (Appendix E.2; the paper code's ``feature_matrix``)."""
    return np.log1p(np.maximum(np.asarray(X, dtype=np.float64), 0.0))


def _arch_name(hidden: tuple[int, ...]) -> str:
    return "ridge" if len(hidden) == 0 else "mlp_" + "_".join(str(h) for h in hidden)


def _make_estimator(hidden: tuple[int, ...], seed: int):
    if len(hidden) == 0:
        return Ridge(alpha=1e-3)
    return MLPRegressor(
        hidden_layer_sizes=tuple(hidden),
        activation="relu",
        solver="adam",
        alpha=1e-3,
        learning_rate_init=3e-3,
        max_iter=500,
        early_stopping=True,
        validation_fraction=0.15,
        n_iter_no_change=25,
        random_state=int(seed),
    )


@dataclass
class RiskModel:
    """A fitted risk model: scaler + estimator on ``log1p(max(x, 0))`` features.

    ``predict`` returns the predicted ``log(1 + |error|)``; ``risk`` its back-transform
    ``max(expm1(.), 0)`` in score points (the paper code's ``np.maximum(np.expm1(pred), 0)``).
    """

    architecture: tuple[int, ...]
    scaler: StandardScaler
    estimator: object
    validation_medae: dict[str, float] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return _arch_name(self.architecture)

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.estimator.predict(self.scaler.transform(_design(X)))

    def risk(self, X: np.ndarray) -> np.ndarray:
        return np.maximum(np.expm1(self.predict(X)), 0.0)


def _fit(X: np.ndarray, y: np.ndarray, hidden: tuple[int, ...], seed: int) -> RiskModel:
    scaler = StandardScaler().fit(_design(X))
    est = _make_estimator(hidden, seed).fit(scaler.transform(_design(X)), y)
    return RiskModel(tuple(hidden), scaler, est)


def inner_split(fold_ids: np.ndarray, n_features: int, min_val: int = 50) -> tuple[np.ndarray, np.ndarray] | None:
    """Inner train / validation masks for architecture selection (Appendix E.2).

    Cells whose fold index is divisible by 5 validate, the rest train; if that leaves fewer
    than ``min_val`` validation cells or fewer than ``n_features + 50`` training cells, fold
    index modulo 3 is used instead; ``None`` if that fails too (thresholds from the paper
    code's ``select_mlp_config``).
    """
    fold_ids = np.asarray(fold_ids, dtype=np.int64)
    for mod in (5, 3):
        val = fold_ids % mod == 0
        if val.sum() >= min_val and (~val).sum() >= n_features + 50:
            return ~val, val
    return None


def fit_risk_model(
    X: np.ndarray,
    y: np.ndarray,
    fold_ids: np.ndarray,
    seed: int,
    *,
    grid: Sequence[tuple[int, ...]],
    final_seed: int | None = None,
) -> RiskModel:
    """Select the risk-model architecture inside the training folds, then refit on all of them.

    Parameters
    ----------
    X : (n, p) raw nonnegative features of the training cells (clipped at 0, ``log1p`` and
        standardized on these cells inside the model).
    y : (n,) target ``log(1 + |error|)`` (:func:`risk_target`).
    fold_ids : (n,) fold index of every training cell; the inner split is
        :func:`inner_split` (fold index mod 5, fallback mod 3).
    seed : base seed. The MLP candidate ``k`` of the grid (counting MLPs only) is fitted with
        ``seed + k`` on the inner split, as the paper code's ``select_mlp_config`` does; the
        ridge candidate is deterministic.
    final_seed : seed of the refit of the chosen architecture on all cells (the leave-fold-out
        loop passes ``seed + 1000 + fold``, as the paper code does); default ``seed + 1000``.
    grid : candidate architectures, ``()`` = ridge (the paper's:
        :data:`benchcast.studies.benchpress.settings.DEFAULT_GRID`).

    Returns
    -------
    :class:`RiskModel`; its ``validation_medae`` holds each candidate's median absolute error
    on the inner validation cells in log space (the selection criterion of the paper code).
    Without a usable inner split the first grid entry is used.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    fold_ids = np.asarray(fold_ids, dtype=np.int64)
    grid = [tuple(h) for h in grid]
    if not grid:
        raise ValueError("empty architecture grid")
    split = inner_split(fold_ids, X.shape[1])
    scores: dict[str, float] = {}
    chosen = grid[0]
    if split is not None and len(grid) > 1:
        tr, va = split
        best = np.inf
        k_mlp = 0
        for hidden in grid:
            s = seed if len(hidden) == 0 else seed + k_mlp
            k_mlp += len(hidden) > 0
            model = _fit(X[tr], y[tr], hidden, s)
            score = float(np.median(np.abs(model.predict(X[va]) - y[va])))
            scores[_arch_name(hidden)] = score
            if score < best:  # strict: ties keep the earlier grid entry
                best, chosen = score, hidden
    final = _fit(X, y, chosen, seed + 1000 if final_seed is None else final_seed)
    final.validation_medae = scores
    return final


@dataclass
class RiskEstimate:
    """Cross-fitted risk of every cell of a feature table (:func:`leave_fold_out_risk`)."""

    kind: str
    risk: np.ndarray  # (n,) score points, NaN where no risk could be fitted
    architecture: dict[int, str]  # evaluated fold_id -> chosen architecture
    feature_names: tuple[str, ...]
    validation_medae: dict[int, dict[str, float]] = field(default_factory=dict)


def _one_fold(X, y, fold_ids, train, test, fold, seed, grid, fitter):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        model = fitter(X[train], y[train], fold_ids[train], seed, final_seed=seed + 1000 + int(fold), grid=grid)
        return model.risk(X[test]), model.name, dict(getattr(model, "validation_medae", {}))


def leave_fold_out_risk(
    features: pd.DataFrame,
    kind: str,
    *,
    seed: int,
    grid: Sequence[tuple[int, ...]],
    fitter: Callable[..., RiskModel] = fit_risk_model,
    n_jobs: int = 1,
) -> RiskEstimate:
    """Risk of every cell from a risk model trained on the *other* folds only (Section 6.2).

    Parameters
    ----------
    features : the table of :func:`fold_features` (needs ``fold_id``, ``abs_err`` and the
        feature columns of ``kind``).
    kind : ``"ensemble"``, ``"support"`` or ``"hybrid"`` (:data:`FEATURE_SETS`).
    seed, grid : passed to ``fitter``; the refit for evaluated fold ``f`` uses
        ``final_seed = seed + 1000 + f`` (the paper code's ``leave_fold_mlp_error_calibrator``).
    fitter : :func:`fit_risk_model` or a drop-in with the same signature.
    n_jobs : folds fitted in parallel (joblib processes, one BLAS thread each).

    Returns
    -------
    :class:`RiskEstimate`. For evaluated fold ``f`` the fitter sees only cells with
    ``fold_id != f`` and a finite target and features; a fold whose training part has fewer
    than ``n_features + 50`` cells gets NaN risk (the paper code's rule).
    """
    if kind not in FEATURE_SETS:
        raise ValueError(f"unknown reliability estimator {kind!r}; choose one of {sorted(FEATURE_SETS)}")
    names = FEATURE_SETS[kind]
    missing = [c for c in ("fold_id", "abs_err", *names) if c not in features.columns]
    if missing:
        raise KeyError(f"feature table lacks columns {missing}")
    X = features[list(names)].to_numpy(dtype=np.float64)
    y = risk_target(features["abs_err"].to_numpy())
    fold_ids = features["fold_id"].to_numpy(dtype=np.int64)
    finite_x = np.all(np.isfinite(X), axis=1)
    valid = finite_x & np.isfinite(y)
    risk = np.full(len(y), np.nan)
    jobs = []
    for f in np.unique(fold_ids):
        train = (fold_ids != f) & valid
        test = (fold_ids == f) & finite_x
        if train.sum() < X.shape[1] + 50 or not test.any():
            continue
        jobs.append((int(f), train, test))
    if n_jobs == 1:
        results = [_one_fold(X, y, fold_ids, tr, te, f, seed, grid, fitter) for f, tr, te in jobs]
    else:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=n_jobs)(
            delayed(_one_fold)(X, y, fold_ids, tr, te, f, seed, grid, fitter) for f, tr, te in jobs
        )
    arch, val = {}, {}
    for (f, _, test), (r, name, scores) in zip(jobs, results):
        risk[test] = r
        arch[f] = name
        val[f] = scores
    return RiskEstimate(kind, risk, arch, tuple(names), val)


# --------------------------------------------------------------------------- evaluation / calibration


def risk_coverage(
    abs_err: np.ndarray,
    risk: np.ndarray,
    keep: Sequence[float] = (1.0, 0.8, 0.6, 0.4, 0.2),
    actual: np.ndarray | None = None,
) -> pd.DataFrame:
    """Risk-coverage curve: MedAE of the most trusted fraction of cells (Section 6.2, Figure 10).

    Cells are sorted by increasing risk (stable sort; cells with non-finite error or risk are
    dropped) and the first ``max(1, ceil(fraction * n))`` are kept (the paper code's
    ``risk_coverage_curve``).

    Returns
    -------
    DataFrame with ``kept_fraction, n, medae`` (and ``medape`` in % if ``actual`` is given;
    cells with ``|actual| <= 1e-6`` are left out of it).
    """
    e = np.asarray(abs_err, dtype=np.float64)
    r = np.asarray(risk, dtype=np.float64)
    ok = np.isfinite(e) & np.isfinite(r)
    order = np.argsort(r[ok], kind="stable")
    e_sorted = e[ok][order]
    a_sorted = None if actual is None else np.asarray(actual, dtype=np.float64)[ok][order]
    rows = []
    for frac in keep:
        n_keep = max(1, int(math.ceil(float(frac) * len(e_sorted))))
        row = {"kept_fraction": float(frac), "n": n_keep, "medae": float(np.median(e_sorted[:n_keep]))}
        if a_sorted is not None:
            a, ee = a_sorted[:n_keep], e_sorted[:n_keep]
            nz = np.abs(a) > 1e-6
            row["medape"] = float(np.median(ee[nz] / np.abs(a[nz])) * 100.0) if nz.any() else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass
class ConformalResult:
    """Leave-fold-out split-conformal intervals ``predicted +- half_width``."""

    half_width: np.ndarray  # (n,) score points; NaN where no scale / risk
    scale: np.ndarray  # (n,) the cell's fold's conformal scale
    covered: np.ndarray  # (n,) bool, |error| <= half_width (False where undefined)
    coverage: float  # share of cells with a defined interval that are covered
    median_width: float  # median full width (2 x half-width) over those cells
    scale_median: float  # median of ``scale`` over cells
    n: int  # cells with a defined interval


def conformal_intervals(
    abs_err: np.ndarray, risk: np.ndarray, fold_ids: np.ndarray, level: float = 0.9, min_calibration: int = 5
) -> ConformalResult:
    """Leave-fold-out split-conformal intervals from a risk score (Appendix E.2).

    For every fold the scale is the ``level`` quantile (``np.quantile``, linear) of
    ``|s_hat - s| / r`` over the cells of all *other* folds with a finite error and risk
    ``r > 1e-8``; the fold's half-width is ``scale * r``, centred at the point prediction.
    A fold with fewer than ``min_calibration`` calibration cells gets no interval (the paper
    code's ``conformal_interval``).

    Coverage and median width are over cells with a finite error and half-width (the paper
    code's ``coverage_width``); the width is the full width ``2 * half-width``, which is what
    the website's ``heldout_median_width`` reports.
    """
    e = np.asarray(abs_err, dtype=np.float64)
    r = np.asarray(risk, dtype=np.float64)
    fold_ids = np.asarray(fold_ids, dtype=np.int64)
    scale = np.full(len(e), np.nan)
    usable = np.isfinite(e) & np.isfinite(r) & (r > 1e-8)
    for f in np.unique(fold_ids):
        cal = usable & (fold_ids != f)
        if cal.sum() < min_calibration:
            continue
        scale[fold_ids == f] = float(np.quantile(e[cal] / r[cal], level))
    half = scale * r
    defined = np.isfinite(e) & np.isfinite(half)
    covered = defined & (e <= half)
    n = int(defined.sum())
    return ConformalResult(
        half_width=half,
        scale=scale,
        covered=covered,
        coverage=float(covered.sum() / n) if n else float("nan"),
        median_width=float(np.median(2.0 * half[defined])) if n else float("nan"),
        scale_median=float(np.nanmedian(scale)) if np.isfinite(scale).any() else float("nan"),
        n=n,
    )


@dataclass
class TrustCalibration:
    """Monotone map from risk to P(|prediction - actual| <= threshold) (Appendix E.2).

    ``predict`` interpolates linearly between the bins' median risks and is flat beyond the
    first / last bin (the website script's ``np.interp`` with ``left`` / ``right``).
    """

    threshold: float
    bin_risk_median: np.ndarray
    bin_empirical: np.ndarray
    bin_calibrated: np.ndarray
    bin_weight: np.ndarray

    def predict(self, risk: np.ndarray) -> np.ndarray:
        r = np.asarray(risk, dtype=np.float64)
        out = np.full(r.shape, np.nan)
        ok = np.isfinite(r)
        out[ok] = np.interp(
            r[ok], self.bin_risk_median, self.bin_calibrated, left=self.bin_calibrated[0], right=self.bin_calibrated[-1]
        )
        return out

    def table(self) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "risk_median": self.bin_risk_median,
                "empirical": self.bin_empirical,
                "calibrated": self.bin_calibrated,
                "n": self.bin_weight.astype(int),
            }
        )


def trust_calibration(
    abs_err: np.ndarray, risk: np.ndarray, threshold: float = 10.0, bins: int = 20
) -> TrustCalibration:
    """Calibrate a trust probability P(|error| <= threshold | risk) (Appendix E.2).

    Cells (finite error and risk) are sorted by risk (stable) and cut into ``bins`` bins of
    equal count (``np.array_split``); per bin the median risk and the share of cells within
    ``threshold`` score points; a weighted (by bin size) isotonic fit over the bin order
    makes the map non-increasing in risk. This is the website script's
    ``_fit_trust_calibrator`` (its pool-adjacent-violators step is
    ``IsotonicRegression(increasing=False)`` here). The paper fits it on all held-out cells.
    """
    e = np.asarray(abs_err, dtype=np.float64)
    r = np.asarray(risk, dtype=np.float64)
    ok = np.isfinite(e) & np.isfinite(r)
    if not ok.any():
        raise ValueError("no finite (error, risk) pairs to calibrate on")
    order = np.argsort(r[ok], kind="stable")
    r_s = r[ok][order]
    t_s = (e[ok][order] <= threshold).astype(np.float64)
    parts = np.array_split(np.arange(len(r_s)), min(int(bins), len(r_s)))
    centers = np.array([np.median(r_s[p]) for p in parts])
    emp = np.array([t_s[p].mean() for p in parts])
    w = np.array([len(p) for p in parts], dtype=np.float64)
    iso = IsotonicRegression(increasing=False, y_min=0.0, y_max=1.0)
    cal = iso.fit_transform(np.arange(len(parts), dtype=np.float64), emp, sample_weight=w)
    return TrustCalibration(float(threshold), centers, emp, np.asarray(cal, dtype=np.float64), w)
