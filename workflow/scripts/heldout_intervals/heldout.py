from pathlib import Path

from threadpoolctl import threadpool_limits

from benchcast.data.item_level import write_parquet_atomic
from benchcast.new_model.leaderboard import load_leaderboard
from benchcast.studies.heldout_intervals.heldout import TIMING_COLUMNS, heldout, summarise
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
w, p = snakemake.wildcards, snakemake.params
board = load_leaderboard(w.dataset, Path(snakemake.input.models).parents[2])
with threadpool_limits(1):
    rows = heldout(board, w.method, p.method_params, int(w.budget), p.seed, p.folds, p.heldout_folds, p.level, log)
write_parquet_atomic(rows.drop(columns=list(TIMING_COLUMNS)), snakemake.output.rows)
write_parquet_atomic(rows[["model_id", *TIMING_COLUMNS]], snakemake.output.timing)
log(f"held out: {summarise(rows)}")
