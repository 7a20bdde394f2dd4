from pathlib import Path

from benchcast.data.item_level import load_response_matrix, write_parquet_atomic
from benchcast.trials.runner import trial_splits
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
matrix = load_response_matrix(Path(snakemake.input.models).parent, snakemake.wildcards.dataset)
splits = trial_splits(
    matrix,
    snakemake.wildcards.split,
    snakemake.params.trials,
    snakemake.params.seed,
    dict(snakemake.params.split_params),
)
log(f"{matrix.dataset}: {matrix.shape[0]} models, {snakemake.params.trials} trials of {snakemake.wildcards.split}")
write_parquet_atomic(splits, snakemake.output[0])
