"""The jobs of the collaborative-filtering study for one config: one run job per (matrix, split,
method, ratio) looping over the repeats, then one tables job. ``workflow/rules/cf_tasks.smk`` wires
files with this.

A matrix is several catalog datasets joined into tasks (:mod:`benchcast.data.task_matrix`); the
``date`` split needs release keys, so a matrix with ``release: none`` runs the ``random`` split only.

A matrix may list ``skip_methods`` (methods too slow at its budgets; the config says why).
A method entry is ``{name, method, params}``: ``method`` (default ``name``) is ``cf`` or a registry
method, so one method can run under several names (``cf_no_ot``: ``cf`` without oversampling). With
``tuning`` set, one tune job per matrix, split and repeat chooses the CF settings on the initial
models (:mod:`benchcast.studies.cf_tasks.tune`); under the ``date`` split the initial models are the
same in every repeat, so it is tuned once. Every ``cf`` entry runs with the tuned settings, its own
``params`` overriding them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from benchcast.data.catalog import Catalog
from benchcast.errors import ConfigError, check_keywords, did_you_mean
from benchcast.methods import REGISTRY, job_params, make_method
from benchcast.methods.collaborative_filtering import CFSettings
from benchcast.methods.irt_methods import resolved_fit_params
from benchcast.studies.cf_tasks.analysis import WITH_OT, WITHOUT_OT
from benchcast.studies.cf_tasks.tune import ORDER as TUNED
from benchcast.studies.contract import guests_to_run

STUDY = "cf_tasks"
RUNS = "results/runs/cf_tasks/{matrix}/{split}/{method}/ratio={ratio}.parquet"
METRICS = "results/runs/cf_tasks/{matrix}/{split}/{method}/ratio={ratio}.metrics.parquet"
TABLES = "results/tables/cf_tasks"
FIGURES = "results/figures/cf_tasks"
TUNING = "results/runs/cf_tasks/{matrix}/{split}/tuning/repeat={repeat}.parquet"
PREFIT = "results/prefit/cf_tasks/{matrix}/{split}/irt"
RUN_GROUP = "cf_tasks_runs"
REPORT_GROUP = "cf_tasks_report"


@dataclass(frozen=True)
class Cell:
    matrix: str
    split: str
    method: str
    ratio: str  # as the config spells it: the file name's ratio=


@dataclass
class Jobs:
    """The study's jobs for ``config["cf_tasks"]`` (validated, defaults filled in). Construction
    checks the matrices' datasets and the methods before any job runs."""

    config: Mapping
    catalog: Catalog
    methods: dict[str, dict] = field(init=False)
    bases: dict[str, str] = field(init=False)
    cells: list[Cell] = field(init=False)
    #: methods another study runs under this protocol (method_comparison), not in the study's tables
    guests: list[str] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        cfg = self.config
        self.methods, self.bases = {}, {}
        for entry in cfg["methods"]:
            name, params = entry["name"], dict(entry.get("params") or {})
            base = entry.get("method", name)
            if base != "cf" and base not in REGISTRY:
                raise ConfigError(
                    f"config cf_tasks.methods: '{name}': unknown method '{base}'"
                    f"{did_you_mean(base, ['cf', *REGISTRY]) or '.'} Known: cf, {', '.join(sorted(REGISTRY))}"
                )
            if name in self.methods:
                raise ConfigError(f"config cf_tasks.methods: '{name}' is listed twice. Fix: keep one")
            if base == "cf":  # its settings, before any job runs (a registry method's: make_method)
                check_keywords(CFSettings, params, f"config cf_tasks.methods: '{name}' (cf)")
            else:
                make_method(base, params, where=f"config cf_tasks.methods: '{name}'")
                params = job_params(base, params)
            self.methods[name], self.bases[name] = params, base
        tuning = cfg.get("tuning")
        if tuning:
            unknown = sorted(set(tuning["grid"]) - set(TUNED))
            if unknown:
                raise ConfigError(f"config cf_tasks.tuning.grid: cannot tune {unknown}. Fix: use {', '.join(TUNED)}")
        for matrix, spec in cfg["matrices"].items():
            for dataset in spec["datasets"]:
                if dataset not in self.catalog.datasets:
                    raise ConfigError(f"config cf_tasks.matrices.{matrix}: dataset '{dataset}' is not in the catalog")
        for matrix, spec in cfg["matrices"].items():
            unknown = sorted(set(spec.get("skip_methods", [])) - set(self.methods))
            if unknown:
                raise ConfigError(
                    f"config cf_tasks.matrices.{matrix}.skip_methods: {unknown} are not in cf_tasks.methods. "
                    "Fix: name methods the study runs"
                )
        self.cells = [
            Cell(matrix, split, method, self.ratio_name(ratio))
            for matrix, spec in cfg["matrices"].items()
            for split in self.splits(matrix)
            for method in self.methods
            if method not in spec.get("skip_methods", [])
            for ratio in cfg["ratios"]
        ]

    def add_guests(self, guests) -> None:
        """Run other studies' methods (:class:`~benchcast.studies.contract.GuestMethod`) on every
        matrix, split and ratio; one named like a method of this study without settings of its own
        is that method."""
        own = {label: (self.bases[label], params) for label, params in self.methods.items()}
        for g, _, params in guests_to_run(STUDY, guests, own):
            self.methods[g.label], self.bases[g.label] = params, g.name
            self.guests.append(g.label)

    def protocol_runs(self, label: str) -> list[dict]:
        """A method's per-repeat metrics files: budget the ratio, group ``matrix/split``."""
        return [
            {
                "budget": float(ratio),
                "group": f"{matrix}/{split}",
                "path": METRICS.format(matrix=matrix, split=split, method=label, ratio=self.ratio_name(ratio)),
            }
            for matrix in self.config["matrices"]
            for split in self.splits(matrix)
            for ratio in self.config["ratios"]
        ]

    @staticmethod
    def ratio_name(ratio: float) -> str:
        return f"{float(ratio):g}"

    def splits(self, matrix: str) -> list[str]:
        """The config's splits this matrix can run (``date`` needs release keys)."""
        spec = self.config["matrices"][matrix]
        return [s for s in self.config["splits"] if s != "date" or spec.get("release", "position") != "none"]

    def matrix_spec(self, matrix: str) -> dict:
        """What builds the matrix (:func:`benchcast.data.task_matrix.load_task_matrix`'s arguments),
        without ``skip_methods``: skipping a method reruns no other job."""
        spec = self.config["matrices"][matrix]
        return {k: spec[k] for k in ("datasets", "join", "release", "dedupe") if k in spec}

    def irt_prefit_settings(self) -> dict | None:
        """The IRT prefit shared by the methods with ``needs_prefit: irt`` (P-IRT, GP-IRT): the
        first such method's IRT settings, the bias refit when any of them wants it; ``None``
        without such methods."""
        users = self._irt_users()
        if not users:
            return None
        first = users[0][1]
        bias = any(getattr(REGISTRY[self.bases[name]], "wants_bias", False) for name, _ in users)
        return {"irt": first, "with_bias": bias, "share_identical_sources": True}

    def uses_irt_prefit(self, method: str) -> bool:
        """Whether ``method`` reads the IRT prefit (its IRT settings are the prefit's); one with
        other settings fits its own IRT per task."""
        users = dict(self._irt_users())
        if method not in users:
            return False
        return resolved_fit_params(users[method]) == resolved_fit_params(users[next(iter(users))])

    def _irt_users(self) -> list[tuple[str, dict]]:
        out = []
        for name, base in self.bases.items():
            if base != "cf" and REGISTRY[base].needs_prefit == "irt":
                out.append((name, dict(make_method(base, self.methods[name]).irt_params)))
        return out

    def matrix_inputs(self, kind: str):
        """An input function: the ingested ``kind`` tables (models, responses, items) of the
        job's matrix's datasets."""
        return lambda w: [f"results/data/{d}/{kind}.parquet" for d in self.config["matrices"][w.matrix]["datasets"]]

    def tuned(self, method: str) -> bool:
        """Whether ``method`` runs with the tuned CF settings."""
        return bool(self.config.get("tuning")) and self.bases[method] == "cf"

    def tuning_repeats(self, split: str) -> list[int]:
        """The repeats tuned: one under the ``date`` split (its initial models never change)."""
        return [0] if split == "date" else list(range(self.config["trials"]))

    def tuning_files(self, matrix: str, split: str) -> list[str]:
        return [TUNING.format(matrix=matrix, split=split, repeat=r) for r in self.tuning_repeats(split)]

    def all_tuning_files(self) -> list[str]:
        if not self.config.get("tuning"):
            return []
        return [
            f
            for matrix in self.config["matrices"]
            for split in self.splits(matrix)
            for f in self.tuning_files(matrix, split)
        ]

    def datasets(self) -> list[str]:
        return list(dict.fromkeys(d for spec in self.config["matrices"].values() for d in spec["datasets"]))

    def run_files(self, pattern: str = RUNS) -> list[str]:
        return [pattern.format(matrix=c.matrix, split=c.split, method=c.method, ratio=c.ratio) for c in self.cells]

    def ot_cells(self) -> list[tuple[str, str, float]]:
        """The (matrix, split, ratio) cells run both with and without the oversampling (Figure 8's
        pair, :data:`benchcast.studies.cf_tasks.analysis.WITH_OT` / ``WITHOUT_OT``)."""
        runs = {(c.matrix, c.split, c.method, c.ratio) for c in self.cells}
        return [
            (c.matrix, c.split, c.ratio)
            for c in self.cells
            if c.method == WITH_OT and (c.matrix, c.split, WITHOUT_OT, c.ratio) in runs
        ]

    def ot_files(self, oversample: bool) -> list[str]:
        """The run files of :meth:`ot_cells` with the oversampling or without it, in their order."""
        method = WITH_OT if oversample else WITHOUT_OT
        return [RUNS.format(matrix=m, split=s, method=method, ratio=r) for m, s, r in self.ot_cells()]

    def tables(self) -> dict[str, str]:
        names = ("figure5", "figure8", "oversampling", "table3", "table4", "table5", "paper_vs_ours")
        return {name: f"{TABLES}/{name}.csv" for name in names}

    def figures(self) -> dict[str, str]:
        return {"figure5": f"{FIGURES}/figure5.png", "figure8": f"{FIGURES}/figure8.png"}

    def figure6_outputs(self) -> dict[str, str]:
        """Figure 6 (model-pair similarity on a task against the other tasks), from the data alone."""
        return {"table": f"{TABLES}/figure6.csv", "png": f"{FIGURES}/figure6.png"}

    def tuning_outputs(self) -> dict[str, str]:
        """Figure 9's sweeps and the chosen settings (when ``tuning`` is set)."""
        if not self.config.get("tuning"):
            return {}
        return {
            "figure9": f"{TABLES}/figure9.csv",
            "tuning": f"{TABLES}/tuning.csv",
            "figure9_png": f"{FIGURES}/figure9.png",
        }

    def final_outputs(self) -> list[str]:
        return [
            *self.tables().values(),
            *self.figures().values(),
            *self.figure6_outputs().values(),
            *self.tuning_outputs().values(),
        ]
