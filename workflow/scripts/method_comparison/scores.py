import pandas as pd

from benchcast.data.item_level import write_parquet_atomic
from benchcast.studies import registry
from benchcast.studies.method_comparison.analysis import protocol_scores
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
runs = [dict(r) for r in p.runs]
frames = [pd.read_parquet(path) for path in snakemake.input.runs]
scores = protocol_scores(registry()[snakemake.wildcards.protocol], runs, frames, dict(p.settings))
log(f"{snakemake.wildcards.protocol}: {len(runs)} result files, {len(scores)} (method, budget, group, trial) rows")
write_parquet_atomic(scores, snakemake.output.scores)
