"""\"How benchmark prediction from fewer data misses the mark\" under the study contract."""

from __future__ import annotations

from benchcast.studies.contract import Study
from benchcast.studies.misses_the_mark.analysis import published_costs
from benchcast.studies.misses_the_mark.jobs import LIGHT_RUN_GROUP, REPORT_GROUP, TABLES, Jobs


class MissesTheMark(Study):
    name = "misses_the_mark"
    title = "How Benchmark Prediction from Fewer Data Misses the Mark (Zhang, Dorner & Hardt)"
    paper = "../shared/papers/benchmark-prediction-misses-the-mark.txt"
    position = 10
    # the few-second run jobs 18 at a time, Random-Search-Learn 3, PCA 6, the metrics/figures/tables
    # jobs all together
    job_groups = {LIGHT_RUN_GROUP: 18, "mtm_search": 3, "mtm_pca": 6, REPORT_GROUP: 4}
    jobs_class = Jobs

    def index(self) -> dict:
        tol = self.config["tolerance"]
        by_method = tol.get("rel_by_method", {})
        return self.index_entry(
            "|ours - paper| <= max({abs}, {rel} x paper) in estimation-gap points ({by} for {methods})".format(
                abs=tol["abs"],
                rel=tol["rel"],
                by=", ".join(sorted({str(v) for v in by_method.values()})) or "-",
                methods=", ".join(by_method) or "none",
            ),
            f"{TABLES}/paper_vs_ours.csv",
            self.jobs.index_sections(),
        )

    def costs(self) -> dict:
        return published_costs(self.jobs.method_name)


STUDY = MissesTheMark
