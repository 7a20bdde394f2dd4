"""benchcast.workflow.dag (a dry run's job graph, benchmark files) and benchcast.workflow.performance."""

from __future__ import annotations

import math

import pytest

from benchcast.workflow.dag import dependencies, measured, parse_dry_run, read_benchmark
from benchcast.workflow.performance import performance_table

DRY_RUN = """\
Building DAG of jobs...
[Tue Nov 24 08:28:01 2026]
rule ingest_item_dataset:
    input: raw/toy.jbl
    output: results/data/toy/responses.parquet, results/data/toy/models.parquet
    log: logs/ingest/toy.log
    jobid: 3
    benchmark: benchmarks/ingest/toy.tsv
    reason: Forced execution
    wildcards: dataset=toy
    resources: tmpdir=/tmp

rule mtm_run:
    input: results/data/toy/responses.parquet
    output: results/runs/a.parquet
    jobid: 1
    benchmark: benchmarks/misses_the_mark/run/toy/interpolation/aipw/n=50.tsv
    wildcards: dataset=toy, split=interpolation, method=aipw, n=50

rule mtm_run:
    input: results/data/toy/responses.parquet, results/data/toy/models.parquet
    output: results/runs/b.parquet
    jobid: 2
    benchmark: benchmarks/misses_the_mark/run/toy/interpolation/pca/n=50.tsv
    wildcards: dataset=toy, split=interpolation, method=pca, n=50

rule all:
    input: results/runs/a.parquet, results/runs/b.parquet
    jobid: 0
"""


def write_benchmark(path, seconds, rss="120.5"):
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = "".join(f"{s}\t0:00:01\t{rss}\t1\t1\t1\t1\t0\t0\t{s}\n" for s in seconds)
    path.write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n" + rows)


def test_parse_dry_run_and_dependencies():
    jobs = parse_dry_run(DRY_RUN)
    assert [(j.rule, j.jobid) for j in jobs] == [
        ("ingest_item_dataset", "3"),
        ("mtm_run", "1"),
        ("mtm_run", "2"),
        ("all", "0"),
    ]
    assert jobs[2].wildcards["method"] == "pca" and jobs[3].benchmark is None
    assert dependencies(jobs) == {"3": set(), "1": {"3"}, "2": {"3"}, "0": {"1", "2"}}


def test_read_benchmark_means_repeats_and_keeps_peak(tmp_path):
    write_benchmark(tmp_path / "b.tsv", [2.0, 4.0])
    assert read_benchmark(tmp_path / "b.tsv") == (3.0, 120.5)
    write_benchmark(tmp_path / "c.tsv", [1.0], rss="-")
    seconds, rss = read_benchmark(tmp_path / "c.tsv")
    assert seconds == 1.0 and math.isnan(rss)
    (tmp_path / "bad.tsv").write_text("x\n1\n")
    with pytest.raises(ValueError, match="not a Snakemake benchmark"):
        read_benchmark(tmp_path / "bad.tsv")


def test_read_benchmark_gives_cpu_seconds_when_asked(tmp_path):
    (tmp_path / "b.tsv").write_text("s\th:m:s\tmax_rss\tcpu_time\n276.83\t0:04:36\t221.32\t120.24\n")
    assert read_benchmark(tmp_path / "b.tsv", "cpu") == (120.24, 221.32)
    assert read_benchmark(tmp_path / "b.tsv") == (276.83, 221.32)
    (tmp_path / "old.tsv").write_text("s\th:m:s\tmax_rss\n2.0\t0:00:02\t1.0\n")  # no cpu_time column
    with pytest.raises(ValueError, match="'cpu_time'"):
        read_benchmark(tmp_path / "old.tsv", "cpu")


def test_performance_table_rolls_up_and_projects(tmp_path):
    jobs = parse_dry_run(DRY_RUN)
    write_benchmark(tmp_path / "benchmarks/ingest/toy.tsv", [1.0])
    write_benchmark(tmp_path / "benchmarks/misses_the_mark/run/toy/interpolation/aipw/n=50.tsv", [5.0])
    write_benchmark(tmp_path / "benchmarks/misses_the_mark/run/toy/interpolation/pca/n=50.tsv", [7.0])
    table = performance_table(jobs, dependencies(jobs), measured(jobs, tmp_path), cores=(1, 2))
    by = table.set_index(["study", "method"])
    assert by.loc[("misses_the_mark", "pca"), "job_seconds"] == 7.0
    assert by.loc[("data", "ingest_item_dataset"), "jobs"] == 1
    whole = by.loc[("(all)", "(all)")]
    assert whole["jobs"] == 3 and whole["job_seconds"] == 13.0
    assert whole["critical_path_s"] == 8.0 and whole["critical_path"] == "ingest_item_dataset > mtm_run"
    assert whole["wall_1_cores_s"] == 13.0 and whole["wall_2_cores_s"] == 8.0
    # a study's own graph: the two runs side by side
    assert by.loc[("misses_the_mark", "(all)"), "wall_2_cores_s"] == 7.0


def test_jobs_inside_group_blocks_are_read_too():
    grouped = DRY_RUN.replace(
        "rule mtm_run:\n    input: results/data/toy/responses.parquet\n    output: results/runs/a.parquet\n    jobid: 1\n",
        "[Tue Nov 24 08:34:29 2026] Group job mtm_light (jobs in lexicogr. order):\n"
        "    rule mtm_run:\n        input: results/data/toy/responses.parquet\n"
        "        output: results/runs/a.parquet\n        jobid: 1\n",
    )
    assert grouped != DRY_RUN
    assert dependencies(parse_dry_run(grouped)) == dependencies(parse_dry_run(DRY_RUN))
    assert [job.group for job in parse_dry_run(grouped)] == [None, 0, None, None]


def test_paper_costs_sit_next_to_ours(tmp_path):
    jobs = parse_dry_run(DRY_RUN)
    write_benchmark(tmp_path / "benchmarks/misses_the_mark/run/toy/interpolation/aipw/n=50.tsv", [5.0])
    costs = {"misses_the_mark": {"aipw": "Table 2: 0.27 s"}, "benchpress": {"(all)": "not reported"}}
    table = performance_table(jobs, dependencies(jobs), measured(jobs, tmp_path), cores=(1,), costs=costs)
    by = table.set_index(["study", "method"])["paper_cost"]
    assert by[("misses_the_mark", "aipw")] == "Table 2: 0.27 s"
    assert by[("misses_the_mark", "(all)")] == "" and by[("(all)", "(all)")] == ""
    assert "paper_cost" not in performance_table(jobs, dependencies(jobs), measured(jobs, tmp_path), cores=(1,)).columns
