from benchcast.data.io import write_csv_atomic, write_parquet_atomic
from benchcast.output.plots import temporal_plot
from benchcast.studies.benchpress import analysis as bp
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
out = snakemake.output
M, models, _ = bp.load_matrix(snakemake.input.scores, snakemake.input.models, snakemake.input.benchmarks)
per_seed, per_target, per_k = bp.section5_temporal(
    M, models, tuple(p.ks), p.n_seeds, p.partial, p.window, p.min_observed
)
write_parquet_atomic(per_seed, out.per_seed)
write_csv_atomic(per_target, out.table16, index=False, float_format="%.4f")
write_csv_atomic(per_k, out.figure7, index=False, float_format="%.4f")
temporal_plot(per_target, out.figure7_png)
for r in per_k.itertuples():
    log(f"k={r.k}: median over {r.n_targets} targets MedAE {r.medae:.2f}, MedAPE {r.medape:.2f}")
