from benchcast.data.aggregate import load_score_matrix as load_matrix
from benchcast.data.io import write_csv_atomic, write_parquet_atomic
from benchcast.studies.benchpress.complete import complete_reliability
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
M, _, _ = load_matrix(snakemake.input.scores, snakemake.input.models, snakemake.input.benchmarks)
cells, model, by_k = complete_reliability(
    M, snakemake.params.complete, snakemake.params.reliability, n_jobs=snakemake.threads, log=log
)
write_parquet_atomic(cells, snakemake.output.cells)
write_csv_atomic(by_k, snakemake.output.by_k, index=False, float_format="%.4f")
model.to_json(snakemake.output.model)
for r in by_k.itertuples():
    log(f"k = {r.k}: {r.cells} calibration cells of {r.models} models, conformal scale {r.conformal_scale:.3f}")
