from pathlib import Path

from threadpoolctl import threadpool_limits

from benchcast.data.item_level import load_response_matrix, write_parquet_atomic
from benchcast.studies.mdad.protocol import distinct_models, run_cell
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
w, p = snakemake.wildcards, snakemake.params
matrix = load_response_matrix(Path(snakemake.input.models).parent, w.dataset, min_accuracy=p.min_accuracy)
scores, subtasks = matrix.scores, matrix.subtasks
if p.dedupe_models:
    keep = distinct_models(scores)
    log(f"dedupe_models: {len(keep)} of {len(scores)} models have answers no earlier model repeats")
    scores = scores[keep]
log(f"{w.dataset} {w.method} n_source={w.n_source} sizes={list(p.sizes)} params={dict(p.method_params)}")
with threadpool_limits(1):  # one BLAS thread: a job per core
    estimates, timing = run_cell(
        scores, subtasks, w.method, dict(p.method_params), int(w.n_source), list(p.sizes), p.trials, p.seed, p.n_targets
    )
write_parquet_atomic(timing, snakemake.output.timing)
write_parquet_atomic(estimates, snakemake.output.estimates)
shared = timing.groupby("trial").shared_seconds.first().sum()
log(f"done: {timing.seconds.sum() + shared:.1f}s over {p.trials} trials")
