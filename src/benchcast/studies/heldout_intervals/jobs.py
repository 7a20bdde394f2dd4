"""The jobs of the ``heldout_intervals`` study for one config: a stored fit per (dataset, method, budget)
in the folder ``benchcast select`` / ``estimate`` read, and a held-out test job for each, then one
tables job. ``workflow/rules/heldout_intervals.smk`` wires files with this."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from benchcast.data.catalog import Catalog
from benchcast.errors import ConfigError
from benchcast.methods import job_params, make_method
from benchcast.studies.contract import guests_to_run

STUDY = "heldout_intervals"
FIT = "results/models/{dataset}/{method}/n={budget}/fit.json"
HELDOUT = "results/runs/heldout_intervals/{dataset}/{method}/n={budget}.parquet"
HELDOUT_TIMING = "results/runs/heldout_intervals/{dataset}/{method}/n={budget}.timing.parquet"
CLI_SECONDS = "results/runs/heldout_intervals/{dataset}/{method}/n={budget}.cli.json"
#: every pair of one held-out fold's models, compared as ``benchcast compare`` compares two new models
HELDOUT_PAIRS = "results/runs/heldout_intervals/{dataset}/{method}/n={budget}.pairs.parquet"
#: each held-out fold's fit's calibration pairs (``heldout_fold``): what the pairs' intervals were calibrated on
HELDOUT_CALIBRATION_PAIRS = "results/runs/heldout_intervals/{dataset}/{method}/n={budget}.calibration_pairs.parquet"
#: each held-out fold's fit's calibration rows (``heldout_fold``): the cross-validation ``auto`` chooses by
HELDOUT_CALIBRATION = "results/runs/heldout_intervals/{dataset}/{method}/n={budget}.calibration.parquet"
TABLES = "results/tables/heldout_intervals"


@dataclass(frozen=True)
class Cell:
    dataset: str
    method: str
    budget: int


@dataclass
class Jobs:
    """The jobs for ``config["heldout_intervals"]`` (validated, defaults filled in)."""

    config: Mapping
    catalog: Catalog
    methods: dict[str, dict] = field(init=False)
    only: dict[str, list[str] | None] = field(init=False)  # a method's own datasets, if it lists them
    cells: list[Cell] = field(init=False)
    #: the cells of methods another study runs under this protocol (method_comparison)
    guest_cells: list[Cell] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.methods, self.only = {}, {}
        for entry in self.config["methods"]:
            name = entry["name"]
            make_method(name, entry.get("params"), where="config heldout_intervals.methods")  # fails here, not in a job
            if name in self.methods:
                raise ConfigError(f"config heldout_intervals.methods: '{name}' is listed twice")
            self.methods[name] = job_params(name, entry.get("params"))
            self.only[name] = entry.get("datasets")
        for d in self.config["datasets"]:
            spec = self.catalog[d]
            if spec.kind != "item_binary":
                raise ConfigError(
                    f"config heldout_intervals.datasets: '{d}' is not an item-level 0/1 dataset (kind {spec.kind})"
                )
        self.cells = [
            Cell(d, m, int(n))
            for d in self.config["datasets"]
            for m in self.methods
            for n in self.config["budgets"]
            if int(n) >= make_method(m, self.methods[m]).min_budget() and (self.only[m] is None or d in self.only[m])
        ]

    def add_guests(self, guests) -> None:
        """Run other studies' methods (:class:`~benchcast.studies.contract.GuestMethod`) through
        the held-out test on every dataset and budget. Fits are named by method here, so a guest's
        label is its method's name; one this study runs already, without settings of its own, is
        that method (on its datasets)."""
        own = {name: (name, params) for name, params in self.methods.items()}
        for g, m, params in guests_to_run(STUDY, guests, own, by_method="its fits"):
            self.methods[g.name], self.only[g.name] = params, None
            self.guest_cells += [
                Cell(d, g.name, int(n))
                for d in self.config["datasets"]
                for n in self.config["budgets"]
                if int(n) >= m.min_budget()
            ]

    def protocol_runs(self, label: str) -> list[dict]:
        """A method's held-out rows per dataset and budget (group: the dataset)."""
        return [
            {
                "budget": c.budget,
                "group": c.dataset,
                "path": HELDOUT.format(dataset=c.dataset, method=c.method, budget=c.budget),
            }
            for c in [*self.cells, *self.guest_cells]
            if c.method == label
        ]

    def datasets(self) -> list[str]:
        return list(self.config["datasets"])

    def paths(self, pattern: str) -> list[str]:
        return [pattern.format(dataset=c.dataset, method=c.method, budget=c.budget) for c in self.cells]

    def tables(self) -> dict[str, str]:
        return {
            "heldout": f"{TABLES}/heldout.csv",
            "speed": f"{TABLES}/speed.csv",
            "paired": f"{TABLES}/paired.csv",
            "auto": f"{TABLES}/auto.csv",
            "auto_speed": f"{TABLES}/auto_speed.csv",
        }

    def final_outputs(self) -> list[str]:
        return [*self.paths(FIT), *self.tables().values()]
