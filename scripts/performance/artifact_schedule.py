"""The whole artifact's wall time on N cores, simulated from its job graph and its jobs' seconds.

    python scripts/performance/artifact_schedule.py --directory /path/to/artifact/clone
    python scripts/performance/artifact_schedule.py --directory . --configfile config/config.yaml --cores 2 8

The job graph is Snakemake's own plan for the config (``snakemake -n --forceall`` in ``--directory``,
with each job's priority); a job's seconds are its ``benchmark:`` file's under that folder. A job not
measured yet stands in with the median of the measured jobs of its rule and method, else with its
``runtime`` resource (``workflow/resources.csv``: minutes, the SLURM limit, so an overestimate); both
are counted in the output. Two schedules per core count: Snakemake's
(its priorities, ties by name) and the critical-path rule (the better list schedule;
``benchcast.workflow.schedule``). ``--seconds cpu`` takes each job's CPU seconds instead of its wall
seconds: a single-threaded job's time alone on an idle core, when the run was measured on a busy
machine. Prints a Markdown table; ``--out`` also writes it as CSV.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from benchcast.workflow.dag import dependencies, measured, planned_jobs
from benchcast.workflow.performance import method_of
from benchcast.workflow.schedule import critical_path, simulate

REPO = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--directory", type=Path, default=REPO, help="the run's folder (its benchmarks/)")
    parser.add_argument("--configfile", nargs="+", default=["config/all_papers.yaml"])
    parser.add_argument("--cores", type=int, nargs="+", default=[1, 2, 8, 16, 32, 64])
    parser.add_argument(
        "--seconds",
        choices=("wall", "cpu"),
        default="wall",
        help="a job's wall seconds as measured, or its CPU seconds (its time alone on an idle core)",
    )
    parser.add_argument("--out", type=Path, help="CSV to write")
    args = parser.parse_args(argv)
    jobs = planned_jobs(args.directory, args.configfile)
    deps = dependencies(jobs)
    times = measured(jobs, args.directory, args.seconds)
    kind = {job.jobid: (job.rule, method_of(job)) for job in jobs}
    by_kind = pd.Series({j: s for j, (s, _) in times.items()}, dtype=float).groupby(kind).median()
    seconds, like, limit = {}, 0, 0
    for job in jobs:
        if job.jobid in times:
            seconds[job.jobid] = times[job.jobid][0]
        elif not job.benchmark:  # a target rule: it only collects inputs
            seconds[job.jobid] = 0.0
        elif kind[job.jobid] in by_kind.index:
            seconds[job.jobid] = float(by_kind[kind[job.jobid]])
            like += 1
        else:
            seconds[job.jobid] = 60.0 * float(job.resources.get("runtime", 0))
            limit += 1
    priority = {job.jobid: job.priority for job in jobs}
    length, chain = critical_path(seconds, deps)
    rule_of = {job.jobid: job.rule for job in jobs}
    longest = max(jobs, key=lambda j: seconds[j.jobid])
    rows = [
        {
            "cores": p,
            "wall_snakemake_priorities_min": round(simulate(seconds, deps, p, priority) / 60, 1),
            "wall_critical_path_rule_min": round(simulate(seconds, deps, p) / 60, 1),
        }
        for p in args.cores
    ]
    table = pd.DataFrame(rows)
    print(
        f"{len(jobs)} jobs, {len(times)} measured ({args.seconds} seconds), {like} as their measured kind's median, {limit} at their "
        "runtime limit; "
        f"{sum(seconds.values()):,.0f} job-seconds; critical path {length / 60:.1f} min "
        f"({' > '.join(dict.fromkeys(rule_of[j] for j in chain))}); longest job {seconds[longest.jobid]:,.0f} s "
        f"({longest.rule} {', '.join(f'{k}={v}' for k, v in longest.wildcards.items())})"
    )
    print(table.to_markdown(index=False))
    if args.out:
        table.to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
