"""BenchPress ("You Don't Need to Run Every Eval") under the study contract: its output paths,
outputs and index entry."""

from __future__ import annotations

from benchcast.studies.contract import Study

RUNS = "results/runs/benchpress/grid/{transform}/{bpmethod}.parquet"
METRICS = "results/metrics/benchpress"
TABLES = "results/tables/benchpress"
FIGURES = "results/figures/benchpress"
#: the reliability model `benchcast complete` reads
RELIABILITY = "results/models/benchpress/reliability.json"
#: the 2 s - 2 min grid jobs share SLURM submissions
GRID_GROUP = "bp_grid"


class BenchPress(Study):
    name = "benchpress"
    title = "You Don't Need to Run Every Eval (BenchPress)"
    paper = "../shared/papers/benchpress-you-dont-need-to-run-every-eval.txt"
    position = 20
    job_groups = {GRID_GROUP: 12}

    def datasets(self) -> list[str]:
        return [self.config["dataset"]]

    def data(self) -> dict[str, str]:
        """The ingested score matrix's tables."""
        folder = f"results/data/{self.config['dataset']}"
        return {k: f"{folder}/{k}.parquet" for k in ("scores", "models", "benchmarks")}

    def outputs(self) -> list[str]:
        t, f = TABLES, FIGURES
        return [
            f"{t}/table11.csv", f"{t}/table3.csv", f"{t}/paper_vs_ours.csv", f"{t}/paper_vs_ours.md",
            f"{t}/grid_acceptance.csv", f"{f}/figure11.png", f"{f}/figure10.png", RELIABILITY,
            f"{t}/complete_calibration.csv",
            *([f"{t}/new_model_check.csv"] if self.config["complete"]["check"]["in_all"] else []),
            f"{f}/figure4.png", f"{t}/table2.csv", f"{t}/section5_paper_vs_ours.csv", f"{f}/figure5.png",
            f"{f}/figure7.png", f"{t}/hypotheses_paper_vs_ours.csv", f"{t}/table17.csv", f"{f}/figure2.png",
        ]  # fmt: skip

    def index(self) -> dict:
        cells, t, f = self.config["tolerance"]["cells"], TABLES, FIGURES
        return self.index_entry(
            f"|ours - paper| <= max(abs, {cells['rel']} x |paper|), abs {cells['abs']} "
            f"or per column {cells['abs_by_column']} (config benchpress.tolerance.cells)",
            f"{t}/paper_vs_ours.csv",
            [
                ["Section 2, Table 1, Figures 2-3: the score matrix", [f"{t}/table1.csv", f"{f}/figure2.png", f"{f}/figure3.png"]],
                ["Section 3.3, Figure 4, Table 2: low-rank geometry", [f"{f}/figure4.png", f"{t}/table2.csv"]],
                ["Section 4, Table 3, Table 11, Figure 11: transform x method grid", [f"{t}/table3.md", f"{t}/table11.md", f"{f}/figure11.png", f"{t}/grid_acceptance.csv"]],
                ["Section 5.1, Table 5, Figure 5: probe sets", [f"{t}/table5.csv", f"{f}/figure5.png"]],
                ["Section 5.2, Table 6, Figure 6: ranking preservation", [f"{t}/table6.csv", f"{t}/figure6.csv"]],
                ["Section 5.3, Figure 7, Table 16: newly released models", [f"{f}/figure7.png", f"{t}/table16.csv"]],
                ["Section 6.1, Tables 7-8: what makes a benchmark or model predictable", [f"{t}/hypotheses_paper_vs_ours.csv"]],
                ["Section 6.2, Figure 10, Table 17: reliability and conformal intervals", [f"{f}/figure10.png", f"{t}/table17.csv"]],
                ["benchcast complete: the deployed reliability model and its calibration", [f"{t}/complete_calibration.csv"]],
                ["Paper vs ours, every number", [f"{t}/paper_vs_ours.md", f"{t}/section5_paper_vs_ours.csv"]],
            ],
        )  # fmt: skip

    def costs(self) -> dict:
        return {"(all)": "not reported by the paper"}


STUDY = BenchPress
