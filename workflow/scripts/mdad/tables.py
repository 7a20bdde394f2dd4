import pandas as pd

from benchcast.studies.mdad.analysis import (
    SENSITIVITY_COLUMNS,
    TABLE3_COLUMNS,
    acceptance_summary,
    paper_vs_ours,
    runtime_row,
    sensitivity_rows,
    summarize_run,
    trials_table,
)
from benchcast.tables import write_table
from benchcast.workflow_support import job_logger

log = job_logger(snakemake)
p = snakemake.params
mdad_rows, agreement, estimation, runtime, by_trials, sensitivity = [], [], [], [], [], []
largest = {}  # Table 3 runs at each dataset's largest source count
for dataset, _, n_source in p.cells:
    largest[dataset] = max(largest.get(dataset, 0), int(n_source))
for (dataset, method, n_source), path, timing in zip(
    p.cells, snakemake.input.runs, snakemake.input.timing, strict=True
):
    estimates = pd.read_parquet(path)
    rows, curves, errors = summarize_run(estimates, dataset, method, int(n_source), p.agreement, p.seed)
    mdad_rows += rows
    agreement += curves
    estimation += errors
    runtime.append(runtime_row(pd.read_parquet(timing), dataset, method, int(n_source)))
    if int(n_source) == largest[dataset]:
        sensitivity += sensitivity_rows(
            estimates,
            dataset,
            method,
            int(n_source),
            p.sensitivity["thresholds"],
            p.sensitivity["resolutions"],
            p.agreement,
        )
    if method in p.table3["methods"] and int(n_source) == largest[dataset]:
        by_trials += trials_table(
            estimates, dataset, method, int(n_source), p.table3["sizes"], p.table3["trials"], p.agreement
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
        p.tolerance,
    )
    for dataset, files in p.paper_files.items()
]
columns = [
    "dataset",
    "table",
    "method",
    "n_source",
    "split",
    "k",
    "ours",
    "paper",
    "diff",
    "tolerance",
    "within",
    "trial_lower",
    "trial_upper",
]
comparison = pd.concat(comparisons, ignore_index=True)[columns] if comparisons else pd.DataFrame(columns=columns)
out = snakemake.output
write_table(mdad, csv=out.mdad)
write_table(pd.concat(agreement, ignore_index=True), csv=out.agreement)
write_table(estimation, csv=out.estimation)
write_table(pd.DataFrame(sensitivity, columns=SENSITIVITY_COLUMNS), csv=out.sensitivity)
# the paper's seconds per trial (300 sources) on each of its benchmarks, beside ours
paper_runtime = pd.read_csv(snakemake.input.paper_runtime).pivot(
    index="method", columns="benchmark", values="seconds_per_trial"
)
table2 = pd.DataFrame(runtime).merge(paper_runtime.add_prefix("paper_").reset_index(), on="method", how="left")
write_table(table2, csv=out.table2)
write_table(pd.DataFrame(by_trials, columns=TABLE3_COLUMNS), csv=out.table3)
write_table(comparison, csv=out.paper_vs_ours)
write_table(acceptance_summary(comparison), csv=out.acceptance_summary)
log(f"{len(p.cells)} run files, {len(mdad)} MDAD cells, {len(comparison)} published numbers compared")
