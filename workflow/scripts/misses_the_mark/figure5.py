from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.data.io import write_csv_atomic
from benchcast.data.item_level import load_response_matrix
from benchcast.output.plots import binned_bars
from benchcast.studies.misses_the_mark.analysis import per_target, similarity_bins
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
d = snakemake.params.dataset
matrix = load_response_matrix(Path(snakemake.input.data[0]).parent, d)
splits = pd.read_parquet(snakemake.input.splits)
aipw_label, rs_label = snakemake.params.labels
pts = {
    aipw_label: per_target(snakemake.input.aipw, splits, matrix),
    rs_label: per_target(snakemake.input.rs, splits, matrix),
}
sims = pd.concat([p["similarity"] for p in pts.values()])
edges = np.quantile(sims, np.linspace(0, 1, snakemake.params.bins + 1))  # equal-count bins
edges = np.unique(edges)
series = {k: similarity_bins(v, edges) for k, v in pts.items()}
out = pd.concat([v.assign(method=k) for k, v in series.items()], ignore_index=True)
write_csv_atomic(out, snakemake.output.csv, index=False, float_format="%.4f")
for k, v in pts.items():
    log(f"{k}: mean normalized gap {v['normalized_gap'].mean():.4f}")
binned_bars(series, snakemake.output.png, f"{snakemake.params.title}: normalized gap by similarity")
