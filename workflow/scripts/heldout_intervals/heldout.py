from pathlib import Path

import pandas as pd
from threadpoolctl import threadpool_limits

from benchcast.data.item_level import write_parquet_atomic
from benchcast.new_model.leaderboard import load_leaderboard
from benchcast.studies.heldout_intervals.heldout import TIMING_COLUMNS, heldout, summarise
from benchcast.studies.heldout_intervals.pairs import PAIR_COLUMNS, family_keys, summarise_pairs
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
w, p = snakemake.wildcards, snakemake.params
board = load_leaderboard(w.dataset, Path(snakemake.input.models).parents[2])
families = family_keys(pd.read_parquet(snakemake.input.models), board.matrix.model_ids)
pairs, calibration_pairs, calibration = [], [], []
with threadpool_limits(1):
    rows = heldout(
        board, w.method, p.method_params, int(w.budget), p.seed, p.folds, p.heldout_folds, p.level, log,
        pairs_out=pairs, families=families, calibration_pairs_out=calibration_pairs, calibration_out=calibration,
    )  # fmt: skip
pairs = pd.DataFrame(pairs, columns=PAIR_COLUMNS)
write_parquet_atomic(pairs, snakemake.output.pairs)
write_parquet_atomic(pd.concat(calibration_pairs, ignore_index=True), snakemake.output.calibration_pairs)
write_parquet_atomic(pd.concat(calibration, ignore_index=True), snakemake.output.calibration)
write_parquet_atomic(rows.drop(columns=list(TIMING_COLUMNS)), snakemake.output.rows)
write_parquet_atomic(rows[["model_id", *TIMING_COLUMNS]], snakemake.output.timing)
log(f"held out: {summarise(rows)}")
log(f"held-out pairs: {summarise_pairs(pairs)}")
