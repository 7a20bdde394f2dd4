from pathlib import Path

from threadpoolctl import threadpool_limits

from benchcast.data.item_level import load_response_matrix, write_parquet_atomic
from benchcast.studies.mdad.percent import run_percent_cell
from benchcast.studies.mdad.protocol import distinct_models
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
w, p = snakemake.wildcards, snakemake.params
matrix = load_response_matrix(Path(snakemake.input.models).parent, w.dataset, min_accuracy=p.min_accuracy)
scores = matrix.scores[distinct_models(matrix.scores)] if p.dedupe_models else matrix.scores
log(f"{w.scope} {w.dataset} {w.method} n_source={w.n_source} fractions={list(p.fractions)} trials={p.trials}")
with threadpool_limits(1):  # one BLAS thread: a job per core
    estimates, timing = run_percent_cell(
        scores,
        matrix.subtasks,
        w.method,
        dict(p.method_params),
        int(w.n_source),
        list(p.fractions),
        p.trials,
        p.seed,
        w.scope,
        p.n_targets,
    )
write_parquet_atomic(estimates, snakemake.output[0])
log(f"done: {timing.seconds.sum():.1f}s in fit and estimate, sizes {sorted(estimates.k.unique().tolist())}")
