"""The last line of a workflow run (the Snakefile's ``onsuccess:`` and ``onerror:`` handlers): where
the results are, or where the log of a failed run is.

Snakemake calls the handlers after a run that executed jobs (not after a dry run, nor when nothing
was to be done, nor in the jobs it spawns: they run with ``--no-hooks``); it prints its own
"Complete log" and "Elapsed time" lines after them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

#: the index of a run (rule ``index``, workflow/rules/overview.smk)
INDEX = "results/index.md"
#: where README and docs/outputs.md build the HTML report
REPORT = "results/report.html"


def end_of_run(workflow, logs: Iterable[str], ok: bool) -> None:
    """Log the run's last line (the Snakefile's ``onsuccess:`` / ``onerror:``, with Snakemake's
    ``workflow`` and ``log``). A quiet success (``--quiet``, ``--quiet all``) stays quiet."""
    from snakemake.logging import logger
    from snakemake.settings.enums import Quietness

    if not ok:
        logger.error(failure_message(logs, workflow.workdir_init))
    elif not {Quietness.ALL, Quietness.PROGRESS} & set(workflow.output_settings.quiet or ()):
        logger.info(success_message((job.rule.name for job in workflow.dag.jobs), workflow.workdir_init))


def shown(path: str | os.PathLike, launched_in: str | os.PathLike) -> str:
    """``path`` (absolute, or relative to the working directory) as the user can use it from the
    directory they launched Snakemake in: relative below it, absolute elsewhere."""
    path = Path(path).absolute()
    try:
        return str(path.relative_to(Path(launched_in).absolute()))
    except ValueError:
        return str(path)


def success_message(rules: Iterable[str], launched_in: str | os.PathLike) -> str:
    """One line after a successful run: the index and the command that builds the report when the
    run's targets include the index (``rules``: the rules of the run's jobs), else where the index
    comes from."""
    index = shown(INDEX, launched_in)
    workdir = Path.cwd().absolute()
    if workdir == Path(launched_in).absolute():
        report = f"snakemake --report {REPORT}"
    else:  # run with --directory: the same directory, and the report's absolute path
        report = f"snakemake --directory {workdir} --report {workdir / REPORT}"
    if "index" in set(rules):
        return f"Results: {index} (every paper's tables and figures); the HTML report: {report}"
    return f"Done. The index of all results, {index}, and the report come with: snakemake --cores all"


def failure_message(logs: Iterable[str], launched_in: str | os.PathLike) -> str:
    """One line after a failed run: where its log is, and that a rerun keeps the finished jobs."""
    where = ", ".join(shown(log, launched_in) for log in logs) or ".snakemake/log/"
    return (
        f"Stopped by a failed job: its error and its log file are above; the whole run's log: {where}. "
        "After the fix, the same command goes on from the finished jobs."
    )
