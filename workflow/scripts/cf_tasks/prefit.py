from pathlib import Path

from threadpoolctl import threadpool_limits

from benchcast.data.task_matrix import load_task_matrix
from benchcast.studies.cf_tasks.protocol import irt_prefit
from benchcast.trials.runner import write_prefit
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
w, p = snakemake.wildcards, snakemake.params
matrix = load_task_matrix(Path(snakemake.input.models[0]).parents[1], w.matrix, **p.matrix)
with threadpool_limits(1):  # one BLAS thread: a job per core
    result = irt_prefit(matrix, w.split, p.trials, p.seed, p.settings, p.ratios, p.initial_share, p.floor, log)
write_prefit(result, snakemake.output[0])
log(f"{len(result.fits)} task fits, {result.timing.fit_seconds.sum():.1f}s")
