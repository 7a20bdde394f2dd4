import pandas as pd

from benchcast.data.io import write_csv_atomic, write_text_atomic
from benchcast.output.comparison import WIDENING
from benchcast.output.plots import annotated_heatmap
from benchcast.output.tables import write_table
from benchcast.studies.misses_the_mark import analysis as mtm
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
cells = pd.read_parquet(snakemake.input.cells)
paper = pd.read_csv(snakemake.input.paper)

k = 0
for split in p.splits:
    for n in p.budgets:
        gaps = mtm.heatmap_table(cells, split, n, "gap")
        labels = mtm.formatted_heatmap(cells, split, n, p.titles)
        annotated_heatmap(
            gaps,
            labels,
            snakemake.output.heatmaps_png[k],
            f"Estimation gap (%), {split} split, n = {n}: gap ± s.e. (% change vs Random-Sampling)",
            "estimation gap (%)",
        )
        write_table(
            labels,
            snakemake.output.heatmaps_csv[k],
            snakemake.output.heatmaps_md[k],
            index=True,
            title=f"Estimation gap (%), {split}, n = {n}",
        )
        k += 1

tau = cells[["split", "n", "dataset", "method", "tau", "tau_se", "trials"]]
write_csv_atomic(tau, snakemake.output.kendall_tau, index=False, float_format="%.4f")
write_text_atomic(
    snakemake.output.kendall_tau_md,
    "# Kendall's tau between estimated and true accuracies of the target models (mean over trials)\n\n"
    + mtm.kendall_tau_markdown(cells, p.splits, p.budgets, p.titles),
)

t1 = mtm.table1(cells, paper)
write_table(t1, snakemake.output.table1, snakemake.output.table1_md, title="Table 1: EG and EGR averaged over datasets")

timings = [dict(c, path=path) for c, path in zip(p.timing_cells, snakemake.input.timing)]
t2 = mtm.table2(timings, p.table2_dataset)
write_table(
    t2,
    snakemake.output.table2,
    snakemake.output.table2_md,
    digits=3,
    title=f"Table 2: seconds per trial on {p.titles.get(p.table2_dataset, p.table2_dataset)} (paper: ImageNet)",
)

pvo = mtm.judge(mtm.paper_vs_ours(cells, paper, p.compare_as), p.tolerance).assign(run=p.run)
write_csv_atomic(pvo, snakemake.output.paper_vs_ours, index=False, float_format="%.4f")
both = pvo.dropna(subset=["ours", "paper"]).copy()
widened = (
    f"; this run is {p.run}; fewer trials than the paper's: {WIDENING}" if (pvo.tolerance_factor > 1).any() else ""
)
write_table(
    both,
    None,
    snakemake.output.paper_vs_ours_md,
    title=f"Paper vs ours (estimation gap %, cells with both; tolerance max({p.tolerance['abs']}, "
    f"rel_tolerance x paper) x tolerance_factor{widened})",
)
summary = (
    both.groupby(["split", "n", "method"])
    .agg(
        cells=("within_tolerance", "size"),
        within=("within_tolerance", "sum"),
        rel_tolerance=("rel_tolerance", "first"),
        tolerance_factor=("tolerance_factor", "max"),
        mean_abs_diff=("ours", lambda s: float((s - both.loc[s.index, "paper"]).abs().mean())),
    )
    .reset_index()
)
summary["within"] = summary["within"].astype(int)  # verdicts are True/False (blank where not compared)
summary["share_within"] = summary["within"] / summary["cells"]
write_csv_atomic(summary, snakemake.output.summary, index=False, float_format="%.4f")
for r in summary.itertuples():
    log(f"{r.split} n={r.n} {r.method}: {r.within}/{r.cells} within tolerance, mean |diff| {r.mean_abs_diff:.2f}")
