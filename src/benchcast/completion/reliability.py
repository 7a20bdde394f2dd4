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

The layer is split in :mod:`.risk_features` (the features), :mod:`.risk_model` (fitting and
cross-fitting the risk model) and :mod:`.risk_calibration` (risk-coverage, conformal intervals,
trust); this module re-exports them.
"""

from __future__ import annotations

from benchcast.completion.risk_calibration import (
    ConformalResult,
    TrustCalibration,
    conformal_intervals,
    risk_coverage,
    trust_calibration,
)
from benchcast.completion.risk_features import (
    ENSEMBLE_FEATURES,
    FEATURE_SETS,
    SUPPORT_FEATURES,
    best_abs_correlation,
    ensemble_features,
    fold_features,
    support_features,
)
from benchcast.completion.risk_model import (
    RiskEstimate,
    RiskModel,
    fit_risk_model,
    inner_split,
    leave_fold_out_risk,
    risk_target,
)

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
