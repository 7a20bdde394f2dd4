from pathlib import Path

import pandas as pd
from threadpoolctl import threadpool_limits

from benchcast.data.item_level import write_parquet_atomic
from benchcast.data.task_matrix import load_task_matrix
from benchcast.studies.cf_tasks.protocol import run_cell
from benchcast.studies.cf_tasks.tune import repeat_settings
from benchcast.trials.runner import read_prefit
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
w, p = snakemake.wildcards, snakemake.params
matrix = load_task_matrix(Path(snakemake.input.models[0]).parents[1], w.matrix, **p.matrix)
log(
    f"{w.matrix}: {matrix.scores.shape[0]} models x {matrix.scores.shape[1]} items, {len(matrix.task_names)} tasks, "
    f"{matrix.dropped_duplicates} repeated models dropped; {w.split} split, {w.method} ({p.base}), ratio {w.ratio}"
)
tuned = None
if snakemake.input.tuning:
    tuned = repeat_settings([pd.read_parquet(f) for f in snakemake.input.tuning], p.trials, p.method_params)
    log(f"tuned settings per repeat: {tuned}")
prefit_dir = snakemake.input.get("prefit")
prefit = read_prefit(prefit_dir[0], "irt") if prefit_dir else None
if prefit is not None:
    log(f"IRT prefit: {len(prefit.fits)} fits from {prefit_dir[0]}")
with threadpool_limits(1):  # one BLAS thread: a job per core
    estimates, metrics = run_cell(
        matrix,
        w.split,
        p.base,
        dict(p.method_params),
        float(w.ratio),
        p.trials,
        p.seed,
        p.initial_share,
        p.floor,
        p.top_k,
        repeat_params=tuned,
        prefit=prefit,
    )
write_parquet_atomic(metrics, snakemake.output.metrics)
write_parquet_atomic(estimates, snakemake.output.estimates)
log(f"MAE {metrics.mae.mean():.4f} over {p.trials} repeats, {metrics.seconds.sum():.1f}s")
