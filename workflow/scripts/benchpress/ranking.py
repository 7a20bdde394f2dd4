from benchcast.data.io import write_csv_atomic
from benchcast.studies.benchpress import analysis as bp
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
M, _, _, folds = bp.load_study_inputs(snakemake.input, p.max_folds)
summary = bp.section5_ranking(M, folds, margins=tuple(p.margins))
write_csv_atomic(summary, snakemake.output[0], index=False, float_format="%.6f")
for r in summary.itertuples():
    log(f"margin {r.margin:g}: accuracy {100 * r.accuracy:.2f}% over {r.n_pairs} pairs")
