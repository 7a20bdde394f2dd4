import pandas as pd

from benchcast.output.tables import write_table
from benchcast.studies.cf_tasks import analysis, figures
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p, out = snakemake.params, snakemake.output
metrics = analysis.collect(p.cells, [pd.read_parquet(f) for f in snakemake.input.metrics])
table = analysis.figure5(metrics)
write_table(table, csv=out.figure5)
write_table(analysis.figure8(table, p.bases), csv=out.figure8)
timing = analysis.table3(metrics)
write_table(timing, csv=out.table3)
write_table(analysis.table5(table, timing), csv=out.table5)
write_table(analysis.table4(metrics), csv=out.table4)
acts = analysis.oversampling(
    p.ot_cells,
    [pd.read_parquet(f) for f in snakemake.input.with_ot],
    [pd.read_parquet(f) for f in snakemake.input.without_ot],
)
write_table(acts, csv=out.oversampling)
write_table(analysis.claims(table, p.claims, acts).assign(run=p.run), csv=out.paper_vs_ours)
figures.figure5(table, out.figure5_png)
figures.figure8(analysis.figure8(table, p.bases), out.figure8_png)
log(f"{len(p.cells)} runs")
