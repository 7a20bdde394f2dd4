import pandas as pd

from benchcast.data.io import write_csv_atomic
from benchcast.studies.benchpress import analysis as bp
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
inp = snakemake.input
pvo = bp.section5_paper_vs_ours(
    pd.read_csv(inp.table5), pd.read_csv(inp.table6), pd.read_csv(inp.figure7), pd.read_csv(inp.paper)
)
write_csv_atomic(pvo, snakemake.output[0], index=False, float_format="%.4f")
for r in pvo.to_dict("records"):
    log(f"{r['row']} {r['column']}: ours {r['ours']} paper {r['paper']}")
