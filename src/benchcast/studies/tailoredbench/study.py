"""TailoredBench (Yuan et al.) under the study contract."""

from __future__ import annotations

from benchcast.studies.contract import Study
from benchcast.studies.tailoredbench.jobs import REPORT_GROUP, RUN_GROUP, Jobs


class TailoredBench(Study):
    name = "tailoredbench"
    title = "TailoredBench: Efficient Benchmark Evaluation with Tailored Core Sets (Yuan et al.)"
    paper = "../shared/papers/tailoredbench.txt"
    position = 40
    # its run jobs take 10 s - 2 min each
    job_groups = {RUN_GROUP: 8, REPORT_GROUP: 2}
    jobs_class = Jobs

    def datasets(self) -> list[str]:
        return [self.config["dataset"]]

    def index(self) -> dict:
        tol, tables, figures = self.config["tolerance"], self.jobs.tables(), self.jobs.figures()
        return self.index_entry(
            "|ours - paper| <= {t6} (Table 6), {d} (ablations), Kendall's tau / MAE".format(
                t6=" / ".join(str(tol["table6"][m]) for m in ("tau", "mae")),
                d=" / ".join(str(tol["default"][m]) for m in ("tau", "mae")),
            ),
            tables["paper_vs_ours"],
            [
                ["Table 6 / Table 1 (GSM8K)", [tables["table6"]]],
                *[[f"Table {t.removeprefix('table')} (GSM8K)", [tables[t]]] for t in self.config["ablations"]],
                ["Figures 3a, 3b, 4, 7 (GSM8K)", list(figures.values())],
                ["Z-test and pairwise ranking accuracy", [tables["z_test"], tables["summary"]]],
            ],
        )


STUDY = TailoredBench
