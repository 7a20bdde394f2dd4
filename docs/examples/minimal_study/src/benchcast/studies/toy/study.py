"""The toy study's declaration under the study contract (benchcast.studies.contract)."""

from __future__ import annotations

from benchcast.studies.contract import Study

RUNS = "results/runs/toy/{dataset}/n={n}.csv"
TABLE = "results/tables/toy/paper_vs_ours.csv"


class Toy(Study):
    name = "toy"
    title = "A minimal study: accuracy from the first n items"
    job_groups = {"toy_runs": 2}  # two run jobs per SLURM submission

    def datasets(self) -> list[str]:
        return [self.config["dataset"]]

    def runs(self) -> list[str]:
        return [RUNS.format(dataset=self.config["dataset"], n=n) for n in self.config["budgets"]]

    def outputs(self) -> list[str]:
        return [TABLE]

    def index(self) -> dict:
        return self.index_entry(
            f"|ours - paper| <= {self.config['tolerance']}", TABLE, [["Mean absolute error per budget", [TABLE]]]
        )


STUDY = Toy
