"""BenchPress ("You Don't Need to Run Every Eval") under the study contract: its output paths,
outputs and index entry."""

from __future__ import annotations

from benchcast.errors import keyword_names
from benchcast.output.comparison import WIDENING, of_the_paper, words
from benchcast.studies.contract import MethodEntry, Study

RUNS = "results/runs/benchpress/grid/{transform}/{bpmethod}.parquet"
METRICS = "results/metrics/benchpress"
TABLES = "results/tables/benchpress"
FIGURES = "results/figures/benchpress"
#: the reliability model `benchcast complete` reads
RELIABILITY = "results/models/benchpress/reliability.json"
#: the paper's grid (Section 4): 7 transforms x 12 methods on 30 held-out folds (10 seeds x 3 folds)
PAPER_TRANSFORMS = ("identity", "log", "logit", "arcsinh", "sqrt", "probit", "quantile")
PAPER_METHODS = 12
PAPER_FOLDS = 30
#: the 2 s - 2 min grid jobs share SLURM submissions
GRID_GROUP = "bp_grid"


class BenchPress(Study):
    name = "benchpress"
    title = "You Don't Need to Run Every Eval (BenchPress)"
    paper = "../shared/papers/benchpress-you-dont-need-to-run-every-eval.txt"
    position = 20
    job_groups = {GRID_GROUP: 12}

    def __init__(self, config, catalog, guests=(), others=None):
        super().__init__(config, catalog, guests, others)
        from benchcast.studies.benchpress.analysis import validate_grid_config

        #: (transform, method) -> its grid of settings; unknown names stop the build with the fix
        self.grid = {(t, m): g for t, m, g in validate_grid_config(config["transforms"], config["methods"])}

    @classmethod
    def method_entries(cls, config) -> list[MethodEntry]:
        """Each method's first grid setting (its grid made explicit in the section where the config
        leaves it to the method's own); a completer's first argument is the matrix, not a setting."""
        from benchcast.completion.completers import COMPLETERS

        out = []
        for m in config["methods"]:
            completer = COMPLETERS[m["name"]]
            m["grid"] = [dict(g) for g in m.get("grid") or completer.grid or [{}]]
            out.append(MethodEntry(m["grid"][0], tuple(keyword_names(completer.fn) or ())[1:]))
        return out

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

    def scope(self) -> str:
        cfg = self.config
        s5, folds = cfg["section5"], cfg["max_folds"] or PAPER_FOLDS
        grid = len(cfg["transforms"]) * len(cfg["methods"])
        return (
            f"{of_the_paper(len(cfg['transforms']), len(PAPER_TRANSFORMS), 'transforms')} "
            f"({words(cfg['transforms'])}) x {of_the_paper(len(cfg['methods']), PAPER_METHODS, 'methods')} "
            f"= {of_the_paper(grid, len(PAPER_TRANSFORMS) * PAPER_METHODS, 'settings')}; "
            f"{of_the_paper(min(folds, PAPER_FOLDS), PAPER_FOLDS, 'held-out folds')}; "
            f"{of_the_paper(len(s5['probe_runs']), 6, 'probe-set searches')} of up to "
            f"{s5['probe_steps']} benchmarks; {of_the_paper(s5['random_seeds'], 10, 'random-baseline seeds')}; "
            f"{of_the_paper(s5['temporal_seeds'], 10, 'temporal seeds')}; "
            # the paper's word: the scope is in every paper_vs_ours.csv row (the digests)
            f"{of_the_paper(cfg['hypotheses']['trials'], 10, 'hypothesis-test seeds')}"
        )

    def index(self) -> dict:
        cells, t, f = self.config["tolerance"]["cells"], TABLES, FIGURES
        return self.index_entry(
            f"|ours - paper| <= max(abs, {cells['rel']} x |paper|), abs {cells['abs']} or per column "
            + words([f"{col} {value}" for col, value in cells["abs_by_column"].items()])
            + f" (config benchpress.tolerance.cells); with fewer folds than the paper's {PAPER_FOLDS}, Table 11's "
            f"numbers: {WIDENING.replace('trials', 'folds')}",
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
                ["benchcast complete: the reliability model and its calibration", [f"{t}/complete_calibration.csv"]],
                ["Paper vs ours, every number", [f"{t}/paper_vs_ours.md", f"{t}/section5_paper_vs_ours.csv"]],
            ],
        )  # fmt: skip

    def costs(self) -> dict:
        return {"(all)": "not reported by the paper"}


STUDY = BenchPress
