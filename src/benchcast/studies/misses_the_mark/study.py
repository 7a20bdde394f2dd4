"""\"How benchmark prediction from fewer data misses the mark\" under the study contract."""

from __future__ import annotations

from benchcast.output.comparison import WIDENING, of_the_paper, words
from benchcast.stats.metrics import trial_errors
from benchcast.studies.contract import MethodEntry, Study, registry_entries
from benchcast.studies.misses_the_mark.analysis import PAPER_BUDGETS, PAPER_DATASETS, PAPER_TRIALS, published_costs
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
    protocol_score = "estimation gap: mean |estimate - truth| over a trial's target models (points)"

    @classmethod
    def method_entries(cls, config) -> list[MethodEntry]:
        return registry_entries(config["methods"])

    def scope(self) -> str:
        cfg, jobs = self.config, self.jobs
        titles = jobs.titles(cfg["datasets"])
        fewer = {m: t for m, t in cfg.get("trials_by_method", {}).items() if t < cfg["trials"]}
        trials = of_the_paper(cfg["trials"], PAPER_TRIALS, "trials") + (
            " (" + words([f"{t} for {m}" for m, t in fewer.items()]) + ")" if fewer else ""
        )
        budgets = words([str(n) for n in cfg["budgets"]])
        compared = words([f"{label} with the paper's {paper}" for label, paper in jobs.compare_as.items()])
        return (
            f"{len(cfg['datasets'])} of the paper's {PAPER_DATASETS} benchmarks "
            f"({words([titles[d] for d in cfg['datasets']])}); {words(cfg['splits'])} split"
            f"{'s' if len(cfg['splits']) > 1 else ''}; budget{'s' if len(cfg['budgets']) > 1 else ''} {budgets} "
            f"(the paper: {words([str(n) for n in PAPER_BUDGETS])}); {trials}; {len(jobs.methods)} methods"
            + (f" ({compared})" if compared else "")
        )

    def index(self) -> dict:
        tol = self.config["tolerance"]
        by_method = tol.get("rel_by_method", {})
        return self.index_entry(
            "|ours - paper| <= max({abs}, {rel} x paper) in estimation-gap points ({by} for {methods}); "
            "with fewer trials than the paper's {trials}: {widening}".format(
                abs=tol["abs"],
                rel=tol["rel"],
                by=", ".join(sorted({str(v) for v in by_method.values()})) or "-",
                methods=", ".join(by_method) or "none",
                trials=PAPER_TRIALS,
                widening=WIDENING,
            ),
            f"{TABLES}/paper_vs_ours.csv",
            self.jobs.index_sections(),
        )

    def costs(self) -> dict:
        return published_costs(self.jobs.method_name)

    @classmethod
    def protocol_trials(cls, frame, settings):
        return trial_errors(frame)


STUDY = MissesTheMark
