"""Size the cluster requests (``workflow/resources.csv``) from the ``benchmark:`` files of finished runs.

    python scripts/resources_table.py --directory RUN --configfile config/misses_the_mark.yaml [overlay.yaml]
    python scripts/resources_table.py --directory RUN2 --configfile config/benchpress.yaml --merge

Reads Snakemake's plan of the run's config (``snakemake -n --forceall`` in RUN) and every job's
benchmark file under RUN; writes per rule and method the job count, the longest time, the largest
peak memory and the request derived from them (benchcast.workflow.resources.Sizing). ``--merge`` keeps
the table's other rows and takes the larger measurement where both have one, so runs of different
configs (or datasets) add up; without it the table is replaced. Rules this repository no longer
defines are dropped. Sizing options (``--runtime-factor`` ...) apply to every row.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from pathlib import Path

import pandas as pd

from benchcast.workflow import resources as jr
from benchcast.workflow.dag import TARGET_RULES, measured, planned_jobs

REPO = Path(__file__).resolve().parents[1]
TABLE = REPO / "workflow" / "resources.csv"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--directory", type=Path, required=True, help="the finished run's folder (its benchmarks/)")
    parser.add_argument("--configfile", nargs="+", required=True, help="the run's config files, as it had them")
    parser.add_argument("--config", nargs="*", default=[], help="passed to snakemake --config, as the run had it")
    parser.add_argument("--merge", action="store_true", help="keep the table's rows; larger measurement wins")
    parser.add_argument("--out", type=Path, default=TABLE)
    for f in fields(jr.Sizing):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    args = parser.parse_args(argv)
    sizing = jr.Sizing(**{f.name: getattr(args, f.name) for f in fields(jr.Sizing)})

    jobs = [job for job in planned_jobs(args.directory, args.configfile, args.config) if job.rule not in TARGET_RULES]
    times = measured(jobs, args.directory)
    samples = [(job.rule, jr.method_key(job.wildcards), *times[job.jobid]) for job in jobs if job.jobid in times]
    if not samples:
        raise SystemExit(f"no benchmark files of this config's jobs under {args.directory / 'benchmarks'}")
    new = jr.measured_rows(samples)
    if args.merge and args.out.is_file():
        new = jr.merge_measured(pd.read_csv(args.out, dtype={"rule": str, "method": str}), new)
    known = jr.rules_defined([REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))])
    table = jr.request_table(new[new["rule"].isin(known)], sizing)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table[jr.COLUMNS].to_csv(args.out, index=False)
    print(f"{len(samples)} measured jobs of {len(jobs)} -> {args.out} ({len(table)} rows)")
    print(table[table["method"] == "*"].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
