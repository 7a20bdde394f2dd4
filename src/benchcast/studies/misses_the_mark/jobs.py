"""The jobs of the "misses the mark" study for one config: which cells run, what each job reads,
which parameters it gets, which outputs the study promises.

``workflow/rules/misses_the_mark.smk`` wires files with this; keeping the logic here makes it
testable without Snakemake and keeps the rules file to rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from benchcast.data.catalog import Catalog
from benchcast.data.item_level import dataset_tables, iter_item_datasets
from benchcast.errors import ConfigError
from benchcast.methods import REGISTRY, get_prefit, job_params, make_method
from benchcast.studies.contract import guests_to_run

STUDY = "misses_the_mark"
RUNS = "results/runs/misses_the_mark/{dataset}/{split}/{method}/n={n}.parquet"
TIMING = "results/timing/misses_the_mark/{dataset}/{split}/{method}/n={n}.parquet"
SPLITS = "results/splits/misses_the_mark/{dataset}/{split}.parquet"
TABLES = "results/tables/misses_the_mark"
FIGURES = "results/figures/misses_the_mark"
#: a budget-independent per-trial fit (benchcast.methods.prefit): its tables and timing.parquet
PREFIT = "results/prefit/misses_the_mark/{dataset}/{split}/{fit}"
#: one trial range of a prefit split into jobs (misses_the_mark.prefit_parts), merged into PREFIT
PREFIT_PART = "results/prefit/misses_the_mark/{dataset}/{split}/{fit}_parts/{part}"

# Longest jobs first, so that on few cores no long job starts last and becomes the run's tail.
# The IRT fits have priority 10; Random-Search-Learn's cost grows with the budget (MuSR/IFEval/MATH
# n = 200: ~530 s; n = 50: 25-70 s); PCA and Lasso come next (up to ~100 s); every other job takes
# a few seconds. Scheduling only: results do not depend on it.
# TailoredBench (the cross-paper 12th method) runs one PAM per target and trial, so its jobs are
# among the long ones too.
RUN_PRIORITY = {"random_search_learn": 6, "tailoredbench": 6, "pca": 3, "lasso": 3}
# The IRT fits are the longest jobs of the grid (up to ~15 min) and P-IRT/GP-IRT wait on them;
# Lasso's run jobs (priority 3-5) wait on its path (up to ~100 s on QNLI).
PREFIT_PRIORITY = {"irt": 10, "lasso": 5}

# SLURM job groups (ignored by local runs): a prefit and the run jobs that read it are one group
# job per dataset and split (mtm_fit_<fit>); the other run jobs are bundled by cost class, so many
# short jobs share one submission. workflow/profiles/slurm sets each class's bundle size
# (group-components); the few-second methods are the many.
RUN_GROUPS = {"random_search_learn": "mtm_search", "tailoredbench": "mtm_search", "pca": "mtm_pca"}
LIGHT_RUN_GROUP = "mtm_light"
#: metrics, figures and tables: one bundle after the runs
REPORT_GROUP = "mtm_report"


def check_budgets(budgets: Mapping[str, list[int]], specs) -> None:
    """Refuse, before any job runs, a budget larger than a dataset's items (catalog ``n_items``).

    ``budgets`` maps a config key (``misses_the_mark.budgets``) to its budgets; ``specs`` are the
    catalog entries of the datasets it applies to. Entries without ``n_items`` are checked by the
    run job itself (the ``Oracle`` refuses a budget past the items it has).
    """
    for key, values in budgets.items():
        for spec in specs:
            too_big = sorted(n for n in values if spec.n_items is not None and n > spec.n_items)
            if too_big:
                raise ConfigError(
                    f"config {key}: budget {too_big[-1]} is more than the {spec.n_items} items of dataset "
                    f"'{spec.name}' (catalog n_items). Fix: use budgets of at most {spec.n_items} in {key}, "
                    f"or leave '{spec.name}' out of misses_the_mark.datasets"
                )


@dataclass
class Jobs:
    """The study's jobs for ``config["misses_the_mark"]`` (validated, defaults filled in).

    Construction checks what can be checked before any job runs: the datasets are item-level
    catalog entries, the methods are registered and labelled uniquely, the budgets fit the
    datasets.
    """

    config: Mapping
    catalog: Catalog
    method_name: dict[str, str] = field(init=False)
    compare_as: dict[str, str] = field(init=False)
    _method_params: dict[str, dict] = field(init=False)
    #: methods another study runs under this grid (method_comparison): label -> (name, params);
    #: their run jobs are this study's rule's, not in its tables
    guests: dict[str, tuple[str, dict]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        cfg = self.config
        specs = iter_item_datasets(cfg["datasets"], self.catalog)  # item-level catalog entries, or DataError
        labels = [m.get("label", m["name"]) for m in cfg["methods"]]
        if len(set(labels)) != len(labels):
            raise ConfigError("config misses_the_mark.methods: a method is listed twice; give repeats a distinct label")
        self.method_name = {m.get("label", m["name"]): m["name"] for m in cfg["methods"]}
        self._method_params = {m.get("label", m["name"]): dict(m.get("params", {})) for m in cfg["methods"]}
        unknown = sorted(set(cfg.get("trials_by_method", {})) - set(labels))
        if unknown:
            raise ConfigError(
                f"config misses_the_mark.trials_by_method: {', '.join(unknown)} is not a configured "
                f"method label ({', '.join(labels)})"
            )
        #: label -> the paper's method it is compared with, where a method entry names one
        self.compare_as = {m.get("label", m["name"]): m["paper_method"] for m in cfg["methods"] if "paper_method" in m}
        for label, paper_method in self.compare_as.items():
            if paper_method in labels:
                raise ConfigError(
                    f"config misses_the_mark.methods: {label} has paper_method '{paper_method}', which the run also "
                    f"runs under its own label. Fix: drop one of them"
                )
        for label, name in self.method_name.items():  # names and settings, before any job runs
            params = {k: v for k, v in self._method_params[label].items() if k != "max_trials"}  # the runner's
            where = "config misses_the_mark.methods" + (f" (label {label})" if label != name else "")
            make_method(name, params, where=where)
        check_budgets({"misses_the_mark.budgets": cfg["budgets"]}, specs)
        fig5 = cfg["figure5"]
        check_budgets(
            {"misses_the_mark.figure5.aipw_n / random_sampling_n": [fig5["aipw_n"], fig5["random_sampling_n"]]},
            [self.catalog[self.figure5_dataset]],
        )

    def add_guests(self, guests) -> None:
        """Run other studies' methods (:class:`~benchcast.studies.contract.GuestMethod`) on this
        grid too; one named like a configured label without settings of its own is that method."""
        own = {label: (name, self._method_params[label]) for label, name in self.method_name.items()}
        for g, _, _ in guests_to_run(STUDY, guests, own):
            self.guests[g.label] = (g.name, dict(g.params or {}))

    # -- methods -------------------------------------------------------------------------------
    @property
    def methods(self) -> list[str]:
        """The method labels (the ``{method}`` wildcard), in config order."""
        return list(self.method_name)

    def name_of(self, label: str) -> str:
        """The registry method of a label (the study's own or a guest's)."""
        if label in self.guests:
            return self.guests[label][0]
        return self.method_name.get(label, label)  # Figure 5 may ask for an unconfigured AIPW

    def _registered(self, label: str):
        return REGISTRY.get(self.name_of(label))

    def prefit(self, label: str) -> str | None:
        """The budget-independent per-trial fit a method reuses ("irt", "lasso") or None."""
        method = self._registered(label)
        return method.needs_prefit if method is not None else None

    def method_params(self, label: str, split: str) -> dict:
        """Only this method's parameters (changing another method's does not rerun its jobs);
        P-IRT / GP-IRT get the shared IRT fit's settings for the split, and ``trials_by_method``
        becomes the trial runner's ``max_trials``; a method of another package adds its origin
        (:func:`~benchcast.methods.plugins.job_params`: its new code reruns its jobs)."""
        params = dict(self.guests[label][1] if label in self.guests else self._method_params.get(label, {}))
        if self.prefit(label) == "irt":
            if "irt" in params:
                raise ConfigError(
                    f"config misses_the_mark.methods: {label} takes its IRT settings from "
                    "misses_the_mark.irt (one fit shared by P-IRT and GP-IRT); remove params.irt"
                )
            params["irt"] = self.irt_fit_params(split)
        if label in self.config.get("trials_by_method", {}):
            params["max_trials"] = int(self.config["trials_by_method"][label])
        return job_params(self.name_of(label), params)

    def lasso_params(self, label: str) -> dict:
        """A Lasso configuration's path settings (``max_trials`` limits the run jobs only)."""
        params = self.guests[label][1] if label in self.guests else self._method_params.get(label, {})
        return {k: v for k, v in params.items() if k != "max_trials"}

    def run_priority(self, label: str, n: int | str) -> int:
        base = RUN_PRIORITY.get(self.name_of(label), 0)
        if not base:
            return 0
        return base + sum(int(n) >= b for b in (100, 200))  # larger budgets of these methods cost more

    def run_group(self, label: str) -> str:
        """The SLURM job group of a method's run jobs (see RUN_GROUPS)."""
        key = self.prefit_key(label)
        if key is not None:
            return self.prefit_group(key)
        return RUN_GROUPS.get(self.name_of(label), LIGHT_RUN_GROUP)

    @staticmethod
    def prefit_group(key: str) -> str:
        return f"mtm_fit_{key}"

    def group_priority(self, group: str) -> int:
        """The Snakemake priority of a SLURM job group: its highest member's. Every job of the group
        passes it to SLURM (benchcast.workflow.resources.slurm_nice), so that SLURM, too, starts the
        IRT fits first and the few-second bundles last."""
        members = [
            self.run_priority(label, n)
            for label in self.methods
            if self.run_group(label) == group
            for n in self.config["budgets"]
        ]
        members += [PREFIT_PRIORITY[self.prefit_kind(k)] for k in self.prefit_keys() if self.prefit_group(k) == group]
        return max(members, default=0)

    def prefit_key(self, label: str) -> str | None:
        """The ``{fit}`` of a method's prefit job: the IRT fit is one per (dataset, split), shared by
        P-IRT and GP-IRT (its settings are ``misses_the_mark.irt``); any other prefit is made from
        the method's own parameters, so it is one per method label."""
        kind = self.prefit(label)
        return None if kind is None else ("irt" if kind == "irt" else label)

    def prefit_keys(self) -> list[str]:
        return list(dict.fromkeys(k for k in map(self.prefit_key, [*self.methods, *self.guests]) if k is not None))

    def prefit_kind(self, key: str) -> str:
        return "irt" if key == "irt" else self.prefit(key)

    def prefit_settings(self, key: str, split: str) -> dict:
        """Only this prefit's settings: changing another method's parameters does not rerun it."""
        if self.prefit_kind(key) == "irt":
            return {
                "irt": self.irt_fit_params(split),
                "with_bias": self.irt_with_bias,
                "share_identical_sources": self.irt_shares_identical_sources(split),
            }
        return self.lasso_params(key)

    @property
    def irt_with_bias(self) -> bool:
        """GP-IRT's lambda needs a second, held-out fit; skip it when only P-IRT is configured."""
        return any(
            REGISTRY[n].needs_prefit == "irt" and getattr(REGISTRY[n], "wants_bias", False)
            for n in [*self.method_name.values(), *(name for name, _ in self.guests.values())]
        )

    # -- IRT -----------------------------------------------------------------------------------
    def irt_settings(self, split: str) -> dict:
        """``misses_the_mark.irt`` for one split: the shared settings with the split's ``by_split`` overrides."""
        irt = self.config["irt"]
        settings = {k: v for k, v in irt.items() if k != "by_split"}
        settings.update(irt.get("by_split", {}).get(split, {}))
        return settings

    def irt_fit_params(self, split: str) -> dict:
        """The fitter's keyword arguments (what P-IRT / GP-IRT record in their params)."""
        return {k: v for k, v in self.irt_settings(split).items() if k != "share_identical_sources"}

    def irt_shares_identical_sources(self, split: str) -> bool:
        return bool(self.irt_settings(split).get("share_identical_sources", True))

    def prefit_parts(self, dataset: str, key: str) -> int:
        """How many jobs make a prefit (``misses_the_mark.prefit_parts``; 1 for a kind that cannot
        be split): the longest IRT fits in trial ranges, so that cores, not one job, set the wall time."""
        if not get_prefit(self.prefit_kind(key)).splittable:
            return 1
        return int(self.config.get("prefit_parts", {}).get(dataset, 1))

    def prefit_part_dirs(self, dataset: str, split: str, key: str) -> list[str]:
        """The part folders a prefit merges, in trial order (none when one job makes it)."""
        parts = self.prefit_parts(dataset, key)
        if parts == 1:
            return []
        return [PREFIT_PART.format(dataset=dataset, split=split, fit=key, part=k) for k in range(parts)]

    # -- jobs ----------------------------------------------------------------------------------
    def run_inputs(self, dataset: str, split: str, label: str) -> dict[str, str]:
        """A run job's inputs: the data, the split and, for methods with a per-trial prefit, its folder."""
        inputs = {**dataset_tables(dataset), "splits": SPLITS.format(dataset=dataset, split=split)}
        key = self.prefit_key(label)
        if key is not None:  # the trial's budget-independent fit, made once for every budget
            inputs["prefit"] = PREFIT.format(dataset=dataset, split=split, fit=key)
        return inputs

    def cells(self) -> list[dict]:
        cfg = self.config
        return [
            dict(dataset=d, split=s, method=m, n=n)
            for d in cfg["datasets"]
            for s in cfg["splits"]
            for m in self.methods
            for n in cfg["budgets"]
        ]

    def cell_files(self, template: str) -> list[str]:
        return [template.format(**c) for c in self.cells()]

    def protocol_runs(self, label: str) -> list[dict]:
        """A method's run files over the grid: budget ``n``, group ``dataset/split``."""
        cfg = self.config
        return [
            {"budget": int(n), "group": f"{d}/{s}", "path": RUNS.format(dataset=d, split=s, method=label, n=n)}
            for d in cfg["datasets"]
            for s in cfg["splits"]
            for n in cfg["budgets"]
        ]

    @property
    def figure5_dataset(self) -> str:
        ds = self.config["figure5"]["dataset"]
        if ds != "auto":
            return ds
        # "largest available dataset": most items, then most models (catalog expectations)
        return max(
            self.config["datasets"], key=lambda d: (self.catalog[d].n_items or 0, self.catalog[d].n_models or 0, d)
        )

    def figure5_run(self, method: str, n: int) -> str:
        return RUNS.format(dataset=self.figure5_dataset, split=self.config["figure5"]["split"], method=method, n=n)

    def heatmaps(self, folder: str, suffix: str) -> list[str]:
        return [f"{folder}/heatmap_{s}_n{n}.{suffix}" for s in self.config["splits"] for n in self.config["budgets"]]

    def final_outputs(self) -> list[str]:
        return [
            f"{TABLES}/paper_vs_ours.csv",
            f"{TABLES}/paper_vs_ours.md",
            f"{TABLES}/table1.csv",
            f"{TABLES}/table2.csv",
            f"{TABLES}/kendall_tau.csv",
            f"{TABLES}/figure4.csv",
            f"{FIGURES}/figure5.png",
            *interleave(self.heatmaps(FIGURES, "png"), self.heatmaps(TABLES, "md")),
        ]

    def index_sections(self) -> list[list]:
        """The paper's sections and the outputs reproducing them (results/index.md)."""
        heatmaps = interleave(self.heatmaps(FIGURES, "png"), self.heatmaps(TABLES, "md"))
        return [
            ["Sections 4.2-4.3, Figures 2-3 and 6-11: estimation gap per dataset, split and budget", heatmaps],
            [
                "Section 4.4, Figure 4: estimation gap vs model similarity",
                [f"{TABLES}/figure4.csv", f"{FIGURES}/figure4.png"],
            ],
            ["Section 4.4, Figure 5: normalised gap by similarity bin", [f"{FIGURES}/figure5.png"]],
            ["Section 4.5, Table 1: gap and reduction over datasets per budget", [f"{TABLES}/table1.md"]],
            ["Appendix C, Table 2: training and inference time", [f"{TABLES}/table2.md"]],
            [
                "Beyond the paper: Kendall's tau of the estimates per dataset, split and budget",
                [f"{TABLES}/kendall_tau.md", f"{TABLES}/kendall_tau.csv"],
            ],
            [
                "Paper vs ours, per method and budget",
                [f"{TABLES}/paper_vs_ours.md", f"{TABLES}/acceptance_summary.csv"],
            ],
        ]

    def titles(self, datasets: Iterable[str]) -> dict[str, str]:
        return {d: self.catalog[d].title for d in datasets}


def interleave(a: list[str], b: list[str]) -> list[str]:
    return [x for pair in zip(a, b) for x in pair]
