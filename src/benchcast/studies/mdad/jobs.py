"""The jobs of the MDAD study for one config: one run job per (dataset, method, source count) that
loops over the trials and every micro-benchmark size, then one tables job. ``workflow/rules/mdad.smk``
wires files with this.

A dataset runs the sizes ``k`` below its seen half (the smallest subtask bounds nothing: sizes are
checked against the whole seen half) and at least the method's smallest budget
(:meth:`~benchcast.methods.base.Method.min_budget`), and the source counts that leave ``n_targets``
targets. The paper's selectors (``methods``) run every source count; the other registry methods of
``cross_paper`` (no paper has this comparison) run each dataset's largest, on the same trials.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from benchcast.data.catalog import Catalog
from benchcast.data.item_level import iter_item_datasets
from benchcast.errors import ConfigError
from benchcast.methods import job_params, make_method
from benchcast.studies.contract import guests_to_run

STUDY = "mdad"
RUNS = "results/runs/mdad/{dataset}/{method}/n_source={n_source}.parquet"
TIMING = "results/timing/mdad/{dataset}/{method}/n_source={n_source}.parquet"
#: Section 5.3 / Appendix L: a fixed group of target models (e.g. 8B instruction-tuned) per dataset
SAME_SIZE_RUNS = "results/runs/mdad_same_size/{dataset}/{group}/{method}.parquet"
#: Appendix G: micro-benchmarks of a fixed percentage, of the whole seen half or of each subtask's
PERCENT_RUNS = "results/runs/mdad_percent/{scope}/{dataset}/{method}/n_source={n_source}.parquet"
TABLES = "results/tables/mdad"
FIGURES = "results/figures/mdad"
#: MDAD run jobs take seconds (IRT methods a minute or more); SLURM bundles them
RUN_GROUP = "mdad_runs"
REPORT_GROUP = "mdad_report"


@dataclass(frozen=True)
class Cell:
    dataset: str
    method: str
    n_source: int
    sizes: tuple[int, ...]


@dataclass
class Jobs:
    """The study's jobs for ``config["mdad"]`` (validated, defaults filled in). Construction checks
    the datasets and methods before any job runs."""

    config: Mapping
    catalog: Catalog
    #: every method's parameters: the paper's selectors, then the cross-paper methods
    methods: dict[str, dict] = field(init=False)
    #: the paper's selectors (config ``methods``): every source count, and the paper's figures
    selectors: list[str] = field(init=False)
    cells: list[Cell] = field(init=False)
    #: per dataset the source counts that leave ``n_targets`` targets
    source_counts: dict[str, list[int]] = field(init=False)
    #: per dataset the micro-benchmark sizes it runs (below its seen half)
    sizes: dict[str, tuple[int, ...]] = field(init=False)
    #: the cells of methods another study runs under this protocol (method_comparison): each
    #: dataset's largest source count, as the cross-paper methods; not in the study's tables
    guest_cells: list[Cell] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        cfg = self.config
        self.methods = {}
        cross = list((cfg.get("cross_paper") or {}).get("methods") or [])
        for key, entries in (("methods", cfg["methods"]), ("cross_paper.methods", cross)):
            for entry in entries:
                name = entry["name"]
                make_method(name, entry.get("params"), where=f"config mdad.{key}")  # name and settings
                if name in self.methods:
                    raise ConfigError(
                        f"config mdad.{key}: '{name}' is listed twice (methods and cross_paper.methods together). "
                        "Fix: keep one"
                    )
                self.methods[name] = job_params(name, entry.get("params"))
        self.selectors = [entry["name"] for entry in cfg["methods"]]
        min_budget = {name: make_method(name, params).min_budget() for name, params in self.methods.items()}
        self.cells, self.source_counts, self.sizes = [], {}, {}
        for spec in iter_item_datasets(cfg["datasets"], self.catalog):
            if spec.n_models is None or spec.n_items is None:
                raise ConfigError(
                    f"config mdad.datasets: catalog entry '{spec.name}' must give n_models and n_items. "
                    "Fix: add them to the catalog"
                )
            sizes = tuple(int(k) for k in cfg["sizes"].get(spec.name, cfg["sizes"]["default"]) if k < spec.n_items // 2)
            sources = [int(n) for n in cfg["n_sources"] if n + cfg["n_targets"] <= spec.n_models]
            if not sizes or not sources:
                raise ConfigError(
                    f"config mdad: dataset '{spec.name}' ({spec.n_models} models, {spec.n_items} items) leaves no "
                    f"size below its seen half or no source count beside {cfg['n_targets']} targets. Fix: lower them"
                )
            self.source_counts[spec.name] = sources
            self.sizes[spec.name] = sizes
            for method in self.methods:
                runs = self._sizes_for(spec.name, method, min_budget[method])
                for n_source in sources if method in self.selectors else [max(sources)]:
                    self.cells.append(Cell(spec.name, method, n_source, runs))
        for scope in ("benchmark", "subtask"):
            for dataset in self.percent_scope(scope).get("datasets") or []:
                if dataset not in cfg["datasets"]:
                    raise ConfigError(
                        f"config mdad.percent.{scope}: dataset '{dataset}' is not in mdad.datasets. Fix: add it"
                    )
        for group, spec in self.same_size_groups().items():
            for dataset in spec["datasets"]:
                if dataset not in cfg["datasets"]:
                    raise ConfigError(
                        f"config mdad.same_size.groups.{group}: dataset '{dataset}' is not in mdad.datasets. Fix: add it"
                    )

    def _sizes_for(self, dataset: str, method: str, min_budget: int) -> tuple[int, ...]:
        runs = tuple(k for k in self.sizes[dataset] if k >= min_budget)
        if not runs:
            raise ConfigError(
                f"config mdad: {method} needs a budget of at least {min_budget}, above every size of "
                f"'{dataset}'. Fix: add a larger size or change its params"
            )
        return runs

    def add_guests(self, guests) -> None:
        """Run other studies' methods (:class:`~benchcast.studies.contract.GuestMethod`) at each
        dataset's largest source count. Runs are named by method here, so a guest's label is its
        method's name; one this study runs already, without settings of its own, is that method."""
        own = {name: (name, params) for name, params in self.methods.items()}
        for g, m, params in guests_to_run(STUDY, guests, own, by_method="its runs"):
            self.methods[g.name] = params
            for dataset, sources in self.source_counts.items():
                self.guest_cells.append(
                    Cell(dataset, g.name, max(sources), self._sizes_for(dataset, g.name, m.min_budget()))
                )

    def protocol_runs(self, label: str) -> list[dict]:
        """A method's run files: each dataset's largest source count (group ``dataset``); a file
        holds every size (the budgets)."""
        return [
            {
                "budget": None,
                "group": dataset,
                "path": RUNS.format(dataset=dataset, method=label, n_source=max(sources)),
            }
            for dataset, sources in self.source_counts.items()
        ]

    def cell(self, dataset: str, method: str, n_source: int) -> Cell:
        for c in [*self.cells, *self.guest_cells]:
            if (c.dataset, c.method, c.n_source) == (dataset, method, int(n_source)):
                return c
        raise KeyError((dataset, method, n_source))

    def run_files(self, pattern: str = RUNS) -> list[str]:
        return [pattern.format(dataset=c.dataset, method=c.method, n_source=c.n_source) for c in self.cells]

    def tables(self) -> dict[str, str]:
        names = [
            "mdad",
            "agreement",
            "estimation",
            "sensitivity",
            "table2",
            "table3",
            "table5",
            "cross_paper",
            "cross_paper_summary",
            "paper_vs_ours",
            "acceptance_summary",
        ]
        return {name: f"{TABLES}/{name}.csv" for name in names}

    def figures(self) -> dict[str, str]:
        return {
            name: f"{FIGURES}/{name}.png"
            for name in (
                "figure1",
                "figure3",
                "figure4",
                "figure6",
                "figure7",
                "figure8",
                "figure13",
                "figure16",
                "cross_paper",
            )
        }

    def same_size_groups(self) -> dict:
        """Config ``same_size.groups`` (none when the config has no ``same_size``)."""
        return dict((self.config.get("same_size") or {}).get("groups") or {})

    def same_size_cells(self) -> list[tuple[str, str, str]]:
        """(dataset, group, method) of every same-size run."""
        groups = self.same_size_groups()
        return [(d, g, m) for g, spec in groups.items() for d in spec["datasets"] for m in self.selectors]

    def same_size_outputs(self) -> dict[str, str]:
        if not self.same_size_cells():
            return {}
        return {"table": f"{TABLES}/same_size.csv", "figure": f"{FIGURES}/figure5.png"}

    def percent_scope(self, scope: str) -> dict:
        """Config ``percent.<scope>`` (empty when the config has none)."""
        return dict((self.config.get("percent") or {}).get(scope) or {})

    def percent_cells(self) -> list[tuple[str, str, str, int]]:
        """(scope, dataset, selector, source count) of every fixed-percentage run: each dataset's
        largest source count, or all of them (``sources: all``)."""
        cells = []
        for scope in ("benchmark", "subtask"):
            spec = self.percent_scope(scope)
            for dataset in spec.get("datasets") or []:
                counts = self.source_counts[dataset]
                for method in self.selectors:
                    for n_source in counts if spec.get("sources") == "all" else [max(counts)]:
                        cells.append((scope, dataset, method, n_source))
        return cells

    def percent_outputs(self) -> dict[str, str]:
        if not self.percent_cells():
            return {}
        return {
            "table": f"{TABLES}/percent.csv",
            "figure10": f"{FIGURES}/figure10.png",
            "figure17": f"{FIGURES}/figure17.png",
        }

    def final_outputs(self) -> list[str]:
        return [
            *self.tables().values(),
            *self.figures().values(),
            *self.same_size_outputs().values(),
            *self.percent_outputs().values(),
        ]
