from pathlib import Path

import pandas as pd
from threadpoolctl import threadpool_limits

from benchcast.data.item_level import load_response_matrix
from benchcast.trials.runner import run_prefit, write_prefit
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
matrix = load_response_matrix(
    Path(snakemake.input.models).parent, snakemake.wildcards.dataset, min_accuracy=p.min_accuracy
)
splits = pd.read_parquet(snakemake.input.splits)
with threadpool_limits(1):
    result = run_prefit(matrix, splits, "irt", dict(p.settings), list(p.budgets), p.seed, log=log)
write_prefit(result, snakemake.output[0])
