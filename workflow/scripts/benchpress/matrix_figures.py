import pandas as pd

from benchcast.data.io import write_csv_atomic
from benchcast.output.plots import matrix_composition_plot, observation_pattern_plot
from benchcast.studies.benchpress import analysis as bp
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
out = snakemake.output
M, models, benchmarks = bp.load_matrix(snakemake.input.scores, snakemake.input.models, snakemake.input.benchmarks)
comp = bp.matrix_composition(M, models, benchmarks, pd.read_parquet(snakemake.input.scores))
for name in ("summary", "by_category", "by_quarter", "provenance"):
    write_csv_atomic(comp[name], getattr(out, name), index=False, float_format="%.4f")
observation_pattern_plot(M, out.figure2)
matrix_composition_plot(comp, out.figure3)
log(comp["summary"].to_string(index=False))
