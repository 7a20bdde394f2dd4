"""Score-predictor configurations: one transform x completion method x hyper-parameters.

A :class:`PredictorConfig` names one way of completing a score matrix
(:func:`~benchcast.completion.pipeline.predict_scores`). A :class:`PredictorSet` is what the
reliability layer needs: the point predictor whose errors are estimated and the two stacks of
alternative predictors whose disagreement is the ensemble-spread feature
(:func:`~benchcast.completion.reliability.ensemble_features`). Both round-trip through plain
dicts so a reliability model records the predictors it was calibrated for. Which
configurations a study uses is the study's choice (BenchPress's:
:mod:`benchcast.studies.benchpress.settings`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from benchcast.completion.pipeline import predict_scores

__all__ = ["PredictorConfig", "PredictorSet", "config_key"]


def config_key(transform: str, method: str, params: Mapping | None = None) -> str:
    """The key of one score-predictor configuration, e.g. ``"logit|bias_als|lam=0.1,rank=2"``."""
    p = ",".join(f"{k}={v}" for k, v in sorted((params or {}).items()))
    return f"{transform}|{method}|{p}"


@dataclass(frozen=True)
class PredictorConfig:
    """One transform x completion-method configuration."""

    transform: str
    method: str
    params: tuple[tuple[str, object], ...] = ()

    @classmethod
    def of(cls, transform: str, method: str, **params) -> PredictorConfig:
        return cls(transform, method, tuple(sorted(params.items())))

    @classmethod
    def from_dict(cls, doc: Mapping) -> PredictorConfig:
        """Inverse of :meth:`to_dict`."""
        return cls.of(str(doc["transform"]), str(doc["method"]), **dict(doc.get("params") or {}))

    def to_dict(self) -> dict:
        return {"transform": self.transform, "method": self.method, "params": dict(self.params)}

    @property
    def key(self) -> str:
        return config_key(self.transform, self.method, dict(self.params))

    def predict(self, M_train: np.ndarray) -> np.ndarray:
        """Complete ``M_train`` with this configuration (:func:`~benchcast.completion.pipeline.predict_scores`)."""
        return predict_scores(M_train, self.transform, self.method, dict(self.params))


@dataclass(frozen=True)
class PredictorSet:
    """The point predictor and the two prediction stacks of the reliability layer."""

    selected: PredictorConfig
    lambda_stack: tuple[PredictorConfig, ...]
    strong_stack: tuple[PredictorConfig, ...]

    def configs(self) -> dict[str, PredictorConfig]:
        """Every distinct configuration by key, the selected one first."""
        out: dict[str, PredictorConfig] = {}
        for c in (self.selected, *self.lambda_stack, *self.strong_stack):
            out.setdefault(c.key, c)
        return out

    def to_dict(self) -> dict:
        return {
            "selected": self.selected.to_dict(),
            "lambda_stack": [c.to_dict() for c in self.lambda_stack],
            "strong_stack": [c.to_dict() for c in self.strong_stack],
        }

    @classmethod
    def from_dict(cls, doc: Mapping) -> PredictorSet:
        """Inverse of :meth:`to_dict`."""
        return cls(
            PredictorConfig.from_dict(doc["selected"]),
            tuple(PredictorConfig.from_dict(c) for c in doc["lambda_stack"]),
            tuple(PredictorConfig.from_dict(c) for c in doc["strong_stack"]),
        )
