from pathlib import Path

import pandas as pd

from benchcast.data.item_level import load_response_matrix
from benchcast.trials.runner import merge_prefits, read_prefit, run_prefit, write_prefit
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
w = snakemake.wildcards
p = snakemake.params
parts = list(getattr(snakemake.input, "parts", []))
if parts:  # mtm_prefit of a prefit made in parts by mtm_prefit_part
    log(f"merging {len(parts)} parts")
    result = merge_prefits([read_prefit(folder, p.kind) for folder in parts])
else:  # the whole prefit, or one part of it
    matrix = load_response_matrix(Path(snakemake.input.models).parent, w.dataset)
    part = tuple(p.part) if hasattr(p, "part") else None
    splits = pd.read_parquet(snakemake.input.splits)
    result = run_prefit(matrix, splits, p.kind, p.settings, p.budgets, p.seed, log=log, part=part)
write_prefit(result, snakemake.output[0])
log("done")
