import pandas as pd

from benchcast.studies.method_comparison.outputs import write_outputs
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
scores = {protocol: pd.read_parquet(snakemake.input[protocol]) for protocol in p.methods}
write_outputs(
    scores, {k: list(v) for k, v in p.methods.items()}, dict(p.described), dict(snakemake.output.items()), log
)
