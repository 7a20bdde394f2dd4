import pandas as pd

from benchcast.data.io import write_csv_atomic
from benchcast.studies.benchpress import analysis as bp
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
t17 = bp.conformal_levels_table(pd.read_parquet(snakemake.input[0]), snakemake.params.levels)
write_csv_atomic(t17, snakemake.output[0], index=False, float_format="%.4f")
for r in t17.to_dict("records"):
    log(f"{r['estimator']} {r['level']:.2f}: coverage {r['coverage']:.4f}, median width {r['median_width']:.2f}")
