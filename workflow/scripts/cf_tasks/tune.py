from dataclasses import asdict
from pathlib import Path

from threadpoolctl import threadpool_limits

from benchcast.data.item_level import write_parquet_atomic
from benchcast.data.task_matrix import load_task_matrix
from benchcast.methods.collaborative_filtering import CFSettings
from benchcast.studies.cf_tasks.protocol import make_split
from benchcast.studies.cf_tasks.tune import tune
from benchcast.trials.tasks import task_budgets
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
w, p = snakemake.wildcards, snakemake.params
matrix = load_task_matrix(Path(snakemake.input.models[0]).parents[1], w.matrix, **p.matrix)
repeat = int(w.repeat)
outer = make_split(matrix, w.split, repeat, p.seed, p.initial_share)
budgets = task_budgets(matrix.task_sizes, p.tuning["ratio"], p.floor)
with threadpool_limits(1):  # one BLAS thread: a job per core
    chosen, sweep = tune(matrix, outer, budgets, CFSettings(), p.tuning["grid"], p.seed, repeat, p.initial_share)
write_parquet_atomic(sweep.assign(repeat=repeat), snakemake.output.sweep)
picked = {k: v for k, v in asdict(chosen).items() if k in p.tuning["grid"]}
log(
    f"{w.matrix} {w.split} repeat {repeat}: {len(outer.initial)} initial models; chose {picked} from {p.tuning['grid']}"
)
