"""Feature transforms and column standardization (BenchPress Section 4.1, "Feature transforms").

Pipeline on a training matrix ``M`` (models x benchmarks, NaN = missing):

1. a feature transform of the observed entries, column by column;
2. standardization of each column to zero mean and unit variance over its observed
   (training) entries;

and, after a completion method has filled the standardized matrix, the inverse in reverse
order: undo the standardization, apply the inverse transform, clip percentage benchmarks to
[0, 100]. Observed training cells are returned unchanged.

Choices where the paper's text is silent follow the paper's released code (a fact, cited):

* logit and probit clip scores to ``[eps, 100 - eps]`` with ``eps = 0.5`` before
  transforming (``TRANSFORM_EPS``);
* log is ``log(1 + max(s, 0))`` and, like quantile and identity, is applied to *every*
  column; logit, probit, arcsinh and square root are applied to percentage columns only;
* a column counts as a percentage column when its observed training values lie in
  ``[-1, 101]`` (:func:`percentage_columns`) -- on the BenchPress matrix this singles out
  the five columns the paper names as non-percentage (Chatbot Arena Elo, Codeforces rating,
  GDPval Elo, SWE-Lancer dollars, Vending-Bench 2). A caller may pass its own flags instead
  (e.g. from the benchmark inventory), see ``percentage_rule`` in the study config;
* a column whose standard deviation is below ``1e-8`` is divided by 1, not by ~0;
* quantile maps a score to its within-column rank (average rank for ties) over ``n + 1``;
  its inverse interpolates linearly between the column's sorted training scores.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, ndtr, ndtri
from scipy.special import logit as _logit

from benchcast.errors import ConfigError, DataError

__all__ = [
    "TRANSFORM_EPS",
    "TRANSFORMS",
    "TRANSFORM_LABELS",
    "Transform",
    "Standardized",
    "percentage_columns",
    "standardize",
    "unstandardize",
    "get_transform",
]

TRANSFORM_EPS = 0.5
"""Scores are clipped to [eps, 100 - eps] before logit/probit (paper code: eps = 0.5)."""

PERCENT_RANGE = (-1.0, 101.0)
"""Observed range that makes a column a percentage column (paper code's rule)."""


@dataclass(frozen=True)
class Transform:
    """One feature transform: elementwise ``forward``/``inverse`` or the quantile transform.

    ``percent_only`` transforms touch percentage columns only; the others every column.
    """

    name: str
    forward: Callable[[np.ndarray], np.ndarray] | None
    inverse: Callable[[np.ndarray], np.ndarray] | None
    percent_only: bool


def _to_logit(s: np.ndarray) -> np.ndarray:
    return _logit(np.clip(s, TRANSFORM_EPS, 100.0 - TRANSFORM_EPS) / 100.0)


def _to_probit(s: np.ndarray) -> np.ndarray:
    return ndtri(np.clip(s, TRANSFORM_EPS, 100.0 - TRANSFORM_EPS) / 100.0)


TRANSFORMS: dict[str, Transform] = {
    "identity": Transform("identity", lambda s: s, lambda z: z, percent_only=False),
    "log": Transform("log", lambda s: np.log1p(np.maximum(s, 0.0)), np.expm1, percent_only=False),
    "logit": Transform("logit", _to_logit, lambda z: 100.0 * expit(z), percent_only=True),
    "arcsinh": Transform("arcsinh", lambda s: np.arcsinh(s / 50.0), lambda z: 50.0 * np.sinh(z), percent_only=True),
    "sqrt": Transform("sqrt", lambda s: np.sqrt(np.maximum(s, 0.0)), lambda z: z * z, percent_only=True),
    "probit": Transform("probit", _to_probit, lambda z: 100.0 * ndtr(z), percent_only=True),
    # forward/inverse of quantile depend on the column's training values: see below
    "quantile": Transform("quantile", None, None, percent_only=False),
}

TRANSFORM_LABELS = {
    "identity": "Identity",
    "log": "Log",
    "logit": "Logit",
    "arcsinh": "Arcsinh",
    "sqrt": "Square root",
    "probit": "Probit",
    "quantile": "Quantile",
}


def get_transform(name: str) -> Transform:
    try:
        return TRANSFORMS[name]
    except KeyError:
        raise ConfigError(f"unknown transform {name!r}; choose one of {sorted(TRANSFORMS)}") from None


def percentage_columns(M: np.ndarray) -> np.ndarray:
    """Columns whose observed values all lie in [-1, 101] (the paper code's percentage rule).

    A column without any observed value is not a percentage column.
    """
    obs = np.isfinite(M)
    lo = np.where(obs, M, np.inf).min(axis=0)
    hi = np.where(obs, M, -np.inf).max(axis=0)
    return obs.any(axis=0) & (lo >= PERCENT_RANGE[0]) & (hi <= PERCENT_RANGE[1])


@dataclass
class Standardized:
    """A training matrix in transformed, standardized space, with what is needed to invert it.

    Attributes
    ----------
    z : (M, B) float array, NaN where the training matrix is missing.
    train : the original-scale training matrix (NaN = missing).
    observed : boolean mask of observed training cells.
    is_percentage : per-column flag (clip to [0, 100]; percent-only transforms apply).
    transformed : per-column flag: the feature transform was applied to this column.
    mean, std : per-column standardization constants in transformed space.
    transform : the transform's name.
    """

    z: np.ndarray
    train: np.ndarray
    observed: np.ndarray
    is_percentage: np.ndarray
    transformed: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    transform: str


def _quantile_forward(M: np.ndarray, obs: np.ndarray) -> np.ndarray:
    """Within-column average rank / (n + 1) of each observed entry (n = observed count).

    Columns with fewer than two observed values are left as they are (nothing to rank).
    """
    from scipy.stats import rankdata  # on first use: scipy.stats is half a second of every CLI call

    out = M.copy()
    n = obs.sum(axis=0)
    ranks = rankdata(np.where(obs, M, np.nan), axis=0, nan_policy="omit")
    cols = n > 1
    out[:, cols] = ranks[:, cols] / (n[cols] + 1.0)
    return np.where(obs, out, np.nan)


def _quantile_inverse_column(z: np.ndarray, train_values: np.ndarray) -> np.ndarray:
    """Linear interpolation into the sorted training scores at position ``z (n + 1) - 1``."""
    sorted_vals = np.sort(train_values)
    n = len(sorted_vals)
    idx = np.clip(z * (n + 1) - 1.0, 0.0, n - 1.0)
    lo = np.floor(idx).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    frac = idx - lo
    return sorted_vals[lo] * (1.0 - frac) + sorted_vals[hi] * frac


def standardize(M_train: np.ndarray, transform: str, is_percentage: np.ndarray | None = None) -> Standardized:
    """Apply ``transform`` to the observed entries, then z-score each column (steps i-ii).

    Parameters
    ----------
    M_train : (M, B) array, NaN = missing. Infinite values are rejected.
    transform : one of :data:`TRANSFORMS`.
    is_percentage : optional per-column flags; default :func:`percentage_columns` of M_train.
    """
    M = np.asarray(M_train, dtype=np.float64)
    if M.ndim != 2:
        raise DataError(
            None,
            "score matrix",
            f"expected a 2-D models x benchmarks array, got shape {M.shape}",
            "pass the matrix with models as rows and benchmarks as columns",
        )
    if np.isinf(M).any():
        raise DataError(
            None, "score matrix", "contains infinite values", "use NaN for missing scores; scores must be finite"
        )
    tr = get_transform(transform)
    obs = ~np.isnan(M)
    pct = percentage_columns(M) if is_percentage is None else np.asarray(is_percentage, dtype=bool)
    if pct.shape != (M.shape[1],):
        raise DataError(
            None,
            "is_percentage",
            f"has shape {pct.shape}, the matrix has {M.shape[1]} columns",
            "pass one flag per benchmark column",
        )
    transformed = pct.copy() if tr.percent_only else np.ones(M.shape[1], dtype=bool)
    if tr.name == "quantile":
        T = _quantile_forward(M, obs)
    else:
        T = M.copy()
        cols = transformed & obs.any(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            T[:, cols] = np.where(obs[:, cols], tr.forward(M[:, cols]), np.nan)
    with np.errstate(invalid="ignore"), _quiet_nan_warnings():
        mean = np.nanmean(T, axis=0)
        std = np.nanstd(T, axis=0)
    std = np.where(std < 1e-8, 1.0, std)  # NaN std (empty column) stays NaN
    z = (T - mean) / std
    z[~obs] = np.nan
    return Standardized(
        z=z, train=M, observed=obs, is_percentage=pct, transformed=transformed, mean=mean, std=std, transform=tr.name
    )


def unstandardize(st: Standardized, Z_pred: np.ndarray) -> np.ndarray:
    """Map predictions in standardized space back to scores (step iv).

    Missing training cells get ``inverse(z * std + mean)``, clipped to [0, 100] on
    percentage columns; observed training cells keep their training value; non-finite
    predictions stay NaN (the method did not predict that cell).
    """
    Z_pred = np.asarray(Z_pred, dtype=np.float64)
    if Z_pred.shape != st.z.shape:
        raise ValueError(f"prediction shape {Z_pred.shape} != training shape {st.z.shape}")
    tr = get_transform(st.transform)
    T = Z_pred * st.std + st.mean
    out = T.copy()
    missing = ~st.observed
    with np.errstate(invalid="ignore", over="ignore"):
        if tr.name == "quantile":
            for j in np.flatnonzero(st.transformed):
                rows = missing[:, j] & np.isfinite(T[:, j])
                train_j = st.train[np.isfinite(st.train[:, j]), j]
                if rows.any() and len(train_j) > 1:
                    out[rows, j] = _quantile_inverse_column(T[rows, j], train_j)
        else:
            cols = st.transformed
            out[:, cols] = tr.inverse(T[:, cols])
    pct = st.is_percentage
    out[:, pct] = np.clip(out[:, pct], 0.0, 100.0)
    out[~np.isfinite(out)] = np.nan
    out[st.observed] = st.train[st.observed]
    return out


class _quiet_nan_warnings:
    """Silence numpy's "Mean of empty slice" for all-missing columns (they stay NaN)."""

    def __enter__(self):
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("ignore", category=RuntimeWarning)
        return self

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)
