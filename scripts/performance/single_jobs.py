"""Single-job seconds: the heaviest job of each kind of a finished (or partly finished) run, each run
again alone on one core, one after the other, with the machine's load recorded beside each.

    python scripts/performance/single_jobs.py --run /path/to/artifact/clone --scratch /tmp/single --top 1
    python scripts/performance/single_jobs.py --run ... --scratch ... --targets results/runs/.../n=200.parquet ...

A kind is a rule and its method (``benchcast.workflow.performance.method_of``). For each kind among
the ``--kinds`` with the most job-seconds in the run, its ``--top`` longest measured jobs are forced
again (``snakemake -f <output> --cores 1``) in ``--scratch``: a copy of the run's folder whose
``results/`` are hard links, so the run itself is never touched (every output is written to a new
file and renamed over its link). Before each job the script waits until the 1-minute load average is
below ``--idle`` (another process on the machine would slow the job), and it records the load before
and after. ``--targets`` names the jobs instead (by an output of each), measured in the run or not
(missing inputs are made first, outside the job's own measurement). Prints a Markdown table (job, run's seconds, alone: wall and CPU seconds, peak MB, load
before/after); ``--out`` writes it as CSV.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from benchcast.workflow.dag import measured, planned_jobs
from benchcast.workflow.performance import method_of


def load1() -> float:
    return os.getloadavg()[0]


def scratch_copy(run: Path, scratch: Path) -> None:
    """The run's repository files copied, its results hard-linked (outputs are renamed into place)."""
    if scratch.exists():
        return
    shutil.copytree(run, scratch, ignore=shutil.ignore_patterns("results", ".snakemake", "benchmarks", "logs", ".venv"))
    subprocess.run(["cp", "-al", str(run / "results"), str(scratch / "results")], check=True)
    os.symlink(run / ".venv", scratch / ".venv")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", type=Path, required=True, help="the run's folder (its results/ and benchmarks/)")
    p.add_argument("--scratch", type=Path, required=True, help="a new folder for the copy")
    p.add_argument("--configfile", nargs="+", default=["config/all_papers.yaml"])
    p.add_argument("--kinds", type=int, default=10, help="how many kinds, by job-seconds in the run")
    p.add_argument("--top", type=int, default=1, help="jobs per kind, longest first")
    p.add_argument("--idle", type=float, default=0.5, help="wait for a load average below this")
    p.add_argument("--targets", nargs="+", help="outputs of the jobs to time (instead of --kinds/--top)")
    p.add_argument("--raw-dir", type=Path, help="the run's raw_dir (default: ../shared/raw beside the run)")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    jobs = planned_jobs(args.run, args.configfile)
    times = measured(jobs, args.run)
    runs = pd.DataFrame(
        [
            {
                "jobid": j.jobid,
                "rule": j.rule,
                "method": method_of(j),
                "s": times.get(j.jobid, (math.nan,))[0],
                "job": j,
            }
            for j in jobs
        ]
    )
    if args.targets:
        chosen = [row for row in runs.itertuples() if set(row.job.outputs) & set(args.targets)]
        if len(chosen) != len(args.targets):
            sys.exit(f"not every target is an output of a planned job: {args.targets}")
    else:
        runs = runs.dropna(subset=["s"])
        kinds = runs.groupby(["rule", "method"]).s.sum().nlargest(args.kinds).index
        chosen = [
            row
            for kind in kinds
            for row in runs.set_index(["rule", "method"]).loc[[kind]].nlargest(args.top, "s").itertuples()
        ]
    scratch_copy(args.run, args.scratch)
    raw_dir = (args.raw_dir or args.run / ".." / "shared" / "raw").resolve()
    rows = []
    for row in chosen:
        job = row.job
        while load1() >= args.idle:
            time.sleep(5)
        before = load1()
        cmd = [sys.executable, "-m", "snakemake", "-f", job.outputs[0], "--cores", "1", "--configfile"]
        cmd += [*args.configfile, "--nolock", "--config", f"raw_dir={raw_dir}"]
        env = {**os.environ, "BENCHCAST_CONSOLE": "plain"}
        done = subprocess.run(cmd, cwd=args.scratch, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed in {args.scratch}:\n{done.stderr[-3000:]}")
        bench = pd.read_csv(args.scratch / job.benchmark, sep="\t").iloc[-1]
        rows.append(
            {
                "rule": job.rule,
                "wildcards": ", ".join(f"{k}={v}" for k, v in job.wildcards.items()),
                "run_s": round(row.s, 1),
                "alone_wall_s": round(float(bench["s"]), 1),
                "alone_cpu_s": round(float(bench["cpu_time"]), 1),
                "peak_mb": round(float(bench["max_rss"]), 1),
                "load_before": round(before, 2),
                "load_after": round(load1(), 2),
            }
        )
        print(rows[-1], flush=True)
    table = pd.DataFrame(rows)
    if args.out:  # written before it is printed: a broken pipe on the print keeps the measurements
        table.to_csv(args.out, index=False)
    print(table.to_markdown(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
