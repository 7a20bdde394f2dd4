"""Projected wall time of a workflow's job graph on P cores, from measured job times.

A list-scheduling simulation (Graham 1969): whenever a core is free, the ready job with the longest
remaining path to the end of the graph (its own time plus its longest chain of dependants) starts
on it -- the critical-path rule, which is what Snakemake's priorities approximate for our grids.
Given the jobs' Snakemake priorities, the simulation follows them instead, as Snakemake does: the
ready job of the highest priority first, equal priorities in name order (Snakemake knows no
durations), which shows what the workflow's priorities cost against the critical-path rule.
Every job takes one core (the workflow's jobs are single-threaded; ``threads`` > 1 would need a
width). The projection is a lower bound on real runs only up to scheduler overhead and I/O; the
critical path bounds any schedule from below, whatever the number of cores.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Set


def _check(seconds: Mapping[str, float], deps: Mapping[str, Set[str]]) -> None:
    for job, before in deps.items():
        if job not in seconds:
            raise ValueError(f"dependencies name job {job!r}, which has no measured time")
        missing = set(before) - set(seconds)
        if missing:
            raise ValueError(f"job {job!r} depends on jobs with no measured time: {sorted(missing)[:3]}")


def _dependants(seconds: Mapping[str, float], deps: Mapping[str, Set[str]]) -> dict[str, list[str]]:
    after: dict[str, list[str]] = {job: [] for job in seconds}
    for job, before in deps.items():
        for b in before:
            after[b].append(job)
    return after


def _topological(seconds: Mapping[str, float], deps: Mapping[str, Set[str]]) -> list[str]:
    waiting = {job: len(deps.get(job, ())) for job in seconds}
    after = _dependants(seconds, deps)
    order, ready = [], sorted(job for job, n in waiting.items() if n == 0)
    while ready:
        job = ready.pop()
        order.append(job)
        for nxt in after[job]:
            waiting[nxt] -= 1
            if waiting[nxt] == 0:
                ready.append(nxt)
    if len(order) != len(seconds):
        raise ValueError("the job graph has a cycle")
    return order


def remaining_path(seconds: Mapping[str, float], deps: Mapping[str, Set[str]]) -> dict[str, float]:
    """Each job's time plus the longest chain of jobs that wait on it (its "bottom level")."""
    _check(seconds, deps)
    after = _dependants(seconds, deps)
    level: dict[str, float] = {}
    for job in reversed(_topological(seconds, deps)):
        level[job] = seconds[job] + max((level[n] for n in after[job]), default=0.0)
    return level


def critical_path(seconds: Mapping[str, float], deps: Mapping[str, Set[str]]) -> tuple[float, list[str]]:
    """The longest chain of dependent jobs: its length in seconds and its jobs, first to last."""
    level = remaining_path(seconds, deps)
    if not level:
        return 0.0, []
    after = _dependants(seconds, deps)
    roots = [job for job in seconds if not deps.get(job)]
    job = max(sorted(roots), key=lambda j: level[j])
    length, chain = level[job], [job]
    while after[job]:
        job = max(sorted(after[job]), key=lambda j: level[j])
        chain.append(job)
    return length, chain


def simulate(
    seconds: Mapping[str, float], deps: Mapping[str, Set[str]], cores: int, priority: Mapping[str, int] | None = None
) -> float:
    """Makespan of the list schedule of the graph on ``cores`` identical cores: the critical-path
    rule, or Snakemake's (``priority``: job -> its priority, absent = 0; ties by name)."""
    if cores < 1:
        raise ValueError(f"cores must be >= 1, got {cores}")
    level = remaining_path(seconds, deps)
    if priority is not None:
        level = {job: float(priority.get(job, 0)) for job in seconds}
    after = _dependants(seconds, deps)
    waiting = {job: len(deps.get(job, ())) for job in seconds}
    # ties broken by name, so the projection does not depend on dict order
    ready = [(-level[job], job) for job, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    running: list[tuple[float, str]] = []  # (finish time, job)
    now, free = 0.0, cores
    while ready or running:
        while ready and free:
            _, job = heapq.heappop(ready)
            heapq.heappush(running, (now + seconds[job], job))
            free -= 1
        now, job = heapq.heappop(running)
        finished = [job]
        while running and running[0][0] == now:
            finished.append(heapq.heappop(running)[1])
        free += len(finished)
        for done in finished:
            for nxt in after[done]:
                waiting[nxt] -= 1
                if waiting[nxt] == 0:
                    heapq.heappush(ready, (-level[nxt], nxt))
    return now
