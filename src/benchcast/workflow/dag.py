"""A workflow's job graph as Snakemake plans it (``snakemake -n --forceall``), with each job's
measured time from its ``benchmark:`` file: the input of the performance table (benchcast.workflow.schedule).

The dry run's text is the one interface Snakemake keeps stable across versions for this: each job
prints ``rule NAME:`` and indented ``input:``, ``output:``, ``jobid:``, ``benchmark:`` and
``wildcards:`` lines. A job depends on the jobs that make any of its inputs.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from benchcast.studies import registry

# a job outside a group at column 0, its fields at 4; a job inside a "Group job" block (dry runs
# show the rules' groups) 4 more
_RULE = re.compile(r"^(?: {4})?rule (\w+):$")
_FIELD = re.compile(r"^ {4}(?: {4})?(input|output|jobid|benchmark|wildcards|resources|priority): (.*)$")
_GROUP = re.compile(r"Group job \S+ \(jobs in lexicogr\. order\):$")
#: rules whose jobs only collect inputs: Snakemake runs them in its own process (never via sbatch):
#: the workflow's own and each study's target rule (named after the study)
TARGET_RULES = frozenset({"all", "data", "aggregate_data", *registry()})


@dataclass
class PlannedJob:
    rule: str
    jobid: str = ""
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    benchmark: str | None = None
    wildcards: dict[str, str] = field(default_factory=dict)
    #: the group job it runs in (numbered in the order printed), None outside groups
    group: int | None = None
    #: its resources as the dry run prints them (``mem_mb`` -> ``"700"``)
    resources: dict[str, str] = field(default_factory=dict)
    #: its scheduling priority (the rule's ``priority:``; 0 when the dry run prints none)
    priority: int = 0


def parse_dry_run(text: str) -> list[PlannedJob]:
    """The jobs of a ``snakemake -n`` run, in the order printed (inside group jobs too)."""
    jobs: list[PlannedJob] = []
    groups, group = 0, None
    for line in text.splitlines():
        if _GROUP.search(line):
            group, groups = groups, groups + 1
            continue
        rule = _RULE.match(line)
        if rule:
            if not line.startswith(" "):  # a job at column 0 is outside any group block
                group = None
            jobs.append(PlannedJob(rule.group(1), group=group))
            continue
        match = _FIELD.match(line)
        if not match or not jobs:
            continue
        key, value = match.groups()
        job = jobs[-1]
        if key == "input":
            job.inputs = value.split(", ")
        elif key == "output":
            job.outputs = value.split(", ")
        elif key == "jobid":
            job.jobid = value.strip()
        elif key == "benchmark":
            job.benchmark = value.strip()
        elif key == "wildcards":
            job.wildcards = dict(part.split("=", 1) for part in value.split(", "))
        elif key == "resources":
            job.resources = dict(part.split("=", 1) for part in value.split(", ") if "=" in part)
        elif key == "priority":
            job.priority = int(value)
    if len({job.jobid for job in jobs}) != len(jobs):
        raise ValueError("the dry run's jobs do not have distinct jobids")
    return jobs


def dependencies(jobs: list[PlannedJob]) -> dict[str, set[str]]:
    """jobid -> the jobids whose outputs it reads."""
    maker = {path: job.jobid for job in jobs for path in job.outputs}
    return {job.jobid: {maker[p] for p in job.inputs if p in maker} - {job.jobid} for job in jobs}


#: a benchmark file's columns of seconds: wall clock, and CPU time (what a job takes alone on an idle
#: core when it is single-threaded, as the workflow's jobs are: a busy machine stretches only the first)
SECONDS = {"wall": "s", "cpu": "cpu_time"}


def read_benchmark(path: Path, seconds: str = "wall") -> tuple[float, float]:
    """(seconds, peak resident memory in MB) of a Snakemake benchmark file; the mean over repeats
    for seconds (``wall`` or ``cpu``: :data:`SECONDS`), the max for memory (NaN when the platform did
    not report it)."""
    table = pd.read_csv(path, sep="\t")
    column = SECONDS[seconds]
    if column not in table.columns or table.empty:
        raise ValueError(f"{path}: not a Snakemake benchmark file (no {column!r} column or no rows)")
    rss = pd.to_numeric(table.get("max_rss", pd.Series(dtype=float)), errors="coerce")
    return float(table[column].mean()), float(rss.max()) if rss.notna().any() else math.nan


def measured(jobs: list[PlannedJob], root: Path, seconds: str = "wall") -> dict[str, tuple[float, float]]:
    """jobid -> (seconds, peak MB) for every job whose benchmark file exists under ``root``
    (``seconds``: which, :data:`SECONDS`)."""
    out = {}
    for job in jobs:
        if job.benchmark and (root / job.benchmark).is_file():
            out[job.jobid] = read_benchmark(root / job.benchmark, seconds)
    return out


def dry_run_text(directory: Path, configfiles: list[str], extra: list[str] = ()) -> str:
    """The text of ``snakemake -n --forceall`` for a config in ``directory`` (``extra``: more
    arguments, e.g. ``--config`` pairs, a ``--snakefile`` or a ``--workflow-profile``)."""
    cmd = [sys.executable, "-m", "snakemake", "-n", "--forceall", "--nolock", "--configfile", *configfiles, *extra]
    proc = subprocess.run(cmd, cwd=directory, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"snakemake dry run failed in {directory}:\n{(proc.stdout + proc.stderr)[-3000:]}")
    return proc.stdout + proc.stderr


def planned_jobs(
    directory: Path, configfiles: list[str], config: list[str] = (), snakefile: Path | None = None
) -> list[PlannedJob]:
    """Every job Snakemake plans for a config in ``directory`` (with ``snakefile`` when the
    workflow is not the directory's own)."""
    extra = ["--config", *config] if config else []
    extra += ["--snakefile", str(snakefile)] if snakefile else []
    return parse_dry_run(dry_run_text(directory, configfiles, extra))
