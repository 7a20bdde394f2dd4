from pathlib import Path

import pandas as pd

from benchcast.data.io import write_csv_atomic
from benchcast.data.item_level import load_response_matrix, write_parquet_atomic
from benchcast.output.plots import annotated_heatmap
from benchcast.studies.misses_the_mark.analysis import METHOD_LABELS, heatmap_table, per_target, similarity_correlation
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
matrices, sim_caches, frames, rows = {}, {}, [], []
for cell, run in zip(snakemake.params.cells, snakemake.input.runs):
    d, s = cell["dataset"], cell["split"]
    if d not in matrices:
        matrices[d] = load_response_matrix(Path(snakemake.input.data[0]).parent.parent / d, d)
    splits = pd.read_parquet(Path(snakemake.input.splits[0]).parent.parent / d / f"{s}.parquet")
    pt = per_target(run, splits, matrices[d], sim_caches.setdefault(d, {}))
    frames.append(pt.assign(**{k: cell[k] for k in ("dataset", "split", "method", "n")}))
    rows.append(dict(cell, gap=similarity_correlation(pt)))  # 'gap' column reused by heatmap_table
    log(f"{d} {s} {cell['method']} n={cell['n']}: r={rows[-1]['gap']:.3f}")
write_parquet_atomic(pd.concat(frames, ignore_index=True), snakemake.output.per_target)
corr = pd.DataFrame(rows).rename(columns={"gap": "pearson_r"})
write_csv_atomic(corr, snakemake.output.table, index=False, float_format="%.4f")
# Figure 4 shows n = 50 in the interpolation split when available (the paper's setting).
first = corr.sort_values(["split", "n"]).iloc[0]
split = "interpolation" if (corr.split == "interpolation").any() else first.split
n = 50 if (corr.n == 50).any() else int(first.n)
tab = heatmap_table(corr.rename(columns={"pearson_r": "gap"}), split, n).drop(index="average")
labels = tab.map(lambda v: "" if pd.isna(v) else f"{v:.2f}")
labels.index = [snakemake.params.titles.get(i, i) for i in labels.index]
labels.columns = [METHOD_LABELS.get(c, c) for c in labels.columns]
annotated_heatmap(
    tab,
    labels,
    snakemake.output.png,
    f"Pearson r(similarity, normalized gap), {split}, n={n}",
    "Pearson correlation",
    cmap="coolwarm",
    center=0.0,
)
