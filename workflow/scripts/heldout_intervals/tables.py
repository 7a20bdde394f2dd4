import json
from pathlib import Path

import pandas as pd

from benchcast.output.tables import write_table
from benchcast.studies.heldout_intervals.auto import auto_table
from benchcast.studies.heldout_intervals.heldout import tables
from benchcast.studies.heldout_intervals.pairs import paired_table
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p, out = snakemake.params, snakemake.output
rows = [pd.read_parquet(f) for f in snakemake.input.heldout]
cli = [json.loads(Path(f).read_text()) for f in snakemake.input.cli]
heldout, speed = tables(p.cells, rows, [pd.read_parquet(f) for f in snakemake.input.timing], cli)
write_table(heldout, csv=out.heldout)
write_table(speed, csv=out.speed)
first_fit = {(d, m, int(n)): c["fit_seconds"] + c["calibration_seconds"] for (d, m, n), c in zip(p.cells, cli)}
calibrations = [pd.read_parquet(f) for f in snakemake.input.calibration]
auto = auto_table(p.cells, rows, first_fit, seed=p.seed, calibrations=calibrations)
write_table(auto.drop(columns="first_fit_seconds_added"), csv=out.auto)  # measured seconds: a file of their own
write_table(auto[["dataset", "budget", "candidates", "first_fit_seconds_added"]], csv=out.auto_speed)
write_table(paired_table(p.cells, [pd.read_parquet(f) for f in snakemake.input.pairs]), csv=out.paired)
log(f"{len(p.cells)} cells; coverage {heldout.coverage.min():.3f}-{heldout.coverage.max():.3f} at level {p.level}")
