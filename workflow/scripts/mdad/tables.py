import pandas as pd

from benchcast.studies.mdad.analysis import acceptance_summary, paper_vs_ours, summarize_run
from benchcast.tables import write_table
from benchcast.workflow_support import job_logger

log = job_logger(snakemake)
p = snakemake.params
mdad_rows, agreement, estimation = [], [], []
for (dataset, method, n_source), path in zip(p.cells, snakemake.input.runs, strict=True):
    rows, curves, errors = summarize_run(pd.read_parquet(path), dataset, method, int(n_source), p.agreement, p.seed)
    mdad_rows += rows
    agreement += curves
    estimation += errors
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
write_table(comparison, csv=out.paper_vs_ours)
write_table(acceptance_summary(comparison), csv=out.acceptance_summary)
log(f"{len(p.cells)} run files, {len(mdad)} MDAD cells, {len(comparison)} published numbers compared")
