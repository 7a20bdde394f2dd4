"""``benchcast complete``'s reliability model as the BenchPress study builds it: the library's
leave-models-out calibration (:func:`benchcast.completion.calibration.calibrate_for_new_models`) with the
paper's predictors and risk-model grid (:mod:`benchcast.studies.benchpress.settings`) and the
settings of config keys ``benchpress.complete`` and ``benchpress.reliability``."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from benchcast.completion.calibration import calibrate_for_new_models
from benchcast.studies.benchpress.settings import DEFAULT_GRID, PAPER_PREDICTORS

__all__ = ["complete_reliability"]


def complete_reliability(M: np.ndarray, settings: Mapping, reliability: Mapping, *, n_jobs: int = 1, log=print):
    """Calibration cells, the final model and its per-k summary for the score matrix ``M``.

    ``settings``: config ``benchpress.complete`` (its ``check`` entry, the held-out check's settings, is
    ignored); ``reliability``: config ``benchpress.reliability`` (level, threshold, bins, seed).
    """
    return calibrate_for_new_models(
        M,
        **{k: v for k, v in settings.items() if k != "check"},
        level=reliability["level"],
        threshold=reliability["threshold"],
        bins=reliability["bins"],
        risk_seed=reliability["seed"],
        predictors=PAPER_PREDICTORS,
        risk_grid=DEFAULT_GRID,
        n_jobs=n_jobs,
        log=log,
    )
