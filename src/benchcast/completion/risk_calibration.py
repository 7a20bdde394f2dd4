"""Evaluation and calibration of a BenchPress risk score (Section 6.2, Appendix E.2): the
risk-coverage curve, leave-fold-out split-conformal intervals and the monotone trust probability."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.isotonic import IsotonicRegression

__all__ = ["risk_coverage", "ConformalResult", "conformal_intervals", "TrustCalibration", "trust_calibration"]


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
