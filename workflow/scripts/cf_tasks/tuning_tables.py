import pandas as pd

from benchcast.output.tables import write_table
from benchcast.studies.cf_tasks import analysis, figures
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p, out = snakemake.params, snakemake.output
sweeps = analysis.figure9(p.searches, [pd.read_parquet(f) for f in snakemake.input.sweeps])
write_table(sweeps, csv=out.figure9)
chosen = analysis.tuning(sweeps, p.grid)
write_table(chosen, csv=out.tuning)
figures.figure9(sweeps, out.figure9_png)
log(f"chosen settings:\n{chosen.drop(columns='grid').to_string(index=False)}\ngrid: {chosen.grid.iloc[0]}")
