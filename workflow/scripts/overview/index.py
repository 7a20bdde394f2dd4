import pandas as pd

from benchcast.data.io import write_text_atomic
from benchcast.workflow.paper_index import render_index
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
comparisons = {s: pd.read_csv(p.entries[s]["paper_vs_ours"]) for s in p.studies}
text = render_index(p.studies, p.entries, comparisons, snakemake.output.index)
write_text_atomic(snakemake.output.index, text)
log(f"index of {len(p.studies)} studies")
