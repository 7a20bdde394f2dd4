"""The performance table: per study and method, jobs, job-seconds, peak memory, and per study the
critical path and the projected wall time on P cores (benchcast.workflow.schedule's list-scheduling
simulation of the study's own job graph), from the ``benchmark:`` files of a finished run.

A job's study is the first folder of its benchmark path (``benchmarks/<study>/...``; the shared
ingest jobs are ``data``); its method is its ``method``/``fit``/``bpmethod`` wildcard, else its rule.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

import pandas as pd

from benchcast.workflow.dag import PlannedJob
from benchcast.workflow.resources import METHOD_WILDCARDS
from benchcast.workflow.schedule import critical_path, simulate

ALL = "(all)"


def study_of(job: PlannedJob) -> str | None:
    if not job.benchmark:
        return None
    parts = job.benchmark.split("/")
    study = parts[1] if len(parts) > 2 and parts[0] == "benchmarks" else None
    return "data" if study == "ingest" else study


def method_of(job: PlannedJob) -> str:
    for key in METHOD_WILDCARDS:
        if key in job.wildcards:
            return job.wildcards[key]
    return job.rule


def _subgraph(ids: set[str], deps: dict[str, set[str]]) -> dict[str, set[str]]:
    return {j: deps.get(j, set()) & ids for j in ids}


def performance_table(
    jobs: Sequence[PlannedJob],
    deps: dict[str, set[str]],
    measured: dict[str, tuple[float, float]],
    cores: Sequence[int] = (8, 32, 128),
    costs: Mapping[str, Mapping[str, str]] | None = None,
) -> pd.DataFrame:
    """One row per (study, method), then one per study (method ``(all)``, with its critical path
    and projected wall times), then the whole run (study ``(all)``). Jobs without a benchmark file
    (target rules) are left out; ``unmeasured`` counts jobs that have one but no measurement.
    ``costs`` (study -> method or ``(all)`` -> text) is the paper's own published cost, put in the
    column ``paper_cost`` next to ours."""
    by_key: dict[tuple[str, str], list[str]] = defaultdict(list)
    unmeasured: dict[str, int] = defaultdict(int)
    rule_of = {}
    for job in jobs:
        study = study_of(job)
        if study is None:
            continue
        rule_of[job.jobid] = job.rule
        if job.jobid in measured:
            by_key[(study, method_of(job))].append(job.jobid)
        else:
            unmeasured[study] += 1

    def row(study: str, method: str, ids: list[str], project: bool) -> dict:
        seconds = {j: measured[j][0] for j in ids}
        peaks = [measured[j][1] for j in ids if not math.isnan(measured[j][1])]
        out = {
            "study": study,
            "method": method,
            "jobs": len(ids),
            "job_seconds": round(sum(seconds.values()), 1),
            "peak_mem_mb": round(max(peaks), 1) if peaks else math.nan,
            "longest_job_s": round(max(seconds.values(), default=0.0), 1),
        }
        if project:
            graph = _subgraph(set(ids), deps)
            length, chain = critical_path(seconds, graph)
            out["unmeasured_jobs"] = unmeasured[study] if study != ALL else sum(unmeasured.values())
            out["critical_path_s"] = round(length, 1)
            out["critical_path"] = " > ".join(dict.fromkeys(rule_of[j] for j in chain))
            for p in cores:
                out[f"wall_{p}_cores_s"] = round(simulate(seconds, graph, p), 1)
        return out

    rows = [row(s, m, ids, False) for (s, m), ids in sorted(by_key.items())]
    studies = sorted({s for s, _ in by_key})
    for study in studies:
        ids = [j for (s, _), js in by_key.items() if s == study for j in js]
        rows.append(row(study, ALL, ids, True))
    rows.append(row(ALL, ALL, [j for js in by_key.values() for j in js], True))
    table = pd.DataFrame(rows)
    if costs is not None:
        table["paper_cost"] = [costs.get(r.study, {}).get(r.method, "") for r in table.itertuples()]
    return table
