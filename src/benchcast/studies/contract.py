"""The study contract: what every study declares, so that the shared workflow needs no edit when a
study is added.

A study ``S`` is its own folders -- ``src/benchcast/studies/S/`` (with ``study.py``),
``workflow/rules/S.smk``, ``workflow/schemas/S.schema.yaml``, ``workflow/scripts/S/``,
``workflow/report/S/`` -- and its config file ``config/S.yaml``. ``study.py`` defines one subclass
of :class:`Study` and names it ``STUDY``; :func:`benchcast.studies.registry` finds it from the
folder. From the subclass the shared parts follow:

* the workflow loads ``S.smk`` when ``studies`` lists ``S`` and registers, through
  ``load_study("S")`` in ``workflow/rules/common.smk``, its outputs (rule ``all`` and the target rule
  ``S``), the datasets it reads (rule ``data``), its index entry (``results/index.md``) and its
  paper's published costs (``results/tables/performance.csv``);
* the SLURM profile bundles its job groups (:attr:`Study.job_groups`);
* ``config/all_papers.yaml`` includes its config file when it is part of the artifact
  (:attr:`Study.artifact`);
* the config schema's list of studies and the layout test read the registry;
* the shared config test misspells a parameter of every method the study's config lists
  (:meth:`Study.method_entries`) and expects the study's build to refuse it.

A study may also offer its **protocol** to others (:attr:`Study.protocol_score`): it then runs
*guest* methods -- methods another study asks it to run under its grid, beside its own, at its own
file paths -- and says which files hold a method's results (:meth:`Study.protocol_runs`) and how a
trial of them scores (:meth:`Study.protocol_trials`). A guest named like one of the study's own
methods, without settings of its own, *is* that method: its jobs are the study's, computed once.
``method_comparison`` asks every protocol for its methods (:meth:`Study.guest_methods`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd

from benchcast.data.catalog import Catalog
from benchcast.errors import ConfigError, keyword_names
from benchcast.methods.plugins import ORIGIN_KEY


@dataclass(frozen=True)
class GuestMethod:
    """A method another study asks this one to run under its protocol."""

    label: str  # its name in the files and tables (the method's name unless the entry gives one)
    name: str  # the registry method
    params: Mapping | None  # its settings; None: as the study configures a method of this label, else the defaults
    asked_by: str  # the config key that lists it, for errors


def _own_or_guest(study: str, label: str, own_name: str, own_params: Mapping, guest: GuestMethod) -> None:
    """Check that ``guest`` may share the study's own method ``label`` (same method; no settings of
    its own, or the same): then its results are the study's own jobs'."""
    own_params = {k: v for k, v in own_params.items() if k != ORIGIN_KEY}
    if own_name != guest.name or (guest.params is not None and dict(guest.params) != dict(own_params)):
        raise ConfigError(
            f"{guest.asked_by}: '{label}' is a method of {study} already ({own_name} with settings "
            f"{dict(own_params)}), and this entry is {guest.name} with settings {dict(guest.params or {})}. Fix: give "
            f"the entry another label, or leave out its params to compare {study}'s own"
        )


def guests_to_run(
    study: str, guests: Iterable[GuestMethod], own: Mapping[str, tuple[str, Mapping]], by_method: str = ""
):
    """The guests a study runs itself, each as ``(guest, method, job params)``: the others are its
    own methods (``own``: label -> (method name, settings); :func:`_own_or_guest` checks them).
    ``by_method``: what the study names by method (its files), when it does -- then a guest's label
    must be its method's name."""
    from benchcast.methods import job_params, make_method

    for g in guests:
        if by_method and g.label != g.name:
            raise ConfigError(
                f"{g.asked_by}: '{g.label}' ({g.name}): {study} names {by_method} by method, so it cannot run a "
                f"method under another label. Fix: leave {study} out of this entry's protocols, or drop its label"
            )
        params = dict(g.params or {})
        method = make_method(g.name, params, where=f"{g.asked_by}: '{g.label}'")
        if g.label in own:
            _own_or_guest(study, g.label, *own[g.label], g)
            continue
        yield g, method, job_params(g.name, params)


@dataclass(frozen=True)
class MethodEntry:
    """One method a study's config lists: its settings (the mapping inside the config section, so an
    edit to it reaches the study's build) and the parameter names they may take."""

    params: dict
    accepts: tuple[str, ...]


def installed_entries(entries: Iterable[dict], name_key: str = "name") -> list[dict]:
    """The config entries naming a method this environment has (built in, or an installed package's);
    the others (another package's, not installed) are left out: the study's build names them."""
    from benchcast.methods import REGISTRY, load_plugins

    load_plugins()  # (once per process)
    return [e for e in entries if e[name_key] in REGISTRY]


def registry_entries(entries: Iterable[dict], name_key: str = "name") -> list[MethodEntry]:
    """:class:`MethodEntry` of the config entries naming installed item-level methods (``{name, params}``;
    a missing ``params`` is added; :func:`installed_entries`)."""
    return [MethodEntry(e.setdefault("params", {}), accepts(e[name_key])) for e in installed_entries(entries, name_key)]


def accepts(method: str) -> tuple[str, ...]:
    """The parameter names a registered method takes (none listed: it takes any)."""
    from benchcast.methods import REGISTRY

    return tuple(keyword_names(REGISTRY[method]) or ())


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

    #: what a trial scores under this study's protocol (lower is better), for method_comparison;
    #: None: the study offers no protocol to other studies
    protocol_score: ClassVar[str | None] = None

    def __init__(
        self,
        config: Mapping[str, Any],
        catalog: Catalog,
        guests: Iterable[GuestMethod] = (),
        others: Mapping[str, Study] | None = None,
    ):
        self.config = config
        self.catalog = catalog
        #: the loaded studies this one reads (the keys of :meth:`guest_methods`)
        self.others = dict(others or {})
        self.jobs = self.jobs_class(config, catalog) if self.jobs_class is not None else None
        guests = list(guests)
        if guests:
            if self.protocol_score is None:
                raise ConfigError(
                    f"{guests[0].asked_by}: study {self.name} offers no protocol to other studies. Fix: leave it out"
                )
            self.jobs.add_guests(guests)

    @classmethod
    def guest_methods(cls, config: Mapping[str, Any]) -> dict[str, list[GuestMethod]]:
        """The methods this study asks other studies to run under their protocols, by study, from
        its validated config section; those studies are loaded first and passed as ``others``."""
        return {}

    @classmethod
    def method_entries(cls, config: Mapping[str, Any]) -> list[MethodEntry]:
        """Every method entry of a validated config section, each holding the section's own params
        mapping: misspelling a parameter there must make the study's build (:func:`build_studies`)
        refuse it with a did-you-mean. None by default: a study without methods."""
        return []

    @classmethod
    def installed_only(cls, config: Mapping[str, Any]) -> dict:
        """The config section without the entries naming methods of packages this environment has not
        installed (what can be built here); by default the section itself."""
        return dict(config)

    def protocol_runs(self, label: str) -> list[dict]:
        """The files of a method's results under this study's protocol (its own method or a guest):
        ``{"budget", "group", "path"}`` per cell -- the budget as the protocol counts it, the group
        (dataset, split, ...) it is averaged over; by default its jobs' ``protocol_runs``."""
        if self.jobs is None or not hasattr(self.jobs, "protocol_runs"):
            raise NotImplementedError(f"study {self.name} offers no protocol")
        return self.jobs.protocol_runs(label)

    def protocol_settings(self) -> dict:
        """What :meth:`protocol_trials` needs of this run's config (JSON-able)."""
        return {}

    @classmethod
    def protocol_trials(cls, frame: pd.DataFrame, settings: Mapping) -> pd.DataFrame:
        """Per trial of one result file: ``trial``, ``score`` (:attr:`protocol_score`) and the
        protocol's other measures."""
        raise NotImplementedError(f"study {cls.name} offers no protocol")

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
