"""The new-model tools' stored fits and the held-out test of their intervals, under the study contract."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchcast.studies.contract import MethodEntry, Study, registry_entries
from benchcast.studies.heldout_intervals.jobs import Jobs


def interval_score(lower: np.ndarray, upper: np.ndarray, truth: np.ndarray, level: float) -> np.ndarray:
    """The interval score of central ``level`` intervals (Gneiting & Raftery 2007, eq. 43): the
    width, plus ``2 / (1 - level)`` times the distance by which the truth falls outside. A proper
    scoring rule: an interval scores best in expectation at the truth's own quantiles, so neither a
    too-narrow nor a too-wide interval wins."""
    penalty = 2.0 / (1.0 - level)
    return (upper - lower) + penalty * np.clip(lower - truth, 0, None) + penalty * np.clip(truth - upper, 0, None)


class HeldoutIntervals(Study):
    name = "heldout_intervals"
    title = "benchcast select / estimate: stored fits and the held-out coverage of their intervals"
    position = 70
    # not part of the papers' artifact: the fits are for users, the test checks benchcast's own intervals
    artifact = False
    jobs_class = Jobs
    protocol_score = (
        "interval score of the printed interval (the method's own, else split-conformal, as `estimate`) on "
        "the fold's held-out models (points; Gneiting & Raftery 2007); coverage, width and MAE beside it"
    )

    @classmethod
    def method_entries(cls, config) -> list[MethodEntry]:
        return registry_entries(config["methods"])

    def protocol_settings(self) -> dict:
        return {"level": float(self.config["level"])}

    @classmethod
    def protocol_trials(cls, frame, settings):
        """Per fold of held-out models (the trial): the mean interval score, coverage, width, MAE."""
        level = float(settings["level"])
        lower, upper, truth = (frame[c].to_numpy() for c in ("lower", "upper", "truth"))
        per_model = pd.DataFrame(
            {
                "trial": frame["fold"].astype(int).to_numpy(),
                "score": 100 * interval_score(lower, upper, truth, level),
                "coverage": ((lower <= truth) & (truth <= upper)).astype(float),
                "width": 100 * (upper - lower),
                "error": 100 * np.abs(frame["estimate"].to_numpy() - truth),
            }
        )
        return per_model.groupby("trial", sort=True).mean().reset_index()


STUDY = HeldoutIntervals
