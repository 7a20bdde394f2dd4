from pathlib import Path

import pandas as pd

from benchcast.data.item_level import load_response_matrix
from benchcast.trials.runner import run_prefit, write_prefit
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
w = snakemake.wildcards
p = snakemake.params
matrix = load_response_matrix(Path(snakemake.input.models).parent, w.dataset)
result = run_prefit(matrix, pd.read_parquet(snakemake.input.splits), p.kind, p.settings, p.budgets, p.seed, log=log)
write_prefit(result, snakemake.output[0])
log("done")
