"""The BenchPress paper's fixed choices: its default predictor, the reliability layer's stacks,
architecture grids and base seed, and where the workflow puts what ``benchcast complete`` reads.

The shared completion library (:mod:`benchcast.completion`) takes all of these as arguments;
this module is where the paper's values live.
"""

from __future__ import annotations

from benchcast.completion.predictors import PredictorConfig, PredictorSet

__all__ = [
    "DEFAULT_PREDICTOR",
    "SELECTED_CONFIG",
    "LAMBDA_STACK",
    "STRONG_STACK",
    "PAPER_PREDICTORS",
    "DEFAULT_GRID",
    "PAPER_CODE_GRID",
    "SEED",
]

DEFAULT_PREDICTOR = {"transform": "logit", "method": "bias_als", "params": {"rank": 2, "lam": 0.1}}
"""BenchPress's default score predictor: Logit Bias ALS, rank 2, lambda 0.1 (Finding 2)."""

SELECTED_CONFIG = PredictorConfig.of(
    DEFAULT_PREDICTOR["transform"], DEFAULT_PREDICTOR["method"], **DEFAULT_PREDICTOR["params"]
)
"""The fixed point predictor whose reliability is estimated (Section 6.2)."""

LAMBDA_STACK: tuple[PredictorConfig, ...] = tuple(
    PredictorConfig.of("logit", "bias_als", rank=2, lam=lam) for lam in (0.01, 0.1, 1.0)
)
"""First stack of Appendix E.2: the three Logit Bias ALS configurations of the Section 4.2 grid
(rank 2, lambda in {0.01, 0.1, 1.0}). As in the paper's code (``DEFAULT_HP_VARIANTS``), the
selected lambda = 0.1 member is part of the stack."""

STRONG_STACK: tuple[PredictorConfig, ...] = (
    PredictorConfig.of("probit", "bias_als", rank=2, lam=0.1),
    PredictorConfig.of("quantile", "bias_als", rank=2, lam=0.1),
    PredictorConfig.of("identity", "bias_als", rank=2, lam=0.1),
    PredictorConfig.of("quantile", "soft_impute", rank=2),
    PredictorConfig.of("logit", "soft_impute", rank=2),
    PredictorConfig.of("probit", "soft_impute", rank=2),
    PredictorConfig.of("arcsinh", "bias_als", rank=2, lam=0.1),
    PredictorConfig.of("sqrt", "bias_als", rank=2, lam=0.1),
    PredictorConfig.of("identity", "soft_impute", rank=2),
    PredictorConfig.of("logit", "model_knn", k=10),
    PredictorConfig.of("probit", "model_knn", k=10),
    PredictorConfig.of("identity", "model_knn", k=10),
)
"""Second stack of Appendix E.2: the first 12 configurations by Section 4.2 MedAPE with coverage
>= 99.9%, the selected predictor removed (the paper's "checked-in run"; hyper-parameters as the
paper code's ``DEFAULT_STRONG_METHODS``)."""

PAPER_PREDICTORS = PredictorSet(SELECTED_CONFIG, LAMBDA_STACK, STRONG_STACK)
"""The point predictor and the two stacks of the paper's reliability layer."""

DEFAULT_GRID: tuple[tuple[int, ...], ...] = ((), (16,), (32,), (64, 32))
"""Candidate risk-model architectures of Appendix E.2's text: ``()`` is the linear ridge model
(zero hidden layers), the others ReLU MLP hidden-layer sizes."""

PAPER_CODE_GRID: tuple[tuple[int, ...], ...] = ((16,), (32,), (64, 32))
"""The released code's MLP-only grid (``confidence.py``: ``hidden_grid``)."""

SEED = 42
"""Base seed of the risk models and of the Section 5 ablations (Appendix E.2: "deterministic seeds
derived from base seed 42"; the paper code's ``SEED = 42``)."""
