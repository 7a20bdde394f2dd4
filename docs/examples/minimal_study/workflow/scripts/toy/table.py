import pandas as pd

from benchcast.output.tables import within_tolerance, write_table
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
rows = []
for path in snakemake.input:
    run = pd.read_csv(path)
    rows.append({"run": path, "ours": (run.estimate - run.truth).abs().mean(), "paper": snakemake.params.paper})
table = pd.DataFrame(rows)
table["within_tolerance"] = within_tolerance(table.ours, table.paper, snakemake.params.tolerance, 0.0)
write_table(table, csv=snakemake.output[0])
log(f"{int(table.within_tolerance.sum())} of {len(table)} within tolerance")
