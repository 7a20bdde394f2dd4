import pandas as pd

from benchcast.data.io import write_csv_atomic
from benchcast.output.plots import grid_heatmaps
from benchcast.output.tables import write_table
from benchcast.studies.benchpress import analysis as bp
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
out = snakemake.output
summary = pd.read_parquet(snakemake.input.summary)
paper = pd.read_csv(snakemake.input.paper)

t11 = bp.table11(summary)
write_table(t11, out.table11, out.table11_md, title="Table 11: best setting per transform x method (median over folds)")
t3 = bp.table3(t11)
write_table(t3, out.table3, out.table3_md, title="Table 3: top-15 configurations by MedAPE and by MedAE")
pvo = bp.paper_vs_ours(t11, paper)
write_csv_atomic(pvo, out.paper_vs_ours, index=False, float_format="%.4f")
acc = bp.grid_acceptance(t11, paper, p.default, p.tolerance["medape"], p.tolerance["medae"])
write_csv_atomic(acc, out.acceptance, index=False, float_format="%.4f")
grid_heatmaps(t11, bp.TRANSFORM_ORDER, bp.METHOD_ORDER, out.figure11)
for r in acc.to_dict("records"):
    log(f"{r['check']}: ours {r['ours']} paper {r['paper']} pass {r['pass']}")
