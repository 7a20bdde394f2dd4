"""SLURM job groups: the "misses the mark" grid goes to sbatch in far fewer submissions than jobs
(workflow/profiles/slurm's bundles, the rules' ``group:``), counted from a dry run, no cluster."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("count_submissions", REPO / "scripts" / "slurm" / "count_submissions.py")
count_submissions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(count_submissions)

DRY_RUN = """\
[Tue Nov 24 08:19:03 2026]
rule ingest_item_dataset:
    output: results/data/musr/responses.parquet
    jobid: 5
[Tue Nov 24 08:19:03 2026] Group job mtm_light (jobs in lexicogr. order):

    [Tue Nov 24 08:19:03 2026]
    rule mtm_run:
        output: a
        jobid: 1

    [Tue Nov 24 08:19:03 2026]
    rule mtm_run:
        output: b
        jobid: 2
[Tue Nov 24 08:19:03 2026] Group job mtm_fit_irt (jobs in lexicogr. order):

    rule mtm_prefit:
        output: c
        jobid: 3

    rule mtm_run:
        output: d
        jobid: 4
rule all:
    input: a, b, d
    jobid: 0
"""


def test_count_reads_group_jobs_and_single_jobs():
    assert count_submissions.count(DRY_RUN) == {"jobs": 5, "submissions": 3, "group_jobs": 2}


@pytest.mark.skipif(
    importlib.util.find_spec("snakemake_executor_plugin_slurm") is None, reason="needs snakemake-executor-plugin-slurm"
)
def test_two_dataset_grid_submits_at_least_five_times_fewer_jobs(tmp_path):
    overlay = tmp_path / "two.yaml"
    overlay.write_text(yaml.safe_dump({"misses_the_mark": {"datasets": ["musr", "gsm"]}}))
    log = count_submissions.dry_run(["config/misses_the_mark.yaml", str(overlay)], [])
    counts = count_submissions.count(log)
    # 2 datasets x 2 splits x (3 budgets x 12 methods + the IRT and Lasso prefits + the split) + ingest + tables,
    # + the results index and the performance table
    assert counts["jobs"] == 164
    assert counts["submissions"] * 5 <= counts["jobs"], counts
    # every run job that reads a prefit shares its submission
    assert "Group job mtm_fit_irt" in log and "Group job mtm_light" in log


@pytest.mark.skipif(
    importlib.util.find_spec("snakemake_executor_plugin_slurm") is None, reason="needs snakemake-executor-plugin-slurm"
)
def test_cluster_requests_come_from_the_measured_table(tmp_path):
    """Under the SLURM profile every job asks for its (rule, method) row of workflow/resources.csv,
    falling back to the rule's '*' row; the profile's 2 h / 2 GB defaults only for rules never measured."""
    from benchcast.job_resources import JobResources, method_key
    from benchcast.workflow_dag import TARGET_RULES, parse_dry_run

    table = JobResources.load(REPO / "workflow" / "resources.csv")
    overlay = tmp_path / "two.yaml"
    overlay.write_text(yaml.safe_dump({"misses_the_mark": {"datasets": ["musr", "gsm"]}}))
    jobs = [
        j
        for j in parse_dry_run(count_submissions.dry_run(["config/misses_the_mark.yaml", str(overlay)], []))
        if j.rule not in TARGET_RULES
    ]
    assert jobs
    for job in jobs:
        expected = table.lookup(job.rule, method_key(job.wildcards)) or (120, 2000)
        got = (int(job.resources["runtime"]), int(job.resources["mem_mb"]))
        assert got == expected, (job.rule, job.wildcards, got, expected)
        assert job.resources["group_slots"] == "1"
    measured = {j.rule for j in jobs if table.lookup(j.rule) is not None}
    assert {"mtm_run", "mtm_prefit", "mtm_splits", "ingest_item_dataset"} <= measured
