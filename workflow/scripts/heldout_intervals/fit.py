import json
from pathlib import Path

from threadpoolctl import threadpool_limits

from benchcast.data.io import write_text_atomic
from benchcast.new_model.fits import build_fit
from benchcast.new_model.leaderboard import load_leaderboard
from benchcast.studies.heldout_intervals.heldout import cli_seconds
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
w, p = snakemake.wildcards, snakemake.params
data_dir = Path(snakemake.input.models).parents[2]  # results/data/<dataset>/models.parquet -> results
board = load_leaderboard(w.dataset, data_dir)
log(
    f"{w.dataset}: {board.matrix.scores.shape[0]} models x {board.matrix.scores.shape[1]} items; {w.method} at n={w.budget}"
)
with threadpool_limits(1):  # one BLAS thread: a job per core
    fit = build_fit(board, w.method, p.method_params, int(w.budget), p.seed, p.folds, data_dir, log)
    log(f"fit {fit.seconds['fit']:.1f}s, calibration {fit.seconds['calibration']:.1f}s: {fit.folder}")
    seconds = cli_seconds(w.dataset, w.method, int(w.budget), data_dir, p.method_params or None, p.folds, p.seed)
log(
    f"command line: select {seconds['select_seconds']:.2f}s (x{seconds['select_calls']}), estimate {seconds['estimate_seconds']:.2f}s"
)
if "lm_eval_select_seconds" in seconds:
    log(
        f"with lm-evaluation-harness files: select --format lm-eval {seconds['lm_eval_select_seconds']:.2f}s, "
        f"estimate from harness logs {seconds['lm_eval_estimate_seconds']:.2f}s"
    )
write_text_atomic(
    snakemake.output.cli, json.dumps({**seconds, **{f"{k}_seconds": v for k, v in fit.seconds.items()}}) + "\n"
)
