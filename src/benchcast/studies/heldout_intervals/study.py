"""The new-model tools' deployable fits and the held-out test of their intervals, under the study contract."""

from __future__ import annotations

from benchcast.studies.contract import Study
from benchcast.studies.heldout_intervals.jobs import Jobs


class HeldoutIntervals(Study):
    name = "heldout_intervals"
    title = "benchcast select / estimate: deployable fits and the held-out coverage of their intervals"
    position = 70
    # not part of the papers' artifact: the fits are for users, the test checks benchcast's own intervals
    artifact = False

    def __init__(self, config, catalog):
        super().__init__(config, catalog)
        self.jobs = Jobs(config, catalog)

    def datasets(self) -> list[str]:
        return self.jobs.datasets()

    def outputs(self) -> list[str]:
        return self.jobs.final_outputs()


STUDY = HeldoutIntervals
