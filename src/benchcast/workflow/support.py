"""Small helpers for the workflow: one-thread BLAS (:mod:`benchcast.blas`), logging to the rule's log, config includes."""

from __future__ import annotations

import copy
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from benchcast.blas import single_threaded
from benchcast.errors import ConfigError


def job_logger(snakemake) -> Callable[[str], None]:
    """Return ``log(msg)`` that appends timestamped lines to the rule's ``log:`` file (flushed).

    It also routes a failure of the job to where users look (:func:`report_failures`): Snakemake
    tells them to "check log file(s) for error details", so the error goes into the log file, and
    a benchcast error reaches the console as its one line (file, field, fix) without a traceback.
    """
    single_threaded()
    path = Path(snakemake.log[0]) if len(snakemake.log) else None
    fh = open(path, "w") if path else sys.stderr
    start = time.perf_counter()

    def log(msg: str) -> None:
        fh.write(f"[{time.perf_counter() - start:8.1f}s] {msg}\n")
        fh.flush()

    report_failures(log, rule=getattr(snakemake, "rule", "job"), log_path=path)
    return log


def report_failures(log: Callable[[str], None], rule: str, log_path: Path | None) -> None:
    """Install an exception hook: an uncaught error is written to the job's log and the console.

    A :class:`~benchcast.errors.BenchcastError` is a user-facing message naming the file or config
    key and the fix: it is printed as one line (``ERROR in rule <rule>: <message>``). Anything else
    is a bug or an unexpected input: the full traceback goes to both places.
    """
    import traceback

    from benchcast.errors import BenchcastError

    def hook(exc_type, exc, tb) -> None:
        if isinstance(exc, BenchcastError):
            line = f"ERROR in rule {rule}: {' '.join(str(exc).split())}"
            log(line)
            print(line + (f" (log: {log_path})" if log_path else ""), file=sys.stderr, flush=True)
        else:
            text = "".join(traceback.format_exception(exc_type, exc, tb))
            log(f"ERROR in rule {rule}: unexpected {exc_type.__name__}\n{text}")
            sys.__excepthook__(exc_type, exc, tb)

    sys.excepthook = hook


#: Snakemake versions whose private ``JobScheduler._schedule_reevalutation`` the idle-tail fix was checked on
IDLE_TAIL_CHECKED = ("9.27.1",)


def exit_without_idle_tail() -> bool:
    """Let Snakemake exit as soon as its last job ends (call from the Snakefile, main process).

    With ``max-jobs-per-timespan``, Snakemake's scheduler re-polls after every scheduling pass by
    starting a ``threading.Timer(timespan)``; the timer threads are not daemons, so the process
    cannot exit before the last one fires: with the profile's 60 s timespan every run ended with up
    to 60 s of idle time (measured: 600 jobs of 0.15 s on 2 cores, 111 s instead of 52 s). Daemon
    timers keep the cheap 60 s re-poll without the tail.

    The method is private and Snakemake offers no setting for it (neither the scheduler plugins nor
    the profile reach the re-poll timer), so the patch is applied only to the Snakemake versions it
    was checked against (:data:`IDLE_TAIL_CHECKED`, the version requirements.txt pins; a test fails
    when the pin moves without it) and returns False, changing nothing, on any other.
    """
    import threading

    try:
        import snakemake
        from snakemake.scheduling.job_scheduler import JobScheduler
    except ImportError:
        return False
    if getattr(snakemake, "__version__", None) not in IDLE_TAIL_CHECKED:
        return False
    if not hasattr(JobScheduler, "_schedule_reevalutation"):  # (sic: Snakemake's spelling)
        return False

    def schedule_reevaluation(self, delay) -> None:
        timer = threading.Timer(delay, self._open_jobs.release)
        timer.daemon = True
        timer.start()

    JobScheduler._schedule_reevalutation = schedule_reevaluation
    return True


def deep_update(base: dict, over: dict) -> None:
    """``over`` into ``base`` in place: dicts merge key by key, anything else (lists too) replaces."""
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            deep_update(base[key], value)
        else:
            base[key] = copy.deepcopy(value)


#: config names renamed (CHANGELOG.md), read under their old name for one release: a study, and a key
#: inside a study's section (its path -> its new name); every study's repeated trials are ``trials``
RENAMED_STUDIES = {"deploy": "heldout_intervals"}
RENAMED_KEYS = {
    ("benchpress", "deploy"): "complete",
    ("tailoredbench", "runs"): "trials",
    ("cf_tasks", "repeats"): "trials",
    ("benchpress", "hypotheses", "n_seeds"): "trials",
}


def _move(block: dict, old: str, new: str) -> None:
    """``block[old]`` to ``block[new]``. The shipped configs never use an old name, so an old key
    is the user's: it wins over a new one from the defaults (merged into it when both are mappings)."""
    value = block.pop(old)
    if isinstance(value, dict) and isinstance(block.get(new), dict):
        deep_update(block[new], value)
    else:
        block[new] = value


def rename_old_config(config: dict) -> list[str]:
    """Move the keys of ``config`` that were renamed to their new names, in place; the warnings
    to print (one line each, naming the new key)."""
    warnings = []
    studies = config.get("studies")
    if isinstance(studies, list):
        for i, name in enumerate(studies):
            if name in RENAMED_STUDIES:
                studies[i] = RENAMED_STUDIES[name]
                warnings.append(f"config studies: '{name}' is now '{RENAMED_STUDIES[name]}'")
    for old, new in RENAMED_STUDIES.items():
        if old in config:
            _move(config, old, new)
            warnings.append(f"config key '{old}' is now '{new}'")
    for (*where, old), new in RENAMED_KEYS.items():
        block = config
        for key in where:
            block = block.get(key) if isinstance(block, dict) else None
        if isinstance(block, dict) and old in block:
            _move(block, old, new)
            path = ".".join(where)
            warnings.append(f"config key '{path}.{old}' is now '{path}.{new}'")
    return [f"benchcast: {w}; the old name is read until the next release" for w in warnings]


#: ``include: artifact`` (config/all_papers.yaml): every study of the artifact with its own config file
ARTIFACT = "artifact"


def included_files(overrides: dict) -> list[str] | None:
    """The config files ``overrides`` names under ``include:`` (``artifact``: every study's of the
    artifact), or None when it names none."""
    includes = overrides.get("include")
    if includes is None:
        return None
    if includes == ARTIFACT:
        from benchcast.studies import artifact_config_files

        return artifact_config_files()[1]
    return [includes] if isinstance(includes, str) else list(includes)


def resolve_includes(defaults: dict, overrides: dict, root: Path) -> dict | None:
    """The config of a run whose config files name others under ``include:`` (config/all_papers.yaml),
    or None when none does. ``include: artifact`` names every study of the artifact
    (``benchcast.studies.artifact_config_files``): their config files are included and, unless the
    command line sets ``studies``, they are the run's studies.

    Layers, later wins (dicts merged key by key, lists replaced, as Snakemake merges config files):
    the workflow's default config, each included file in order, then what the command line gave
    (every ``--configfile`` and ``--config``: ``overrides``). Paths are relative to ``root``; an
    included file may not include others.
    """
    includes = included_files(overrides)
    if includes is None:
        return None
    if overrides["include"] == ARTIFACT:
        from benchcast.studies import artifact_config_files

        overrides = {"studies": artifact_config_files()[0], **overrides}
    merged = copy.deepcopy(defaults)
    for name in includes:
        path = root / name
        if not path.is_file():
            raise ConfigError(f"config include: {name} is not a file (paths are relative to {root})")
        content = yaml.safe_load(path.read_text()) or {}
        if not isinstance(content, dict):
            raise ConfigError(f"config include: {name} is not a mapping of config keys")
        if "include" in content:
            raise ConfigError(f"config include: {name} includes other files itself; list them all in one include:")
        deep_update(merged, content)
    deep_update(merged, overrides)
    merged.pop("include")
    return merged
