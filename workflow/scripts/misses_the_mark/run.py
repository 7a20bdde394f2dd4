from pathlib import Path

import pandas as pd

from benchcast.data.item_level import load_response_matrix, write_parquet_atomic
from benchcast.trials.runner import read_prefit, run_job
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
w = snakemake.wildcards
p = snakemake.params
matrix = load_response_matrix(Path(snakemake.input.models).parent, w.dataset)
splits = pd.read_parquet(snakemake.input.splits)
log(f"{w.dataset} {w.split} {w.method} ({p.method_name}) n={w.n} params={dict(p.method_params)}")
# a method with a budget-independent per-trial fit (P-IRT, GP-IRT, Lasso) reads it from its prefit job
prefit = read_prefit(snakemake.input.prefit, p.prefit_kind) if p.prefit_kind else None
result = run_job(matrix, splits, p.method_name, dict(p.method_params), int(w.n), p.seed, log=log, prefit=prefit)
write_parquet_atomic(result.timing, snakemake.output.timing)
write_parquet_atomic(result.estimates, snakemake.output.estimates)
log(f"done: fit {result.timing.fit_seconds.sum():.1f}s, estimate {result.timing.estimate_seconds.sum():.1f}s")
