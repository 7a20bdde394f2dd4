import pandas as pd

from benchcast.data.io import write_csv_atomic, write_parquet_atomic
from benchcast.output.plots import risk_coverage_plot
from benchcast.studies.benchpress import analysis as bp
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
out = snakemake.output
M, _, _, folds = bp.load_study_inputs(snakemake.input, p.max_folds)
# each fold's risk model is fitted single-threaded with its own seed: results do not depend on n_jobs
res = bp.reliability_study(M, folds, n_jobs=snakemake.threads, **p.reliability)
write_parquet_atomic(res["features"], out.features)
write_csv_atomic(res["risk_coverage"], out.risk_coverage, index=False, float_format="%.4f")
write_csv_atomic(res["conformal"], out.conformal, index=False, float_format="%.4f")
write_csv_atomic(res["trust"], out.trust, index=False, float_format="%.4f")
write_csv_atomic(res["architectures"], out.architectures, index=False)
write_csv_atomic(
    bp.reliability_paper_vs_ours(res["risk_coverage"], res["conformal"], pd.read_csv(snakemake.input.paper)),
    out.paper_vs_ours,
    index=False,
    float_format="%.4f",
)
risk_coverage_plot(res["risk_coverage"], out.figure10)
res["reliability_model"].to_json(out.model)
for r in res["conformal"].to_dict("records"):
    log(f"{r['estimator']}: conformal coverage {r['coverage']:.4f}, median width {r['median_width']:.2f}")
