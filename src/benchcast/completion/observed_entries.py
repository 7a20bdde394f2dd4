"""Statistics of a matrix's observed (non-NaN) entries shared by the completers of BenchPress
Appendix C.1: column mean / std, column means with a fallback, and the keep-observed fill."""

from __future__ import annotations

import warnings

import numpy as np


def _col_stats(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column nan-mean and nan-std (std < 1e-8 -> 1), as the paper code's ``col_stats``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(Z, axis=0)
        std = np.nanstd(Z, axis=0)
    return mean, np.where(std < 1e-8, 1.0, std)


def _fill_missing(Z: np.ndarray, pred: np.ndarray) -> np.ndarray:
    obs = ~np.isnan(Z)
    return np.where(obs, Z, pred)


def _col_means_or(Z: np.ndarray, empty: float) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m = np.nanmean(Z, axis=0)
    return np.where(np.isfinite(m), m, empty)
