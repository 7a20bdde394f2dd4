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
    jobs_class = Jobs


STUDY = HeldoutIntervals
