from pathlib import Path

from benchcast.data.item_level import load_response_matrix, write_parquet_atomic
from benchcast.trials.runner import trial_splits
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
matrix = load_response_matrix(
    Path(snakemake.input.models).parent, snakemake.wildcards.dataset, min_accuracy=p.min_accuracy
)
splits = trial_splits(matrix, "given", p.trials, p.seed)
log(f"{matrix.dataset}: {matrix.shape[0]} models ({(splits.trial == 0).sum()} in a run), {p.trials} runs")
write_parquet_atomic(splits, snakemake.output[0])
