import pandas as pd

from benchcast.data.io import write_parquet_atomic
from benchcast.studies.benchpress import analysis as bp
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
cells = pd.concat([pd.read_parquet(f) for f in snakemake.input], ignore_index=True)
per_fold, summary = bp.grid_summary(cells)
write_parquet_atomic(per_fold, snakemake.output.per_fold)
write_parquet_atomic(summary, snakemake.output.summary)
log(f"{len(summary)} settings, {len(per_fold)} (setting, fold) rows")
