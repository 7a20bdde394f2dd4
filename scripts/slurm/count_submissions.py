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
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: rules whose jobs only collect inputs: Snakemake runs them itself, never through sbatch
TARGET_RULES = {"all", "data", "aggregate_data", "misses_the_mark", "benchpress", "irt_validation"}


def count(dry_run_log: str) -> dict[str, int]:
    """Submissions and rule instances in the text of a ``snakemake -n`` run.

    Jobs outside groups print ``rule NAME:`` at the start of a line; a group job prints ``Group job
    NAME`` and its jobs indented under it."""
    ungrouped = Counter(m.group(1) for m in re.finditer(r"^rule (\w+):$", dry_run_log, flags=re.M))
    grouped = Counter(m.group(1) for m in re.finditer(r"^ +rule (\w+):$", dry_run_log, flags=re.M))
    groups = len(re.findall(r"Group job \S+ \(jobs in lexicogr\. order\):", dry_run_log))
    jobs = sum(n for rule, n in (ungrouped + grouped).items() if rule not in TARGET_RULES)
    single = sum(n for rule, n in ungrouped.items() if rule not in TARGET_RULES)
    return {"jobs": jobs, "submissions": groups + single, "group_jobs": groups}


def dry_run(configfiles: list[str], extra: list[str]) -> str:
    cmd = [sys.executable, "-m", "snakemake", "-n", "--forceall", "--workflow-profile", "workflow/profiles/slurm"]
    cmd += ["--slurm-no-account", "--configfile", *configfiles]
    cmd += extra
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"snakemake dry run failed:\n{proc.stderr[-3000:]}")
    return proc.stdout + proc.stderr


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
