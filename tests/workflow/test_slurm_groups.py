"""SLURM job groups: the "misses the mark" grid goes to sbatch in far fewer submissions than jobs
(workflow/profiles/slurm's bundles, the rules' ``group:``), counted from a dry run, no cluster."""

from __future__ import annotations

import importlib.util

import pytest
import yaml
from helpers import REPO

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
    # 2 datasets x 2 splits x (3 budgets x 13 methods + the IRT and Lasso prefits + the split) + ingest + tables,
    # + the results index and the performance table
    assert counts["jobs"] == 176
    assert counts["submissions"] * 5 <= counts["jobs"], counts
    # every run job that reads a prefit shares its submission
    assert "Group job mtm_fit_irt" in log and "Group job mtm_light" in log


@pytest.mark.skipif(
    importlib.util.find_spec("snakemake_executor_plugin_slurm") is None, reason="needs snakemake-executor-plugin-slurm"
)
def test_cluster_requests_come_from_the_measured_table(tmp_path):
    """Under the SLURM profile every job asks for its (rule, method) row of workflow/resources.csv,
    falling back to the rule's '*' row; the profile's 2 h / 2 GB defaults only for rules never measured."""
    from benchcast.workflow.dag import TARGET_RULES, parse_dry_run
    from benchcast.workflow.resources import JobResources, method_key

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


def test_slurm_nice_turns_priorities_into_nice_values():
    from benchcast.workflow.resources import HIGHEST_PRIORITY, slurm_nice

    assert slurm_nice(HIGHEST_PRIORITY) == "--nice=0"
    assert slurm_nice(9) == "--nice=100"
    assert slurm_nice(0) == "--nice=1000"
    for bad in (-1, HIGHEST_PRIORITY + 1):
        with pytest.raises(ValueError, match="outside"):
            slurm_nice(bad)


@pytest.mark.skipif(
    importlib.util.find_spec("snakemake_executor_plugin_slurm") is None, reason="needs snakemake-executor-plugin-slurm"
)
def test_slurm_starts_jobs_in_snakemakes_priority_order(tmp_path):
    """SLURM orders pending jobs itself: every job hands it its priority as --nice (slurm_nice), a
    group job its highest member's, so no job is ranked below what its own priority asks."""
    from benchcast.workflow.dag import TARGET_RULES, parse_dry_run
    from benchcast.workflow.resources import slurm_nice

    overlay = tmp_path / "two.yaml"
    overlay.write_text(yaml.safe_dump({"misses_the_mark": {"datasets": ["musr", "gsm"]}}))
    jobs = [
        j
        for j in parse_dry_run(count_submissions.dry_run(["config/misses_the_mark.yaml", str(overlay)], []))
        if j.rule not in TARGET_RULES
    ]

    def nice(extra: str) -> int:
        assert extra.startswith("--nice="), extra
        return int(extra.removeprefix("--nice="))

    by_group: dict[int, set[str]] = {}
    for job in jobs:
        extra = job.resources["slurm_extra"]
        assert nice(extra) <= nice(slurm_nice(job.priority)), (job.rule, job.wildcards, extra, job.priority)
        if job.group is None:
            assert extra == slurm_nice(job.priority), (job.rule, extra)
        else:
            by_group.setdefault(job.group, set()).add(extra)
    assert all(len(values) == 1 for values in by_group.values())
    irt = {j.resources["slurm_extra"] for j in jobs if j.rule == "mtm_prefit" and j.wildcards["fit"] == "irt"}
    light = {j.resources["slurm_extra"] for j in jobs if j.rule == "mtm_run" and j.wildcards["method"] == "aipw"}
    assert irt == {"--nice=0"} and light == {"--nice=1000"}


def test_every_rule_with_a_priority_hands_it_to_slurm():
    """A rule's ``priority:`` and its ``slurm_extra`` say the same (the profile's default covers
    the rules without a priority: the lowest, nice 1000)."""
    import re

    from benchcast.workflow.resources import slurm_nice

    checked = 0
    for path in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for block in re.split(r"(?m)^(?=rule )", path.read_text())[1:]:
            priority = re.search(r"(?m)^    priority: (.+)$", block)
            if priority is None:
                continue
            checked += 1
            value = priority.group(1).strip()
            if value.isdigit():
                assert f"slurm_extra=slurm_nice({value})" in block, (path.name, block.splitlines()[0])
            else:  # a per-job priority: the rule passes its SLURM group's
                assert "slurm_extra=lambda w: slurm_nice(" in block, (path.name, block.splitlines()[0])
    assert checked >= 9
    assert slurm_profile()["default-resources"]["slurm_extra"] == repr(slurm_nice(0))


def slurm_profile() -> dict:
    """The SLURM profile as Snakemake reads it (a YTE template: its job groups come from the studies)."""
    import yte

    with open(REPO / "workflow" / "profiles" / "slurm" / "config.yaml") as stream:
        return yte.process_yaml(stream, require_use_yte=True)


def test_every_study_bundles_its_run_jobs_on_slurm():
    """A study whose run group has no bundle size in the SLURM profile sends each of its hundreds of
    run jobs to sbatch on its own (the CF study did: 445 submissions for 532 jobs). Each study
    declares its bundles (benchcast.studies.contract.Study.job_groups); the profile reads them all."""
    from benchcast.studies import job_groups
    from benchcast.studies.cf_tasks import jobs as cf_jobs
    from benchcast.studies.mdad import jobs as mdad_jobs
    from benchcast.studies.tailoredbench import jobs as tb_jobs

    bundled = slurm_profile()["group-components"]
    assert bundled == job_groups()
    assert {cf_jobs.RUN_GROUP, mdad_jobs.RUN_GROUP, tb_jobs.RUN_GROUP} <= set(bundled)
    assert bundled["mtm_light"] == 18 and bundled["bp_grid"] == 12  # the sizes measured for the grids
