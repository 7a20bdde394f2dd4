import json
from pathlib import Path

import pandas as pd

from benchcast.output.tables import write_table
from benchcast.studies.heldout_intervals.heldout import tables
from benchcast.studies.heldout_intervals.pairs import paired_table
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p, out = snakemake.params, snakemake.output
heldout, speed = tables(
    p.cells,
    [pd.read_parquet(f) for f in snakemake.input.heldout],
    [pd.read_parquet(f) for f in snakemake.input.timing],
    [json.loads(Path(f).read_text()) for f in snakemake.input.cli],
)
write_table(heldout, csv=out.heldout)
write_table(speed, csv=out.speed)
write_table(paired_table(p.cells, [pd.read_parquet(f) for f in snakemake.input.pairs]), csv=out.paired)
log(f"{len(p.cells)} cells; coverage {heldout.coverage.min():.3f}-{heldout.coverage.max():.3f} at level {p.level}")
