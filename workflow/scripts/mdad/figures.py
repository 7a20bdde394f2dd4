import pandas as pd

from benchcast.studies.mdad import figures
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p, out = snakemake.params, snakemake.output
tables = {name: pd.read_csv(snakemake.input[name]) for name in ("mdad", "agreement", "estimation", "sensitivity")}
# the paper's figures show its selectors; the cross-paper figure shows every method
mdad, agreement, estimation, sensitivity = (t[t.method.isin(p.selectors)] for t in tables.values())
figure1 = p.figures["figure1"]
figures.overview(estimation, agreement, mdad, figure1["dataset"], list(figure1["sizes"]), out.figure1)
figures.agreement_curves(agreement, mdad, list(p.figures["curve_sizes"]), out.figure3)
figures.metric_rows(estimation, mdad, out.figure4)
figures.seen_unseen(mdad, out.figure6)
figures.source_models(mdad, int(p.figures["source_models_k"]), out.figure13)
figures.source_model_grid(estimation, mdad, out.figure16)
figures.sensitivity(sensitivity, "threshold", out.figure7)
figures.sensitivity(sensitivity, "resolution", out.figure8)
figures.cross_paper(
    pd.read_csv(snakemake.input.cross_paper), pd.read_csv(snakemake.input.cross_paper_summary), out.cross_paper
)
log(f"figures for {sorted(mdad.dataset.unique())}")
