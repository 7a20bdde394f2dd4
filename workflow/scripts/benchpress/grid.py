from benchcast.data.io import write_parquet_atomic
from benchcast.studies.benchpress import analysis as bp
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
M, _, benchmarks, folds = bp.load_study_inputs(snakemake.input, p.max_folds)
w = snakemake.wildcards
cells = bp.run_grid_cell(
    M, folds, w.transform, w.bpmethod, p.grid, bp.percentage_flags(M, benchmarks, p.percentage_rule)
)
write_parquet_atomic(cells, snakemake.output[0])
log(f"{w.transform} x {w.bpmethod}: {len(p.grid)} settings x {len(folds)} folds, {len(cells)} held-out predictions")
