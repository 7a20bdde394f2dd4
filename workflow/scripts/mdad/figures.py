import pandas as pd

from benchcast.studies.mdad import figures
from benchcast.workflow_support import job_logger

log = job_logger(snakemake)
p, out = snakemake.params, snakemake.output
mdad = pd.read_csv(snakemake.input.mdad)
agreement = pd.read_csv(snakemake.input.agreement)
estimation = pd.read_csv(snakemake.input.estimation)
figures.agreement_curves(agreement, mdad, list(p.figures["curve_sizes"]), out.figure3)
figures.metric_rows(estimation, mdad, out.figure4)
figures.seen_unseen(mdad, out.figure6)
figures.source_models(mdad, int(p.figures["source_models_k"]), out.figure13)
sensitivity = pd.read_csv(snakemake.input.sensitivity)
figures.sensitivity(sensitivity, "threshold", out.figure7)
figures.sensitivity(sensitivity, "resolution", out.figure8)
log(f"figures for {sorted(mdad.dataset.unique())}")
