"""The run's last line (benchcast.workflow.console): the index and the report command when the run
built the index, the paths usable from where Snakemake was launched (``--directory`` too)."""

from __future__ import annotations

from benchcast.workflow.console import failure_message, success_message


def test_a_run_that_built_the_index_names_it_and_the_report_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = success_message(["ingest_item_dataset", "index", "all"], tmp_path)
    assert line == (
        "Results: results/index.md (every paper's tables and figures); "
        "the HTML report: snakemake --report results/report.html"
    )


def test_with_directory_the_paths_are_absolute(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # Snakemake runs the handlers in the --directory
    line = success_message(["index"], tmp_path / "elsewhere")
    assert f"Results: {work}/results/index.md " in line
    assert line.endswith(f"snakemake --directory {work} --report {work}/results/report.html")
    assert success_message(["index"], tmp_path).startswith("Results: work/results/index.md ")


def test_a_partial_run_says_where_the_index_comes_from(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert success_message(["ingest_item_dataset"], tmp_path) == (
        "Done. The index of all results, results/index.md, and the report come with: snakemake --cores all"
    )


def test_a_failed_run_names_its_log(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = tmp_path / ".snakemake" / "log" / "x.snakemake.log"
    line = failure_message([str(log)], tmp_path)
    assert "the whole run's log: .snakemake/log/x.snakemake.log." in line and "\n" not in line
