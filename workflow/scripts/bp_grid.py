from benchcast.completion.evaluation import load_folds, validate_folds
from benchcast.data.io import write_parquet_atomic
from benchcast.studies import benchpress as bp
from benchcast.workflow_support import job_logger

log = job_logger(snakemake)
p = snakemake.params
M, _, benchmarks = bp.load_matrix(snakemake.input.scores, snakemake.input.models, snakemake.input.benchmarks)
folds = load_folds(snakemake.input.folds, M.shape)
validate_folds(folds, ~(M != M), snakemake.input.folds)
if p.max_folds:
    folds = folds[: p.max_folds]
w = snakemake.wildcards
cells = bp.run_grid_cell(M, folds, w.transform, w.bpmethod, p.grid, bp.percentage_flags(M, benchmarks, p.percentage_rule))
write_parquet_atomic(cells, snakemake.output[0])
log(f"{w.transform} x {w.bpmethod}: {len(p.grid)} settings x {len(folds)} folds, {len(cells)} held-out predictions")
