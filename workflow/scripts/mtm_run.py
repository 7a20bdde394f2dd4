from pathlib import Path

import pandas as pd

from benchcast.data.item_level import load_response_matrix, write_parquet_atomic
from benchcast.harness import run_job
from benchcast.workflow_support import job_logger

log = job_logger(snakemake)
w = snakemake.wildcards
matrix = load_response_matrix(Path(snakemake.input.models).parent, w.dataset)
splits = pd.read_parquet(snakemake.input.splits)
params = dict(snakemake.params.method_params)
method = snakemake.params.get("method_name", w.method)  # {method} may be a label of a registered method
log(f"{w.dataset} {w.split} {w.method} ({method}) n={w.n} params={params}")
result = run_job(matrix, splits, method, params, int(w.n), snakemake.params.seed, log=log)
write_parquet_atomic(result.timing, snakemake.output.timing)
write_parquet_atomic(result.estimates, snakemake.output.estimates)
log(f"done: fit {result.timing.fit_seconds.sum():.1f}s, estimate {result.timing.estimate_seconds.sum():.1f}s")
