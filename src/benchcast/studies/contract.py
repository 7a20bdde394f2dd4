"""The study contract: what every study declares, so that the shared workflow needs no edit when a
study is added.

A study ``S`` is its own folders -- ``src/benchcast/studies/S/`` (with ``study.py``),
``workflow/rules/S.smk``, ``workflow/schemas/S.schema.yaml``, ``workflow/scripts/S/``,
``workflow/report/S/`` -- and its config file ``config/S.yaml``. ``study.py`` defines one subclass
of :class:`Study` and names it ``STUDY``; :func:`benchcast.studies.registry` finds it from the
folder. From the subclass the shared parts follow:

* the workflow loads ``S.smk`` when ``studies`` lists ``S`` and registers, through
  ``study("S")`` in ``workflow/rules/common.smk``, its outputs (rule ``all`` and the target rule
  ``S``), the datasets it reads (rule ``data``), its index entry (``results/index.md``) and its
  paper's published costs (``results/tables/performance.csv``);
* the SLURM profile bundles its job groups (:attr:`Study.job_groups`);
* ``config/all_papers.yaml`` includes its config file when it is part of the artifact
  (:attr:`Study.artifact`);
* the config schema's list of studies and the layout test read the registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from benchcast.data.catalog import Catalog


class Study:
    """One reproduced paper (or check) as the workflow sees it.

    Class attributes describe the study without a config; an instance is the study for one run's
    validated config section (``config[S]``, defaults filled in by its schema) and the catalog.
    """

    #: the study's name: its folder, rules file, schema, scripts and captions folder, config key
    name: ClassVar[str]
    #: the paper it reproduces, as the index titles it
    title: ClassVar[str] = ""
    #: the paper's text, for the index
    paper: ClassVar[str | None] = None
    #: where the study stands among the others (the registry's and all_papers' order)
    position: ClassVar[int] = 100
    #: whether ``config/all_papers.yaml`` (artifact evaluation) runs it, with :attr:`config_file`
    artifact: ClassVar[bool] = True
    #: the config file of its full run (default ``config/<name>.yaml``; None: it has none)
    config_file: ClassVar[str | None] = ""
    #: SLURM job groups of its rules (``group:``) -> how many of a group's pieces share one submission
    job_groups: ClassVar[Mapping[str, int]] = {}
    #: its jobs (``jobs.Jobs``: the jobs a config asks for), built on the config as :attr:`jobs`
    jobs_class: ClassVar[type | None] = None

    #: whether this run is the study's full run (its config file's section) or a slice of it; None:
    #: not known (the workflow sets it, ``workflow/rules/common.smk``)
    full_run: bool | None = None

    def __init__(self, config: Mapping[str, Any], catalog: Catalog):
        self.config = config
        self.catalog = catalog
        self.jobs = self.jobs_class(config, catalog) if self.jobs_class is not None else None

    @classmethod
    def config_path(cls) -> str | None:
        return f"config/{cls.name}.yaml" if cls.config_file == "" else cls.config_file

    def datasets(self) -> list[str]:
        """The catalog datasets its jobs read (ingested by rule ``data``); by default its jobs'
        ``datasets()``, else config ``datasets``."""
        if self.jobs is not None and hasattr(self.jobs, "datasets"):
            return list(self.jobs.datasets())
        return list(self.config["datasets"])

    def outputs(self) -> list[str]:
        """Its final outputs: what its target rule and rule ``all`` build; by default its jobs'
        ``final_outputs()``."""
        if self.jobs is None:
            raise NotImplementedError(f"study {self.name}: say its outputs (or give it a jobs_class)")
        return self.jobs.final_outputs()

    def scope(self) -> str:
        """What this run of the study covers, in words (datasets, trials, budgets, methods), for the
        index and the paper-vs-ours tables; the paper's own extent beside each where it differs."""
        return ""

    def run_words(self) -> str:
        """ "a slice of the full study (config/S.yaml): <scope>" or "the full study (...): <scope>"."""
        where = self.config_path()
        if self.full_run is None or not where:
            head = "this run"
        else:
            head = f"{'the full study' if self.full_run else 'a slice of the full study'} ({where})"
        scope = self.scope()
        return f"{head}: {scope}" if scope else head

    def index(self) -> dict | None:
        """Its entry of ``results/index.md`` (:mod:`benchcast.workflow.paper_index`), or None:
        ``{"title", "paper", "tolerance", "paper_vs_ours", "sections": [[section, [path, ...]]]}``."""
        return None

    def costs(self) -> dict[str, object]:
        """The paper's own published cost per method label (``"(all)"`` for the whole study)."""
        return {}

    def index_entry(self, tolerance: str, paper_vs_ours: str, sections: list) -> dict:
        """An :meth:`index` entry with this study's title, paper and :meth:`scope`."""
        return {
            "title": self.title,
            "paper": self.paper,
            "scope": self.run_words(),
            "slice": self.full_run is False,
            "tolerance": tolerance,
            "paper_vs_ours": paper_vs_ours,
            "sections": sections,
        }
