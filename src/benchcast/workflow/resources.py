"""Cluster requests (SLURM ``runtime`` and ``mem_mb``) sized from measured ``benchmark:`` files.

``workflow/resources.csv`` holds, per rule and method (a run job's ``method`` wildcard, a
prefit's ``fit``, a BenchPress job's ``bpmethod``; ``*`` = every method of the rule), the longest
measured time and the largest peak memory over the runs it was measured on, and the request
derived from them by :class:`Sizing`. ``scripts/resources_table.py`` writes it from finished runs;
the rules read it through :class:`JobResources`. A rule or method the table does not know gets the
rule's ``*`` row, a rule it does not know at all the profile's ``default-resources``.

Requests only matter to cluster executors (a local run does not limit memory unless given
``--resources mem_mb=...``), and they are not rerun triggers: resizing reruns nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from benchcast.errors import DataError

#: the wildcards that name what a job runs, in the order tried (shared with the performance table)
METHOD_WILDCARDS = ("method", "fit", "bpmethod")
ANY = "*"
COLUMNS = ["rule", "method", "jobs", "max_s", "peak_mb", "runtime", "mem_mb"]


@dataclass(frozen=True)
class Sizing:
    """How a measurement becomes a request: a cluster node may be slower and busier than the
    machine that measured, and a dataset the table did not see may be larger, so both get a margin.

    runtime (minutes) = max(runtime_floor_min, ceil(runtime_factor * seconds / 60)), times the
    attempt (the profile retries a job once, with twice the time);
    mem_mb = max(mem_floor_mb, mem_factor * peak + mem_pad_mb), rounded up to mem_step_mb.
    """

    runtime_factor: float = 3.0
    runtime_floor_min: int = 2
    mem_factor: float = 1.5
    mem_pad_mb: int = 256
    mem_floor_mb: int = 500
    mem_step_mb: int = 100

    def runtime(self, seconds: float) -> int:
        return max(self.runtime_floor_min, math.ceil(self.runtime_factor * seconds / 60.0))

    def mem_mb(self, peak_mb: float) -> int:
        if math.isnan(peak_mb):
            return self.mem_floor_mb
        need = max(self.mem_floor_mb, self.mem_factor * peak_mb + self.mem_pad_mb)
        return int(math.ceil(need / self.mem_step_mb) * self.mem_step_mb)


def method_key(wildcards: Mapping[str, str]) -> str:
    for key in METHOD_WILDCARDS:
        if key in wildcards:
            return wildcards[key]
    return ANY


def measured_rows(samples: Iterable[tuple[str, str, float, float]]) -> pd.DataFrame:
    """(rule, method, seconds, peak MB) per measured job -> one row per (rule, method) with the job
    count, the longest time and the largest peak, plus a ``*`` row per rule over all its methods."""
    frame = pd.DataFrame(list(samples), columns=["rule", "method", "s", "mb"])
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS[:5])
    per = frame.groupby(["rule", "method"], sort=True).agg(
        jobs=("s", "size"), max_s=("s", "max"), peak_mb=("mb", "max")
    )
    per = per.reset_index()
    every = frame.groupby("rule", sort=True).agg(jobs=("s", "size"), max_s=("s", "max"), peak_mb=("mb", "max"))
    every = every.reset_index().assign(method=ANY)
    per = per[per["method"] != ANY]
    return pd.concat([every, per], ignore_index=True)[COLUMNS[:5]]


def merge_measured(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Both tables' rows, the larger time and peak where both measured a (rule, method)."""
    both = pd.concat([old[COLUMNS[:5]], new[COLUMNS[:5]]], ignore_index=True)
    out = both.groupby(["rule", "method"], sort=True).agg(
        jobs=("jobs", "sum"), max_s=("max_s", "max"), peak_mb=("peak_mb", "max")
    )
    return out.reset_index()[COLUMNS[:5]]


def request_table(measured: pd.DataFrame, sizing: Sizing = Sizing()) -> pd.DataFrame:
    """The measured rows with their requests; ``*`` rows first within a rule."""
    out = measured.copy()
    out["max_s"] = out["max_s"].astype(float).round(1)
    out["peak_mb"] = out["peak_mb"].astype(float).round(1)
    out["runtime"] = [sizing.runtime(s) for s in out["max_s"]]
    out["mem_mb"] = [sizing.mem_mb(mb) for mb in out["peak_mb"]]
    out["_order"] = (out["method"] != ANY).astype(int)
    out = out.sort_values(["rule", "_order", "method"], kind="mergesort").drop(columns="_order")
    return out.reset_index(drop=True)[COLUMNS]


class JobResources:
    """The request table, as the rules' ``resources:`` read it."""

    def __init__(self, table: pd.DataFrame, source: str = "<table>"):
        missing = [c for c in COLUMNS if c not in table.columns]
        if missing:
            raise DataError(
                source, ",".join(missing), "missing columns", "regenerate it with scripts/resources_table.py"
            )
        self._rows = {(r.rule, r.method): (int(r.runtime), int(r.mem_mb)) for r in table.itertuples()}
        for rule, _ in self._rows:
            if (rule, ANY) not in self._rows:
                raise DataError(
                    source,
                    "method",
                    f"rule {rule} has rows but no '{ANY}' row",
                    "regenerate it with scripts/resources_table.py",
                )

    @classmethod
    def load(cls, path: str | Path) -> JobResources:
        path = Path(path)
        if not path.is_file():
            return cls(pd.DataFrame(columns=COLUMNS), str(path))
        return cls(pd.read_csv(path, dtype={"rule": str, "method": str}), str(path))

    def lookup(self, rule: str, method: str = ANY) -> tuple[int, int] | None:
        """(runtime minutes, mem_mb) for the first attempt, or None when the rule was never measured."""
        return self._rows.get((rule, method)) or self._rows.get((rule, ANY))

    def of(self, rule: str, wildcard: str | None = None) -> dict:
        """The ``resources:`` of a rule: ``{}`` (the profile's defaults) when it was never measured;
        with ``wildcard``, looked up per job by that wildcard's value; runtime grows with the attempt."""
        if (rule, ANY) not in self._rows:
            return {}
        if wildcard is None:
            runtime, mem = self._rows[(rule, ANY)]
            return {"runtime": lambda wildcards, attempt: runtime * attempt, "mem_mb": mem}

        def runtime(wildcards, attempt):
            return self.lookup(rule, wildcards[wildcard])[0] * attempt

        def mem_mb(wildcards):
            return self.lookup(rule, wildcards[wildcard])[1]

        return {"runtime": runtime, "mem_mb": mem_mb}


def rules_defined(files: Sequence[Path]) -> set[str]:
    """The rule names of Snakemake rule files (``rule NAME:`` lines)."""
    names = set()
    for path in files:
        for line in Path(path).read_text().splitlines():
            if line.startswith("rule ") and line.rstrip().endswith(":"):
                names.add(line[5:].rstrip()[:-1].strip())
    return names


#: how far one step of Snakemake ``priority`` moves a job in SLURM's queue (see :func:`slurm_nice`)
NICE_PER_PRIORITY = 100
#: the highest ``priority:`` a rule of the workflow may have (the "misses the mark" IRT fits); a job
#: without one gets ``nice = NICE_PER_PRIORITY * HIGHEST_PRIORITY`` from the SLURM profile's defaults
HIGHEST_PRIORITY = 10


def slurm_nice(priority: int) -> str:
    """The ``slurm_extra`` resource that makes SLURM start a job in Snakemake's priority order.

    Snakemake hands every ready job to ``sbatch`` at once, in no particular order, and SLURM then
    starts pending jobs by its own priority (first come, first served under ``priority/basic``; age
    and fair share under ``priority/multifactor``), which knows nothing of the rules' ``priority:``.
    On a busy or small cluster the longest jobs may then start last and become the run's tail
    (measured: MuSR+GSM on 2 CPUs, the last IRT fit group started 55 min into the run). ``--nice``
    lowers a job's SLURM priority by its value (any user may raise it; only an admin may lower it),
    so a job of Snakemake priority ``p`` gets ``nice = NICE_PER_PRIORITY * (HIGHEST_PRIORITY - p)``: a
    priority step outweighs the order of up to 100 submissions (the profile's ``jobs``).

    The jobs of one SLURM group job must request the same string resources, so the rules of a group
    pass the group's priority (its highest member's), not their own.
    """
    if not 0 <= int(priority) <= HIGHEST_PRIORITY:
        raise ValueError(f"priority {priority} is outside 0..{HIGHEST_PRIORITY} (job_resources.HIGHEST_PRIORITY)")
    return f"--nice={NICE_PER_PRIORITY * (HIGHEST_PRIORITY - int(priority))}"
