from pathlib import Path

import pandas as pd
from threadpoolctl import threadpool_limits

from benchcast.data.item_level import load_response_matrix, write_parquet_atomic
from benchcast.trials.runner import read_prefit, run_job
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
w, p = snakemake.wildcards, snakemake.params
matrix = load_response_matrix(Path(snakemake.input.models).parent, w.dataset, min_accuracy=p.min_accuracy)
splits = pd.read_parquet(snakemake.input.splits)
log(f"{w.dataset} {w.setting} ({p.method}) n={w.n} params={dict(p.method_params)}")
# P-IRT / GP-IRT read the IRT fit their prefit job made once for every run and inference count
prefit = read_prefit(snakemake.input.prefit, p.prefit_kind) if p.prefit_kind else None
with threadpool_limits(1):  # one BLAS thread: a job per core, and small matrix products
    result = run_job(matrix, splits, p.method, dict(p.method_params), int(w.n), p.seed, log=log, prefit=prefit)
write_parquet_atomic(result.timing, snakemake.output.timing)
write_parquet_atomic(result.estimates, snakemake.output.estimates)
log(f"done: fit {result.timing.fit_seconds.sum():.1f}s, estimate {result.timing.estimate_seconds.sum():.1f}s")
