"""TailoredBench (Yuan et al.) under the study contract."""

from __future__ import annotations

from benchcast.output.comparison import WIDENING, of_the_paper, words
from benchcast.stats.metrics import trial_errors
from benchcast.studies.contract import MethodEntry, Study, accepts, registry_entries
from benchcast.studies.tailoredbench.analysis import PAPER_RUNS
from benchcast.studies.tailoredbench.jobs import REPORT_GROUP, RUN_GROUP, Jobs


class TailoredBench(Study):
    name = "tailoredbench"
    title = "TailoredBench: Efficient Benchmark Evaluation with Tailored Core Sets (Yuan et al.)"
    paper = "../shared/papers/tailoredbench.txt"
    position = 40
    # its run jobs take 10 s - 2 min each
    job_groups = {RUN_GROUP: 8, REPORT_GROUP: 2}
    jobs_class = Jobs
    protocol_score = "MAE: mean |estimate - truth| over a run's target models (points); Kendall's tau beside it"

    @classmethod
    def method_entries(cls, config) -> list[MethodEntry]:
        """The settings' methods, and the figures' TailoredBench variants."""
        figures = [
            MethodEntry(f.setdefault("params", {}), accepts("tailoredbench"))
            for f in config.get("figures", {}).values()
        ]
        return registry_entries(config["settings"].values(), name_key="method") + figures

    def datasets(self) -> list[str]:
        return [self.config["dataset"]]

    def scope(self) -> str:
        cfg = self.config
        title = self.catalog[cfg["dataset"]].title
        tables = ["Table 6", *(f"Table {t.removeprefix('table')}" for t in cfg["ablations"])]
        figures = [f"Figure {f.removeprefix('figure')}" for f in cfg["figures"]]
        return (
            f"{title}; {words(tables + figures + ['Figure 7'])}; {len(cfg['table6'])} methods in Table 6 "
            f"({words(list(cfg['table6']))}); inference counts {words([str(b) for b in cfg['budgets']])} "
            # the paper's word: the scope is in every paper_vs_ours.csv row (the digests)
            f"(the paper: 20 to 40 in steps of 5); {of_the_paper(cfg['trials'], PAPER_RUNS, 'runs')}"
        )

    def index(self) -> dict:
        tol, tables, figures = self.config["tolerance"], self.jobs.tables(), self.jobs.figures()
        return self.index_entry(
            "|ours - paper| <= {t6} (Table 6), {d} (ablations), Kendall's tau / MAE; with fewer runs than the "
            "paper's {runs}: {widening}".format(
                t6=" / ".join(str(tol["table6"][m]) for m in ("tau", "mae")),
                d=" / ".join(str(tol["default"][m]) for m in ("tau", "mae")),
                runs=PAPER_RUNS,
                widening=WIDENING,
            ),
            tables["paper_vs_ours"],
            [
                ["Table 6 / Table 1 (GSM8K)", [tables["table6"]]],
                *[[f"Table {t.removeprefix('table')} (GSM8K)", [tables[t]]] for t in self.config["ablations"]],
                ["Figures 3a, 3b, 4, 7 (GSM8K)", list(figures.values())],
                ["Z-test and pairwise ranking accuracy", [tables["z_test"], tables["summary"]]],
            ],
        )

    @classmethod
    def protocol_trials(cls, frame, settings):
        return trial_errors(frame)


STUDY = TailoredBench
