"""The studies benchcast reproduces, one package each, found from their folders.

A study package holds what is particular to one paper: ``study.py`` (its declaration under the
study contract, :mod:`benchcast.studies.contract`), ``jobs`` where the workflow needs more than
constants (the jobs a config asks for, their inputs and parameters), ``analysis`` (its tables,
figures' data and the comparison with the paper's numbers), ``settings`` for the paper's fixed
choices that shared code takes as arguments, and the paper's own procedures. What two studies share
-- data, methods, statistics, IRT, completion, outputs -- lives in the layers above.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from pathlib import Path

from benchcast.errors import ConfigError
from benchcast.studies.contract import Study

__all__ = ["Study", "artifact_config_files", "build_studies", "job_groups", "registry"]


def registry() -> dict[str, type[Study]]:
    """Every study, by name, in the order of :attr:`Study.position`: each folder of this package
    with a ``study.py`` whose ``STUDY`` is a :class:`Study` named after the folder."""
    found = []
    for folder in sorted(Path(__file__).parent.iterdir()):
        if not (folder / "study.py").is_file():
            continue
        module = importlib.import_module(f"{__name__}.{folder.name}.study")
        cls = getattr(module, "STUDY", None)
        if not (isinstance(cls, type) and issubclass(cls, Study)) or cls.name != folder.name:
            raise ConfigError(
                f"{folder / 'study.py'}: STUDY must be a benchcast.studies.Study subclass named "
                f"'{folder.name}' (its folder). Fix: set STUDY = <the class> and name = '{folder.name}'"
            )
        found.append(cls)
    return {cls.name: cls for cls in sorted(found, key=lambda c: (c.position, c.name))}


def job_groups() -> dict[str, int]:
    """Every study's SLURM job groups and how many pieces share one submission (the SLURM
    profile's ``group-components``)."""
    out: dict[str, int] = {}
    for cls in registry().values():
        for group, size in cls.job_groups.items():
            if out.setdefault(group, size) != size:
                raise ConfigError(f"study {cls.name}: job group '{group}' is declared twice. Fix: rename it")
    return out


def artifact_config_files() -> tuple[list[str], list[str]]:
    """The studies of the artifact (:attr:`Study.artifact`) and their config files, for
    ``config/all_papers.yaml``'s ``include: artifact``."""
    studies = [cls for cls in registry().values() if cls.artifact]
    return [cls.name for cls in studies], [cls.config_path() for cls in studies if cls.config_path()]


def build_studies(selected: list[str], section: Callable[[str], Mapping], catalog) -> dict[str, Study]:
    """Every study a run needs, built in the order their rules load: the studies a selected study
    asks to run methods under their protocols (:meth:`Study.guest_methods`) first, each with the
    methods it is asked to run, then the selected ones, each with the studies it asked.
    ``section(name)``: the study's validated config section."""
    studies = registry()
    asks, guests = {}, {}
    for name in selected:
        asked = studies[name].guest_methods(section(name))
        asks[name] = list(asked)
        for target, entries in asked.items():
            guests.setdefault(target, []).extend(entries)
    built: dict[str, Study] = {}
    for name in dict.fromkeys([*guests, *selected]):
        others = {s: built[s] for s in asks.get(name, [])}
        built[name] = studies[name](section(name), catalog, guests.get(name, ()), others)
    return built
