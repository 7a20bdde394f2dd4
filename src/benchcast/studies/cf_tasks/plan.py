"""The jobs of the collaborative-filtering study for one config: one run job per (matrix, split,
method, ratio) looping over the repeats, then one tables job. ``workflow/rules/cf_tasks.smk`` wires
files with this.

A matrix is several catalog datasets joined into tasks (:mod:`benchcast.data.task_matrix`); the
``date`` split needs release keys, so a matrix with ``release: none`` runs the ``random`` split only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from benchcast.data.catalog import Catalog
from benchcast.errors import ConfigError
from benchcast.methods import REGISTRY
from benchcast.studies.cf_tasks.cf import CFSettings

RUNS = "results/runs/cf_tasks/{matrix}/{split}/{method}/ratio={ratio}.parquet"
METRICS = "results/runs/cf_tasks/{matrix}/{split}/{method}/ratio={ratio}.metrics.parquet"
TABLES = "results/tables/cf_tasks"
FIGURES = "results/figures/cf_tasks"
RUN_GROUP = "cf_tasks_runs"
REPORT_GROUP = "cf_tasks_report"


@dataclass(frozen=True)
class Cell:
    matrix: str
    split: str
    method: str
    ratio: str  # as the config spells it: the file name's ratio=


@dataclass
class Plan:
    """The study's jobs for ``config["cf_tasks"]`` (validated, defaults filled in). Construction
    checks the matrices' datasets and the methods before any job runs."""

    config: Mapping
    catalog: Catalog
    methods: dict[str, dict] = field(init=False)
    cells: list[Cell] = field(init=False)

    def __post_init__(self) -> None:
        cfg = self.config
        self.methods = {}
        for entry in cfg["methods"]:
            name, params = entry["name"], dict(entry.get("params") or {})
            if name != "cf" and name not in REGISTRY:
                raise ConfigError(
                    f"config cf_tasks.methods: unknown method '{name}'. Known: cf, {', '.join(sorted(REGISTRY))}"
                )
            if name in self.methods:
                raise ConfigError(f"config cf_tasks.methods: '{name}' is listed twice. Fix: keep one")
            if name == "cf":
                try:
                    CFSettings(**params)
                except TypeError as exc:
                    raise ConfigError(f"config cf_tasks.methods: cf params: {exc}. Fix: see CFSettings") from None
            self.methods[name] = params
        for matrix, spec in cfg["matrices"].items():
            for dataset in spec["datasets"]:
                if dataset not in self.catalog.datasets:
                    raise ConfigError(f"config cf_tasks.matrices.{matrix}: dataset '{dataset}' is not in the catalog")
        self.cells = [
            Cell(matrix, split, method, self.ratio_name(ratio))
            for matrix in cfg["matrices"]
            for split in self.splits(matrix)
            for method in self.methods
            for ratio in cfg["ratios"]
        ]

    @staticmethod
    def ratio_name(ratio: float) -> str:
        return f"{float(ratio):g}"

    def splits(self, matrix: str) -> list[str]:
        """The config's splits this matrix can run (``date`` needs release keys)."""
        spec = self.config["matrices"][matrix]
        return [s for s in self.config["splits"] if s != "date" or spec.get("release", "position") != "none"]

    def datasets(self) -> list[str]:
        return list(dict.fromkeys(d for spec in self.config["matrices"].values() for d in spec["datasets"]))

    def run_files(self, pattern: str = RUNS) -> list[str]:
        return [pattern.format(matrix=c.matrix, split=c.split, method=c.method, ratio=c.ratio) for c in self.cells]

    def tables(self) -> dict[str, str]:
        return {name: f"{TABLES}/{name}.csv" for name in ("figure5", "table3", "table4", "paper_vs_ours")}

    def figures(self) -> dict[str, str]:
        return {"figure5": f"{FIGURES}/figure5.png"}

    def final_outputs(self) -> list[str]:
        return [*self.tables().values(), *self.figures().values()]
