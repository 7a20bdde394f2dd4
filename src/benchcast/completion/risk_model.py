"""The BenchPress risk model (Section 6.2, Appendix E.2): a ridge / ReLU MLP regression of
``log(1 + |error|)`` on a cell's features, its architecture chosen on an inner split of the
training folds, and the leave-fold-out cross-fitting of a cell's risk."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.linear_model import Ridge
from sklearn.neural_network import MLPRegressor
from sklearn.preprocessing import StandardScaler

from benchcast.completion.risk_features import FEATURE_SETS

__all__ = ["risk_target", "RiskModel", "fit_risk_model", "inner_split", "RiskEstimate", "leave_fold_out_risk"]


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
