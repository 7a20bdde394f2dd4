import pandas as pd

from benchcast.data.item_level import load_response_matrix
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
matrix = load_response_matrix(snakemake.input.responses.rsplit("/", 1)[0], snakemake.wildcards.dataset)
n = int(snakemake.wildcards.n)
estimate = matrix.scores[:, :n].mean(axis=1)
truth = matrix.scores.mean(axis=1)
pd.DataFrame({"model_id": matrix.model_ids, "estimate": estimate, "truth": truth}).to_csv(
    snakemake.output[0], index=False, float_format="%.6f"
)
log(f"{len(truth)} models, {n} items")
