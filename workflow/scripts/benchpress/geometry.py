import pandas as pd

from benchcast.data.io import write_csv_atomic
from benchcast.output.plots import rank_sweep_plot
from benchcast.studies.benchpress import analysis as bp
from benchcast.studies.benchpress import geometry as geo
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
out = snakemake.output
M, _, benchmarks, folds = bp.load_study_inputs(snakemake.input, p.max_folds)
sweep = geo.rank_sweep(M, folds, ranks=p.ranks)
write_csv_atomic(sweep, out.sweep, index=False, float_format="%.4f")
rank_sweep_plot(sweep, out.figure4)
svd = geo.submatrix_svd_table(M, p.submatrix_benchmark_counts, benchmark_ids=list(benchmarks["benchmark_id"]))
write_csv_atomic(svd.assign(benchmarks=svd["benchmarks"].map(";".join)), out.table2, index=False, float_format="%.4f")
thresholds = geo.threshold_sweep(M, base_thresholds=(15, 8))
write_csv_atomic(thresholds, out.table1, index=False, float_format="%.4f")
geo_pvo = bp.geometry_paper_vs_ours(sweep, svd, thresholds, pd.read_csv(snakemake.input.paper))
write_csv_atomic(geo_pvo, out.paper_vs_ours, index=False, float_format="%.4f")
for r in geo_pvo.dropna(subset=["ours"]).to_dict("records"):
    log(f"{r['table']} {r['row']} {r['column']}: ours {r['ours']} paper {r['paper']}")
