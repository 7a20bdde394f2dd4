"""How many SLURM submissions a run makes, against how many jobs it runs, from a dry run.

    python scripts/slurm/count_submissions.py --configfile config/misses_the_mark.yaml [more configs]

Runs ``snakemake -n --forceall`` with the SLURM profile (workflow/profiles/slurm: its job groups and
bundle sizes) and counts the jobs that would go to ``sbatch``: one per group job, one per job outside
a group; target rules that only collect inputs run in Snakemake's own process and are not counted.
Without the groups every such job would be its own submission, so "jobs" is the count before
grouping. No cluster is needed (a dry run submits nothing).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchcast.workflow.dag import TARGET_RULES, dry_run_text, parse_dry_run

REPO = Path(__file__).resolve().parents[2]


def count(dry_run_log: str) -> dict[str, int]:
    """Jobs, submissions and group jobs in the text of a ``snakemake -n`` run: one submission per
    group job and per job outside a group (target rules run in Snakemake's own process)."""
    jobs = [job for job in parse_dry_run(dry_run_log) if job.rule not in TARGET_RULES]
    groups = {job.group for job in jobs if job.group is not None}
    single = sum(job.group is None for job in jobs)
    return {"jobs": len(jobs), "submissions": len(groups) + single, "group_jobs": len(groups)}


def dry_run(configfiles: list[str], extra: list[str]) -> str:
    """The dry run's text under the SLURM profile (its groups and bundle sizes)."""
    profile = ["--workflow-profile", "workflow/profiles/slurm", "--slurm-no-account"]
    return dry_run_text(REPO, configfiles, [*profile, *extra])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configfile", nargs="+", required=True)
    parser.add_argument("--config", nargs="*", default=[], help="passed to snakemake --config")
    args = parser.parse_args(argv)
    extra = ["--config", *args.config] if args.config else []
    counts = count(dry_run(args.configfile, extra))
    ratio = counts["jobs"] / max(counts["submissions"], 1)
    print(f"jobs\t{counts['jobs']}\nsubmissions\t{counts['submissions']}\ngroup_jobs\t{counts['group_jobs']}")
    print(f"jobs_per_submission\t{ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
