"""The performance table of a finished run, from its ``benchmark:`` files.

    python scripts/performance_table.py --configfile config/misses_the_mark.yaml --out results/tables/performance.csv
    python scripts/performance_table.py --directory /path/to/other/clone --configfile config/config.yaml

Per study and method: jobs, job-seconds, peak memory; per study and for the whole run: the critical
path and the wall time projected on 8 / 32 / 128 cores by a list-scheduling simulation of the job
graph (benchcast.workflow.performance, benchcast.workflow.schedule). The job graph is Snakemake's own plan for the
config (``snakemake -n --forceall``); the times are the benchmark files under the run's folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchcast.workflow.dag import dependencies, measured, planned_jobs
from benchcast.workflow.performance import performance_table

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configfile", nargs="+", required=True)
    parser.add_argument("--directory", type=Path, default=REPO, help="the run's folder (its benchmarks/)")
    parser.add_argument("--config", nargs="*", default=[], help="passed to snakemake --config, as the run had it")
    parser.add_argument("--cores", type=int, nargs="+", default=[8, 32, 128])
    parser.add_argument("--out", type=Path, help="CSV to write (default: print only)")
    args = parser.parse_args(argv)
    jobs = planned_jobs(args.directory, args.configfile, args.config)
    table = performance_table(jobs, dependencies(jobs), measured(jobs, args.directory), cores=args.cores)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out, index=False)
    print(table[table["method"] == "(all)"].drop(columns="method").to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
