"""The jobs of the TailoredBench study for one config: its settings (a method with parameters and
inference counts), one run job per (setting, inference count) on the study's dataset, and what the
tables read.

A *setting* is a named method configuration: Table 6's four methods, the ablations' variants of
TailoredBench (Tables 7, 8, 9, 13) and the figures' points (Figures 3a, 3b, 4), which the jobs
generate from each figure's list of values. ``workflow/rules/tailoredbench.smk`` wires files
with this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from benchcast.data.catalog import Catalog
from benchcast.data.item_level import dataset_tables, iter_item_datasets
from benchcast.errors import ConfigError
from benchcast.methods import REGISTRY, job_params, make_method
from benchcast.methods.irt_methods import check_fit_params
from benchcast.studies.contract import guests_to_run

STUDY = "tailoredbench"
SPLITS = "results/splits/tailoredbench/{dataset}.parquet"
RUNS = "results/runs/tailoredbench/{dataset}/{setting}/n={n}.parquet"
TIMING = "results/timing/tailoredbench/{dataset}/{setting}/n={n}.parquet"
METRICS = "results/metrics/tailoredbench/per_run.parquet"
#: a setting's budget-independent fit (benchcast.methods.prefit: the IRT of P-IRT / GP-IRT)
PREFIT = "results/prefit/tailoredbench/{dataset}/{setting}"
TABLES = "results/tables/tailoredbench"
FIGURES = "results/figures/tailoredbench"
#: the figures' x axis: which TailoredBench native-source mode each figure varies (Section 4.3)
FIGURE_MODES = {"figure3a": "fraction", "figure3b": "band", "figure4": "top"}
#: TailoredBench run jobs take ~1 s per run; SLURM bundles them (workflow/profiles/slurm)
RUN_GROUP = "tb_runs"
REPORT_GROUP = "tb_report"


@dataclass(frozen=True)
class Setting:
    method: str
    params: dict
    budgets: tuple[int, ...]


@dataclass
class Jobs:
    """The study's jobs for ``config["tailoredbench"]`` (validated, defaults filled in). Construction
    checks the datasets, methods, table references and budgets before any job runs."""

    config: Mapping
    catalog: Catalog
    settings: dict[str, Setting] = field(init=False)
    #: settings another study runs at Table 6's inference counts (method_comparison), not in the tables
    guests: list[str] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        cfg = self.config
        specs = iter_item_datasets([cfg["dataset"]], self.catalog)
        budgets = tuple(int(n) for n in cfg["budgets"])
        self.settings = {}
        for name, s in cfg["settings"].items():
            self._add(name, s["method"], dict(s.get("params") or {}), tuple(s.get("budgets") or budgets))
        for fig, spec in cfg["figures"].items():
            for i, value in enumerate(spec["values"]):
                params = {**spec.get("params", {}), "native": FIGURE_MODES[fig], "native_value": value}
                self._add(f"{fig}_{i}", "tailoredbench", params, (int(spec["budget"]),))
        used = dict(cfg["table6"])
        for table, spec in cfg["ablations"].items():
            used.update({f"{table}:{row}": s for row, s in spec["rows"].items()})
            for setting in spec["rows"].values():
                if setting in self.settings and int(spec["budget"]) not in self.settings[setting].budgets:
                    raise ConfigError(
                        f"config tailoredbench.ablations.{table}: setting '{setting}' does not run at inference "
                        f"count {spec['budget']}. Fix: add it to the setting's budgets"
                    )
        for where, setting in used.items():
            if setting not in self.settings:
                raise ConfigError(
                    f"config tailoredbench: '{where}' names setting '{setting}', which tailoredbench.settings "
                    f"does not define. Fix: define it or use one of {', '.join(self.settings)}"
                )
        for spec in specs:
            for name, s in self.settings.items():
                if spec.n_items is not None and max(s.budgets) >= spec.n_items:
                    raise ConfigError(
                        f"config tailoredbench.settings.{name}: inference count {max(s.budgets)} is not below the "
                        f"{spec.n_items} items of '{spec.name}'. Fix: lower it"
                    )

    def _add(self, name: str, method: str, params: dict, budgets: tuple[int, ...], where: str = "") -> None:
        # the method's name and settings, before any job runs (max_trials is the trial runner's)
        settings = {k: v for k, v in params.items() if k != "max_trials"}
        make_method(method, settings, where=where or f"config tailoredbench: setting '{name}'")
        if name in self.settings:
            raise ConfigError(f"config tailoredbench: setting '{name}' is defined twice. Fix: rename one")
        self.settings[name] = Setting(method, job_params(method, params), tuple(sorted(set(budgets))))

    def add_guests(self, guests) -> None:
        """Run other studies' methods (:class:`~benchcast.studies.contract.GuestMethod`) at
        Table 6's inference counts, each a setting of its label; one named like a setting of the
        same method without settings of its own is that setting."""
        budgets = tuple(sorted({int(n) for n in self.config["budgets"]}))
        for g in guests:
            missing = sorted(set(budgets) - set(self.settings[g.label].budgets)) if g.label in self.settings else []
            if missing:
                raise ConfigError(
                    f"{g.asked_by}: tailoredbench's setting '{g.label}' does not run at inference counts "
                    f"{missing}. Fix: give the entry another label"
                )
        own = {name: (s.method, s.params) for name, s in self.settings.items()}
        for g, _, _ in guests_to_run(STUDY, guests, own):
            self._add(g.label, g.name, dict(g.params or {}), budgets, where=f"{g.asked_by}: '{g.label}'")
            self.guests.append(g.label)

    def protocol_runs(self, label: str) -> list[dict]:
        """A setting's run files at Table 6's inference counts (group: the dataset)."""
        dataset = self.config["dataset"]
        return [
            {"budget": int(n), "group": dataset, "path": RUNS.format(dataset=dataset, setting=label, n=n)}
            for n in sorted({int(n) for n in self.config["budgets"]})
        ]

    def prefit_settings(self, setting: str) -> dict | None:
        """The settings of a setting's IRT prefit (P-IRT, GP-IRT: one fit for every run, since every
        run has the same sources, and every budget), or None. Other methods fit themselves."""
        s = self.settings[setting]
        method = REGISTRY[s.method]
        if method.needs_prefit != "irt":
            return None
        return {
            "irt": check_fit_params(s.params.get("irt")),
            "with_bias": bool(getattr(method, "wants_bias", False)),
            "share_identical_sources": True,
        }

    def prefit_names(self) -> list[str]:
        return [name for name in self.settings if self.prefit_settings(name) is not None]

    def run_inputs(self, setting: str) -> dict[str, str]:
        dataset = self.config["dataset"]
        inputs = {**dataset_tables(dataset), "splits": SPLITS.format(dataset=dataset)}
        if self.prefit_settings(setting) is not None:
            inputs["prefit"] = PREFIT.format(dataset=dataset, setting=setting)
        return inputs

    def cells(self) -> list[tuple[str, int]]:
        return [(name, n) for name, s in self.settings.items() if name not in self.guests for n in s.budgets]

    def cell_files(self, pattern: str) -> list[str]:
        return [pattern.format(dataset=self.config["dataset"], setting=s, n=n) for s, n in self.cells()]

    def figure_points(self, figure: str) -> list[tuple[object, str]]:
        """(x value, setting) of a figure, in the config's order."""
        return [(v, f"{figure}_{i}") for i, v in enumerate(self.config["figures"][figure]["values"])]

    def tables(self) -> dict[str, str]:
        names = ["table6", *self.config["ablations"], "z_test", "summary", "paper_vs_ours", "acceptance_summary"]
        return {name: f"{TABLES}/{name}.csv" for name in names}

    def figures(self) -> dict[str, str]:
        return {name: f"{FIGURES}/{name}.png" for name in (*self.config["figures"], "figure7")}

    def final_outputs(self) -> list[str]:
        return [*self.tables().values(), *self.figures().values()]
