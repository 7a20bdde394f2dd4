"""Every table of the MDAD study from its run files (rule ``mdad_tables``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from benchcast.output.tables import write_table
from benchcast.studies.mdad.analysis import (
    SENSITIVITY_COLUMNS,
    TABLE3_COLUMNS,
    acceptance_summary,
    paper_vs_ours,
    runtime_row,
    same_size_rows,
    sensitivity_rows,
    summarize_run,
    trials_table,
)
from benchcast.studies.mdad.summaries import cross_paper, cross_paper_summary, table5

COMPARISON_COLUMNS = [
    "dataset", "table", "method", "n_source", "split", "k", "ours", "paper", "diff", "tolerance", "within_tolerance",
    "tolerance_factor", "not_comparable", "status", "trials", "trial_lower", "trial_upper",
]  # fmt: skip


def write_tables(
    cells: Sequence[tuple[str, str, int]],
    runs: Sequence[str],
    timings: Sequence[str],
    settings: Mapping,
    paper_files: Mapping[str, Mapping[str, str]],
    paper_runtime: str,
    outputs: Mapping[str, str],
    base_seed: int,
    log: Callable[[str], None] = print,
) -> None:
    """``cells``: (dataset, method, source count) of each run file in ``runs`` / ``timings``;
    ``settings``: config ``mdad`` (``agreement``, ``tolerance``, ``table3``, ``sensitivity``) and
    ``selectors``, the paper's selectors (the sensitivity table and Table 5 keep to them; the
    cross-paper table has every method);
    ``paper_files``: per dataset its published ``mdad`` / ``estimation`` CSVs; ``outputs``: the
    CSV of each table (:meth:`Jobs.tables`). Table 3 and the sensitivity table use each dataset's
    largest source count, as the paper's 300."""
    agreement_settings = settings["agreement"]
    largest: dict[str, int] = {}
    for dataset, _, n_source in cells:
        largest[dataset] = max(largest.get(dataset, 0), int(n_source))
    mdad_rows, agreement, estimation, runtime, by_trials, sensitivity = [], [], [], [], [], []
    for (dataset, method, n_source), path, timing in zip(cells, runs, timings, strict=True):
        n_source = int(n_source)
        estimates = pd.read_parquet(path)
        rows, curves, errors = summarize_run(estimates, dataset, method, n_source, agreement_settings, base_seed)
        mdad_rows += rows
        agreement += curves
        estimation += errors
        runtime.append(runtime_row(pd.read_parquet(timing), dataset, method, n_source))
        if n_source != largest[dataset] or method not in settings["selectors"]:
            continue
        sens = settings["sensitivity"]
        sensitivity += sensitivity_rows(
            estimates, dataset, method, n_source, sens["thresholds"], sens["resolutions"], agreement_settings
        )
        t3 = settings["table3"]
        if method in t3["methods"]:
            by_trials += trials_table(
                estimates, dataset, method, n_source, t3["sizes"], t3["trials"], agreement_settings
            )
    mdad = pd.DataFrame(mdad_rows)
    estimation = pd.DataFrame(estimation)
    comparisons = [
        paper_vs_ours(
            mdad,
            estimation,
            pd.read_csv(files["mdad"], index_col=0),
            pd.read_csv(files["estimation"], index_col=0),
            dataset,
            settings["tolerance"],
        )
        for dataset, files in paper_files.items()
    ]
    comparison = (
        pd.concat(comparisons, ignore_index=True)[COMPARISON_COLUMNS]
        if comparisons
        else pd.DataFrame(columns=COMPARISON_COLUMNS)
    )
    if settings.get("run") is not None:
        comparison["run"] = settings["run"]
    # the paper's seconds per trial (300 sources) on each of its benchmarks, beside ours
    paper = pd.read_csv(paper_runtime).pivot(index="method", columns="benchmark", values="seconds_per_trial")
    table2 = pd.DataFrame(runtime).merge(paper.add_prefix("paper_").reset_index(), on="method", how="left")
    tables = {
        "mdad": mdad,
        "agreement": pd.concat(agreement, ignore_index=True),
        "estimation": estimation,
        "sensitivity": pd.DataFrame(sensitivity, columns=SENSITIVITY_COLUMNS),
        "table2": table2,
        "table3": pd.DataFrame(by_trials, columns=TABLE3_COLUMNS),
        "table5": table5(mdad, estimation, settings["selectors"]),
        "cross_paper": cross_paper(mdad, estimation),
        "paper_vs_ours": comparison,
        "acceptance_summary": acceptance_summary(comparison),
    }
    tables["cross_paper_summary"] = cross_paper_summary(tables["cross_paper"])
    for name, table in tables.items():
        write_table(table, csv=outputs[name])
    log(f"{len(cells)} run files, {len(mdad)} MDAD cells, {len(comparison)} published numbers compared")


def write_same_size(
    cells: Sequence[tuple[str, str, str]],
    runs: Sequence[str],
    agreement_settings: Mapping,
    table_path: str,
    figure_path: str,
    base_seed: int,
    log: Callable[[str], None] = print,
) -> None:
    """Section 5.3 / Appendix L (rule ``mdad_same_size``): ``same_size.csv`` and Figure 5 from the
    runs of each (dataset, group, method) in ``cells``. A group's full-benchmark accuracies are its
    seen plus unseen counts (the halves partition the items)."""
    from benchcast.studies.mdad import figures

    rows, gaps = [], {}
    for (dataset, group, method), path in zip(cells, runs, strict=True):
        estimates = pd.read_parquet(path)
        first = estimates[(estimates.trial == 0) & (estimates.k == estimates.k.min())]
        accuracy = ((first.seen_correct + first.unseen_correct) / (first.n_seen + first.n_unseen)).to_numpy()
        a, b = np.triu_indices(len(accuracy), k=1)
        gaps[(dataset, group)] = 100 * np.abs(accuracy[a] - accuracy[b])
        rows += same_size_rows(estimates, accuracy, dataset, group, method, agreement_settings, base_seed)
    table = pd.DataFrame(rows)
    write_table(table, csv=table_path)
    figures.same_size(table, gaps, figure_path)
    log(f"{len(cells)} runs; groups {sorted(gaps)}")


def write_percent(
    cells: Sequence[tuple[str, str, str, int]],
    runs: Sequence[str],
    agreement_settings: Mapping,
    table_path: str,
    figure10_path: str,
    figure17_path: str,
    base_seed: int,
    log: Callable[[str], None] = print,
) -> None:
    """Appendix G (rule ``mdad_percent``): ``percent.csv`` and Figures 10 (each subtask's seen half)
    and 17 (the whole seen half) from the fixed-percentage runs of each (scope, dataset, method,
    source count) in ``cells``."""
    from benchcast.studies.mdad import figures
    from benchcast.studies.mdad.percent import COLUMNS, summarize_percent

    rows = []
    for (scope, dataset, method, n_source), path in zip(cells, runs, strict=True):
        estimates = pd.read_parquet(path)
        rows += summarize_percent(estimates, scope, dataset, method, int(n_source), agreement_settings, base_seed)
    table = pd.DataFrame(rows, columns=COLUMNS)
    write_table(table, csv=table_path)
    figures.percent_grid(table[table.scope == "subtask"], "each subtask's seen half", figure10_path)
    figures.percent_grid(table[table.scope == "benchmark"], "the whole seen half", figure17_path)
    log(f"{len(cells)} runs, {len(table)} rows")
