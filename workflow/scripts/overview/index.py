from pathlib import Path

import pandas as pd

from benchcast.workflow.paper_index import render_index
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
comparisons = {s: pd.read_csv(p.entries[s]["paper_vs_ours"]) for s in p.studies}
text = render_index(p.studies, p.entries, comparisons, snakemake.output.index)
tmp = Path(snakemake.output.index).with_suffix(".md.tmp")
tmp.write_text(text)
tmp.replace(snakemake.output.index)
log(f"index of {len(p.studies)} studies")
