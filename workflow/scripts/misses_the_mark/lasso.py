from pathlib import Path

import pandas as pd

from benchcast.data.item_level import load_response_matrix, write_parquet_atomic
from benchcast.harness import splits_by_trial
from benchcast.methods.lasso import lasso_trials, selections_to_frames
from benchcast.workflow_support import job_logger

log = job_logger(snakemake)
w = snakemake.wildcards
matrix = load_response_matrix(Path(snakemake.input.models).parent, w.dataset)
by_trial = splits_by_trial(pd.read_parquet(snakemake.input.splits), matrix)
budgets = [int(b) for b in snakemake.params.budgets]
params = dict(snakemake.params.method_params)
log(f"{w.dataset} {w.split} {w.method}: Lasso paths of {len(by_trial)} trials for budgets {budgets}, params={params}")
selections, timing = lasso_trials(matrix.scores, by_trial, budgets, params, log=log)
fits, items = selections_to_frames(selections)
write_parquet_atomic(timing, snakemake.output.timing)
write_parquet_atomic(items, snakemake.output.selected_items)
write_parquet_atomic(fits, snakemake.output.fits)
made = timing.shared_from == timing.trial
log(f"done: {int(made.sum())} distinct paths, {timing.fit_seconds[made].sum():.1f}s")
